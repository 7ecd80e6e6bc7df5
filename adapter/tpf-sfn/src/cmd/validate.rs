//! `tpf-sfn validate`: any ASL file, coded diagnostics.

use crate::stdio::outln;
use std::path::{Path, PathBuf};

use serde_json::json;
use tpf_sfn_compiler::sfn::validate::{validate_bytes, Profile, ValidateOptions};

use crate::cli::{Format, ValidateArgs};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use crate::input::read;

pub fn run(args: &ValidateArgs) -> CmdResult {
    let files = expand(&args.paths)?;
    if files.is_empty() {
        // A CI step pointed at the wrong directory must not pass for having checked nothing.
        return Err(Error::new(
            "VALIDATE_NOTHING",
            format!(
                "no *.asl.json file under {}",
                args.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_hint("point validate at ASL files, or at directories holding *.asl.json files")
        .into());
    }
    let opts = ValidateOptions {
        event_limit: args.event_limit,
        map_item_bounds: args.map_item_bound.iter().cloned().collect(),
        profile: if args.driver_profile {
            Profile::TpfDriver
        } else {
            Profile::Auto
        },
    };
    let mut any_error = false;
    let mut results = Vec::new();
    for f in &files {
        let bytes = read(f)?;
        not_a_tpf_file(f, &bytes)?;
        let report = validate_bytes(&f.display().to_string(), &bytes, &opts);
        let errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
        any_error |= errors > 0;
        match args.format {
            Format::Text => {
                for d in &report.diagnostics {
                    outln!("{d}");
                }
                let bound = report
                    .history
                    .max_events
                    .map(|m| format!(", at most {m} history events"))
                    .unwrap_or_default();
                outln!(
                    "{}: {}{}",
                    f.display(),
                    if errors == 0 {
                        "valid".to_string()
                    } else {
                        format!("{errors} error(s)")
                    },
                    bound
                );
            }
            Format::Json => results.push(json!({
                "file": f.display().to_string(),
                "valid": errors == 0,
                "maxHistoryEvents": report.history.max_events,
                "diagnostics": report.diagnostics,
            })),
        }
    }
    if args.format == Format::Json {
        outln!("{}", json!({ "files": results }));
    }
    if any_error {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

/// Files as given, and `*.asl.json` files found under directories, sorted.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::new("IO_READ", format!("cannot list {}", dir.display())).with_source(e)
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.to_string_lossy().ends_with(".asl.json") {
            out.push(p);
        }
    }
    Ok(())
}

/// A TPF file given to `validate` by mistake (`validate pipeline-contract.json`): said as what
/// it is, with the command that takes it, instead of "missing field StartAt".
fn not_a_tpf_file(file: &Path, bytes: &[u8]) -> Result<(), Error> {
    let Ok(serde_json::Value::Object(obj)) = serde_json::from_slice::<serde_json::Value>(bytes)
    else {
        return Ok(());
    };
    if obj.contains_key("StartAt") || !obj.contains_key("pipelineId") {
        return Ok(());
    }
    let f = file.display();
    let (what, hint) = if obj.contains_key("steps") {
        (
            "a TPF pipeline contract",
            format!(
                "validate checks Step Functions definitions: compile the contract first \
                 (`tpf-sfn compile {f} --out out`, then `tpf-sfn validate out`), or prove it \
                 with `tpf-sfn mapping-test {f}`"
            ),
        )
    } else {
        (
            "a TPF release descriptor",
            format!(
                "validate checks Step Functions definitions: pass this file to `compile` or \
                 `mapping-test` with `--release {f}`, next to its contract"
            ),
        )
    };
    Err(Error::new(
        "VALIDATE_NOT_ASL",
        format!("{f} is {what}, not a Step Functions definition"),
    )
    .with_hint(hint))
}
