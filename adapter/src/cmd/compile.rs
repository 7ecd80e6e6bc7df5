//! `tpf-sfn compile`.

use serde_json::json;
use tpf_sfn_compiler::compile::compile;
use tpf_sfn_compiler::Diagnostic;

use super::inputs::InputFiles;
use crate::cli::{CompileArgs, Format};
use crate::exit::{CmdResult, Failure};
use crate::{output, report};

pub fn run(args: &CompileArgs) -> CmdResult {
    let files = InputFiles::read(&args.contract, args.release.as_ref(), args.config.as_ref())?;
    let input = files.input(args.binding, args.allow_unverified_hash);
    let mut out = match compile(&input) {
        Ok(out) => out,
        Err(diags) => {
            report::diagnostics(args.format, &diags.0);
            return Err(Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new())));
        }
    };
    for kind in &args.emit {
        let files = match tpf_sfn_compiler::sfn::export::files(&out, (*kind).into()) {
            Ok(files) => files,
            Err(diags) => {
                report::diagnostics(args.format, &diags.0);
                return Err(Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new())));
            }
        };
        for file in files {
            if !out.files.iter().any(|(n, _)| n == &file.0) {
                out.files.push(file);
            }
        }
    }
    let warnings: &[Diagnostic] = &out.warnings;

    if args.check {
        let drift = output::check(&args.out, &out.files);
        match args.format {
            Format::Text => {
                for w in warnings {
                    eprintln!("{w}");
                }
                for d in &drift {
                    if d.missing {
                        println!("drift: {} is missing from {}", d.file, args.out.display());
                    } else {
                        println!(
                            "drift: {} differs from the compiled output\n{}",
                            d.file, d.diff
                        );
                    }
                }
                if drift.is_empty() {
                    println!(
                        "up to date: {} files in {} match the compiled output",
                        out.files.len(),
                        args.out.display()
                    );
                }
            }
            Format::Json => println!(
                "{}",
                json!({
                    "upToDate": drift.is_empty(),
                    "drift": drift.iter().map(|d| json!({"file": d.file, "missing": d.missing, "diff": d.diff})).collect::<Vec<_>>(),
                    "warnings": warnings,
                })
            ),
        }
        return if drift.is_empty() {
            Ok(())
        } else {
            Err(Failure::Findings)
        };
    }

    output::write_all(&args.out, &out.files)?;
    let m = &out.manifest;
    match args.format {
        Format::Text => {
            for w in warnings {
                eprintln!("{w}");
            }
            println!(
                "compiled {} (release {}){}",
                m.identity.pipeline_id,
                m.identity.release_version,
                if m.contract.verified {
                    ""
                } else {
                    " — contract hash UNVERIFIED"
                }
            );
            println!("  binding   {}", m.binding.kind);
            println!(
                "  driver    {}  ({} states, ≤{} history events, rolls over after {} loop iterations)",
                m.machines.driver.name,
                m.machines.driver.states,
                m.machines.driver.max_history_events.unwrap_or_default(),
                m.machines.driver.max_loop_iterations.unwrap_or_default()
            );
            println!(
                "  sweeper   {}  (schedule {})",
                m.machines.sweeper.name,
                m.machines.sweeper.schedule.as_deref().unwrap_or("-")
            );
            for a in &m.contract.await_steps {
                println!(
                    "  await     step {} \"{}\" → state \"{}\"",
                    a.step_index, a.authored_name, a.state_name
                );
            }
            println!(
                "  wrote     {} files to {}",
                out.files.len(),
                args.out.display()
            );
        }
        Format::Json => println!(
            "{}",
            json!({"manifest": m, "out": args.out.display().to_string(), "files": out.files.iter().map(|(n, _)| n).collect::<Vec<_>>(), "warnings": warnings})
        ),
    }
    Ok(())
}
