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

/// The most directory entries one `validate` looks at: far beyond any repository's ASL files,
/// and a bound on a walk pointed at `/` or a huge tree.
pub const MAX_WALK_ENTRIES: usize = 100_000;

/// Files as given, and `*.asl.json` files found under directories, sorted.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    let mut seen = 0;
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out, &mut seen)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The `*.asl.json` files under `dir`. Symbolic links to directories are not followed (two
/// links to their own parent would make the walk endless), nor are FIFOs, devices or sockets
/// opened (only a name ending `.asl.json` is ever read, and `read` refuses what is not a
/// regular file); past [`MAX_WALK_ENTRIES`] entries the walk stops with `VALIDATE_TOO_MANY`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut usize) -> Result<(), Failure> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            Error::new("IO_READ", format!("cannot list {}", dir.display()))
                .with_source(e)
                .with_hint("check the directory exists and is readable")
        })?;
        for entry in entries.flatten() {
            *seen += 1;
            if *seen > MAX_WALK_ENTRIES {
                return Err(Error::new(
                    "VALIDATE_TOO_MANY",
                    format!(
                        "more than {MAX_WALK_ENTRIES} entries under the directories given; stopped at {}",
                        dir.display()
                    ),
                )
                .with_hint("point validate at the directory that holds the ASL files, not a whole tree")
                .into());
            }
            // The entry's own type: a link is a link, not what it points at.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if (kind.is_file() || kind.is_symlink())
                && path.to_string_lossy().ends_with(".asl.json")
            {
                files.push(path);
            }
        }
    }
    // Path order is depth first in name order, component by component.
    files.sort();
    out.extend(files);
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
