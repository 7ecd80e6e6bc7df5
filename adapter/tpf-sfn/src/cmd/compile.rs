//! `tpf-sfn compile`.

use crate::stdio::{errln, outln};
use serde_json::json;
use tpf_sfn_compiler::compile::compile;
use tpf_sfn_compiler::Diagnostic;

use super::inputs::InputFiles;
use crate::backend;
use crate::cli::{CompileArgs, Format};
use crate::exit::{CmdResult, Failure};
use crate::{output, report};

pub fn run(args: &CompileArgs) -> CmdResult {
    let files = InputFiles::read(&args.contract, args.release.as_ref(), args.config.as_ref())?;
    let input = files.input(args.binding, args.allow_unverified_hash);
    let refuse = |diags: &[Diagnostic]| {
        report::diagnostics(args.format, diags);
        Err(Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new())))
    };
    let mut out = match compile(&input, args.backend) {
        Ok(out) => out,
        Err(diags) => return refuse(&diags.0),
    };
    for kind in &args.emit {
        if let Err(diags) = out.emit((*kind).into()) {
            return refuse(&diags.0);
        }
    }
    if args.check {
        return check(args, out.files(), out.warnings());
    }
    output::write_all(&args.out, out.files())?;
    match args.format {
        Format::Text => {
            for w in out.warnings() {
                errln!("{w}");
            }
            for line in backend::compile_summary(&out) {
                outln!("{line}");
            }
            if args.config.is_none() {
                if let Some((file, _)) = &files.config {
                    outln!("  config    {file} (found in the working directory)");
                }
            }
            outln!(
                "  wrote     {} files to {}",
                out.files().len(),
                args.out.display()
            );
        }
        Format::Json => outln!(
            "{}",
            json!({"manifest": out.manifest_json(), "out": args.out.display().to_string(), "files": out.files().iter().map(|(n, _)| n).collect::<Vec<_>>(), "warnings": out.warnings()})
        ),
    }
    Ok(())
}

fn check(args: &CompileArgs, files: &[(String, String)], warnings: &[Diagnostic]) -> CmdResult {
    let drift = output::check(&args.out, files);
    match args.format {
        Format::Text => {
            for w in warnings {
                errln!("{w}");
            }
            for d in &drift {
                if d.missing {
                    outln!("drift: {} is missing from {}", d.file, args.out.display());
                } else if d.stale {
                    outln!(
                        "drift: {} is left from an earlier compile; this compile does not produce it",
                        d.file
                    );
                } else {
                    outln!(
                        "drift: {} differs from the compiled output\n{}",
                        d.file,
                        d.diff
                    );
                }
            }
            if drift.is_empty() {
                outln!(
                    "up to date: {} files in {} match the compiled output",
                    files.len(),
                    args.out.display()
                );
            }
        }
        Format::Json => outln!(
            "{}",
            json!({
                "upToDate": drift.is_empty(),
                "drift": drift.iter().map(|d| json!({"file": d.file, "missing": d.missing, "stale": d.stale, "diff": d.diff})).collect::<Vec<_>>(),
                "warnings": warnings,
            })
        ),
    }
    if drift.is_empty() {
        Ok(())
    } else {
        Err(Failure::Findings)
    }
}
