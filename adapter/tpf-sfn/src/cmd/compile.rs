//! `tpf-sfn compile`.

use serde_json::json;
use tpf_sfn_compiler::compile::compile;
use tpf_sfn_compiler::Diagnostic;

use super::inputs::InputFiles;
use crate::cli::{Backend, CompileArgs, Emit, Format};
use crate::exit::{CmdResult, Failure};
use crate::{output, report};

pub fn run(args: &CompileArgs) -> CmdResult {
    let files = InputFiles::read(&args.contract, args.release.as_ref(), args.config.as_ref())?;
    let input = files.input(args.binding, args.allow_unverified_hash);
    if args.backend == Backend::LambdaDurable {
        return durable(args, &input);
    }
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
    if args.check {
        return check(args, &out.files, &out.warnings);
    }
    output::write_all(&args.out, &out.files)?;
    let warnings: &[Diagnostic] = &out.warnings;
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

fn check(args: &CompileArgs, files: &[(String, String)], warnings: &[Diagnostic]) -> CmdResult {
    let drift = output::check(&args.out, files);
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
                    files.len(),
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
    if drift.is_empty() {
        Ok(())
    } else {
        Err(Failure::Findings)
    }
}

/// `compile --backend lambda-durable`: the release's spec and manifest, and on request its
/// CloudFormation stack (Terraform has no durable-function resource to spell it with here).
fn durable(args: &CompileArgs, input: &tpf_sfn_compiler::compile::Input) -> CmdResult {
    use tpf_sfn_compiler::durable::{self, cloudformation};
    let refuse = |diags: &[Diagnostic]| {
        report::diagnostics(args.format, diags);
        Err(Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new())))
    };
    let mut out = match durable::compile(input) {
        Ok(out) => out,
        Err(diags) => return refuse(&diags.0),
    };
    for kind in &args.emit {
        match kind {
            Emit::Cloudformation => match cloudformation::release(&out) {
                Ok(stack) => out.files.push((
                    cloudformation::FILE.to_string(),
                    cloudformation::render(&stack),
                )),
                Err(diags) => return refuse(&diags.0),
            },
            Emit::Terraform => return refuse(&[durable::terraform_unsupported()]),
        }
    }
    if args.check {
        return check(args, &out.files, &out.warnings);
    }
    output::write_all(&args.out, &out.files)?;
    let m = &out.manifest;
    match args.format {
        Format::Text => {
            for w in &out.warnings {
                eprintln!("{w}");
            }
            println!(
                "compiled {} (release {}) for Lambda durable functions{}",
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
                "  function  {}  (≤{} operations per generation, hands over after {} calls)",
                m.function.name, m.function.operation_budget, m.function.max_iterations
            );
            for a in &m.contract.await_steps {
                println!(
                    "  await     step {} \"{}\" → callback \"{}\"",
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
            json!({"manifest": m, "out": args.out.display().to_string(), "files": out.files.iter().map(|(n, _)| n).collect::<Vec<_>>(), "warnings": out.warnings})
        ),
    }
    Ok(())
}
