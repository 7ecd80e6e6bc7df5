//! The CLI as a user runs it: exit codes, files written, drift detection, coded errors.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts")
}

fn tpf_sfn(args: &[&str]) -> Output {
    support::cli().args(args).output().expect("run tpf-sfn")
}

/// `tpf-sfn mapping-test CONTRACT --release RELEASE --driver DRIVER EXTRA...`.
fn mapping_test_driver(contract: &str, release: &str, driver: &str, extra: &[&str]) -> Output {
    let args = [
        "mapping-test",
        contract,
        "--release",
        release,
        "--driver",
        driver,
    ];
    support::cli()
        .args(args)
        .args(extra)
        .output()
        .expect("run tpf-sfn")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn restaurant() -> (String, String) {
    let e = examples();
    (
        e.join("restaurant-approval.pipeline-contract.json")
            .display()
            .to_string(),
        e.join("restaurant-approval.pipeline-release.json")
            .display()
            .to_string(),
    )
}

#[test]
fn compile_writes_all_outputs_then_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let out_s = out.display().to_string();
    let (contract, release) = restaurant();
    let o = tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for f in [
        "driver.asl.json",
        "driver.iam-policy.json",
        "driver.mmd",
        "manifest.json",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    // The gateway driver sweeps TPF itself: no sweeper machine.
    assert!(!out.join("sweeper.asl.json").exists());
    let driver: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("driver.asl.json")).unwrap())
            .unwrap();
    assert!(driver["States"]["Park until TPF's await completes"].is_object());
    let comment = driver["Comment"].as_str().unwrap();
    assert!(
        comment.starts_with("tpf-sfn wakeup driver for TPF pipeline"),
        "{comment}"
    );

    let o = tpf_sfn(&[
        "compile",
        &contract,
        "--release",
        &release,
        "--out",
        &out_s,
        "--check",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("up to date"));
}

#[test]
fn compile_reads_both_release_forms_and_says_which_today_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let e = examples();
    let current = |name: &str| e.join(name).display().to_string();
    let out = dir.path().join("today").display().to_string();
    let o = tpf_sfn(&[
        "compile",
        &current("restaurant-approval-current.pipeline-contract.json"),
        "--release",
        &current("restaurant-approval-current.pipeline-release.json"),
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("RELEASE_"), "{}", text(&o));
    let manifest = std::fs::read_to_string(dir.path().join("today/manifest.json")).unwrap();
    assert!(manifest.contains("2026.12.1"), "{manifest}");

    let (contract, release) = restaurant();
    let out = dir.path().join("august").display().to_string();
    let o = tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("RELEASE_AUGUST_FORM"), "{}", text(&o));

    // Today's contract with August's release: a coded refusal naming the mismatch.
    let o = tpf_sfn(&[
        "compile",
        &current("restaurant-approval-current.pipeline-contract.json"),
        "--release",
        &release,
        "--out",
        &dir.path().join("mixed").display().to_string(),
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("RELEASE_MISMATCH"), "{}", text(&o));
}

#[test]
fn compile_for_lambda_durable_writes_the_spec_and_refuses_what_it_cannot_spell() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("durable");
    let out_s = out.display().to_string();
    let (contract, release) = restaurant();
    let args = [
        "compile",
        &contract,
        "--release",
        &release,
        "--backend",
        "lambda-durable",
        "--out",
        &out_s,
    ];
    let o = tpf_sfn(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("driver.durable.json")).unwrap()).unwrap();
    assert_eq!(spec["format"], 1);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["backend"], "lambda-durable");
    assert!(!out.join("driver.asl.json").exists());
    // Unchanged inputs: --check finds no drift.
    let o = tpf_sfn(&[&args[..], &["--check"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // The gateway's queue transport has no durable form; Action API v1's bindings are retired;
    // the embedded default's placeholder endpoint is exported in neither flavour. Each is
    // coded, exit 2, and nothing is written.
    let queue = dir.path().join("queue.toml");
    std::fs::write(&queue, "[binding.gateway]\ntransport = \"queue\"\n").unwrap();
    let queue = queue.display().to_string();
    for (extra, code) in [
        (&["--config", &queue][..], "DURABLE_BINDING_UNSUPPORTED"),
        (&["--binding", "queue"][..], "ACTION_API_V1_RETIRED"),
        (&["--binding", "http"][..], "ACTION_API_V1_RETIRED"),
        (&["--emit", "cloudformation"][..], "EXPORT_PLACEHOLDER"),
        (&["--emit", "terraform"][..], "EXPORT_PLACEHOLDER"),
    ] {
        let fresh = dir.path().join(extra.concat().replace('/', "_"));
        let fresh_s = fresh.display().to_string();
        let o = tpf_sfn(
            &[
                &[
                    "compile",
                    &contract,
                    "--backend",
                    "lambda-durable",
                    "--out",
                    &fresh_s,
                ][..],
                extra,
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(code), "{}", text(&o));
        assert!(!fresh.exists(), "{code}: something was written");
    }
}

#[test]
fn check_reports_drift_with_a_diff_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let out_s = dir.path().display().to_string();
    let (contract, release) = restaurant();
    assert_eq!(
        tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out_s])
            .status
            .code(),
        Some(0)
    );
    let path = dir.path().join("driver.asl.json");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"TimeoutSeconds\": 1801", "\"TimeoutSeconds\": 5");
    std::fs::write(&path, edited).unwrap();
    std::fs::remove_file(dir.path().join("driver.mmd")).unwrap();

    let o = tpf_sfn(&[
        "compile",
        &contract,
        "--release",
        &release,
        "--out",
        &out_s,
        "--check",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("drift: driver.asl.json differs"), "{t}");
    assert!(
        t.contains("-      \"TimeoutSeconds\": 5,")
            && t.contains("+      \"TimeoutSeconds\": 1801,"),
        "{t}"
    );
    assert!(t.contains("driver.mmd is missing"), "{t}");
    // --check never writes.
    assert!(!dir.path().join("driver.mmd").exists());
}

#[test]
fn bad_input_is_a_coded_error_with_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("truncated.json");
    std::fs::write(&bad, "{\"schemaVersion\": 1, \"pipelineId\": \"x\",").unwrap();
    let out = dir.path().join("out");
    let o = tpf_sfn(&[
        "compile",
        &bad.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("error[CONTRACT_JSON_SYNTAX]"),
        "{}",
        text(&o)
    );
    assert!(!out.exists(), "nothing may be written for bad input");

    let o = tpf_sfn(&["compile", "does-not-exist.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("error[IO_READ]"));

    let o = tpf_sfn(&["compile", "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2));

    // Retired with the sweeper machine it scheduled: refused as any unknown flag is.
    let o = tpf_sfn(&[
        "deploy",
        "--dry-run",
        "--schedule-role-arn",
        "arn:aws:iam::1:role/r",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("unexpected argument '--schedule-role-arn'"),
        "{}",
        text(&o)
    );
}

#[test]
fn json_format_is_machine_readable() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    let o = tpf_sfn(&[
        "compile",
        &contract,
        "--release",
        &release,
        "--out",
        &dir.path().display().to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["manifest"]["identity"]["pipelineId"],
        "org.pipelineframework.restaurantapproval"
    );
    assert_eq!(v["manifest"]["contract"]["verified"], true);
}

#[test]
fn validate_accepts_compiled_output_and_flags_broken_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    assert_eq!(
        tpf_sfn(&[
            "compile",
            &contract,
            "--release",
            &release,
            "--out",
            &dir.path().display().to_string()
        ])
        .status
        .code(),
        Some(0)
    );
    let o = tpf_sfn(&[
        "validate",
        &dir.path().display().to_string(),
        "--driver-profile",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("driver.asl.json: valid"), "{}", text(&o));

    let broken = dir.path().join("broken.asl.json");
    std::fs::write(
        &broken,
        r#"{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}"#,
    )
    .unwrap();
    let o = tpf_sfn(&[
        "validate",
        &broken.display().to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"][0]["valid"], false);
}

#[test]
fn graph_draws_contracts_and_asl() {
    let (contract, _) = restaurant();
    let o = tpf_sfn(&["graph", &contract]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.starts_with("flowchart TD"));
    assert!(t.contains("Park until TPF's await completes"), "{t}");
}

#[test]
fn init_writes_an_annotated_config_and_refuses_to_clobber() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpf-sfn.toml");
    let p = path.display().to_string();
    assert_eq!(tpf_sfn(&["init", &p]).status.code(), Some(0));
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("event-budget"), "{written}");
    let o = tpf_sfn(&["init", &p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("INIT_EXISTS"));
    assert_eq!(tpf_sfn(&["init", &p, "--force"]).status.code(), Some(0));
    // The written file compiles.
    let (contract, _) = restaurant();
    let o = tpf_sfn(&[
        "compile",
        &contract,
        "--config",
        &p,
        "--out",
        &dir.path().join("o").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn completions_are_generated() {
    let o = tpf_sfn(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("tpf-sfn"));
}

/// The main job: `simulate` without arguments (and without a config file) runs the bundled
/// sample on TPF's gateway protocol, the compiled gateway driver in the gateway world; an
/// Action API v1 binding is refused as retired.
#[test]
fn simulate_runs_the_bundled_restaurant_sample() {
    let o = tpf_sfn(&["simulate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.starts_with("scenario tpf-11-completion-after-binding:"),
        "{t}"
    );
    assert!(t.contains("binding gateway (lambda)"), "{t}");
    for call in ["Submit", "RegisterCallback", "Result"] {
        assert!(t.contains(&format!("gateway {call}: answered")), "{t}");
    }
    assert!(t.contains("  ok    tpf-11-completion-after-binding"), "{t}");
    let o = tpf_sfn(&["simulate", "--list"]);
    assert!(text(&o).contains("tpf-22-await-deadline"), "{}", text(&o));
    assert!(!text(&o).contains("happy-path"), "{}", text(&o));

    let o = tpf_sfn(&["simulate", "--binding", "http"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("error[ACTION_API_V1_RETIRED]"),
        "{}",
        text(&o)
    );

    let o = tpf_sfn(&["simulate", "--scenario", "no-such-scenario"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("UNKNOWN_SCENARIO"));
}

/// Action API v1 is retired from the proof: naming one of its bindings, by flag or in the
/// config file, on either backend, is a coded error that says what it named and that TPF's
/// gateway is the protocol; nothing runs. The v1 proof's flags are gone.
#[test]
fn mapping_test_and_simulate_refuse_action_api_v1_bindings() {
    let (contract, release) = restaurant();
    for binding in ["http", "lambda", "queue"] {
        for backend in ["step-functions", "lambda-durable"] {
            for command in ["mapping-test", "simulate"] {
                let o = tpf_sfn(&[
                    command,
                    &contract,
                    "--release",
                    &release,
                    "--binding",
                    binding,
                    "--backend",
                    backend,
                ]);
                assert_eq!(o.status.code(), Some(2), "{}", text(&o));
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    err.contains("error[ACTION_API_V1_RETIRED]")
                        && err.contains(&format!("--binding {binding} is Action API v1's"))
                        && err.contains("TPF serves its action gateway only")
                        && err.contains("[binding.gateway]"),
                    "{command} {binding} {backend}: {err}"
                );
                assert!(o.stdout.is_empty(), "{}", text(&o));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tpf-sfn.toml");
    // By the file's kind, or by a v1 binding's table: the same code, where it stands.
    for (toml, said) in [
        ("[binding]\nkind = \"http\"\n", "binding.kind = \"http\""),
        (
            "[binding.http]\napi-base-url = \"https://tpf.example.com\"\n",
            "the table [binding.http]",
        ),
    ] {
        std::fs::write(&config, toml).unwrap();
        let o = with_config(
            "mapping-test",
            &contract,
            &release,
            &config.display().to_string(),
            &[],
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let t = text(&o);
        assert!(
            t.contains("error[ACTION_API_V1_RETIRED]") && t.contains(said),
            "{t}"
        );
    }
    for flag in ["--snapshots", "--scenarios", "--spec"] {
        let o = tpf_sfn(&["mapping-test", &contract, flag, "x"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("USAGE_UNKNOWN_ARGUMENT"),
            "{flag}: {}",
            text(&o)
        );
    }
}

/// A driver compiled for another gateway (another config) brought to the gateway world is
/// refused at once by name, not run in a world that never answers it.
#[test]
fn mapping_test_refuses_a_driver_of_another_gateway_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    let out = dir.path().join("out").display().to_string();
    let config = gateway_config(dir.path(), "");
    assert_eq!(
        tpf_sfn(&[
            "compile",
            &contract,
            "--release",
            &release,
            "--config",
            &config,
            "--out",
            &out
        ])
        .status
        .code(),
        Some(0)
    );
    let path = dir.path().join("out/driver.asl.json");
    // Proved against the embedded default's gateway, which the driver does not name.
    let o = mapping_test_driver(&contract, &release, &path.display().to_string(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("GATEWAY_DRIVER_MISMATCH"), "{}", text(&o));
}

/// A driver whose poll branch skips its Wait sweeps TPF again at once, for ever: `validate`
/// rejects it.
#[test]
fn validate_rejects_a_runaway_driver() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    let out = dir.path().display().to_string();
    assert_eq!(
        tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out])
            .status
            .code(),
        Some(0)
    );
    let mut runaway: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("driver.asl.json")).unwrap())
            .unwrap();
    for poll in ["Poll again: next wait", "Poll again: longest wait"] {
        assert_eq!(runaway["States"][poll]["Next"], "Wait before polling");
        runaway["States"][poll]["Next"] = serde_json::json!("Sweep TPF");
    }
    let path = dir.path().join("runaway.asl.json");
    std::fs::write(&path, serde_json::to_string_pretty(&runaway).unwrap()).unwrap();
    let file = path.display().to_string();
    let o = tpf_sfn(&["validate", &file, "--driver-profile"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("ASL_LOOP_UNPACED"), "{}", text(&o));
}

/// `validate` proves the tool's own output with no extra flags, and takes the Map bound a foreign
/// definition needs as `--map-item-bound STATE=N`.
#[test]
fn validate_proves_compiled_output_and_takes_map_bounds_for_foreign_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    let out = dir.path().display().to_string();
    let o = tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = tpf_sfn(&["validate", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("ASL_HISTORY_UNPROVEN"), "{}", text(&o));
    assert!(
        text(&o).contains("driver.asl.json: valid, at most"),
        "{}",
        text(&o)
    );

    // Someone else's machine with a Map over its input: its items are unbounded until told.
    let foreign = dir.path().join("foreign.asl.json");
    std::fs::write(
        &foreign,
        serde_json::json!({
            "Comment": "a machine someone else wrote",
            "StartAt": "Ensure a driver for each due execution",
            "States": {"Ensure a driver for each due execution": {
                "Type": "Map", "ItemsPath": "$.items", "End": true,
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "Each", "States": {"Each": {"Type": "Pass", "End": true}}
                }
            }}
        })
        .to_string(),
    )
    .unwrap();
    let foreign = foreign.display().to_string();
    let o = tpf_sfn(&["validate", &foreign]);
    assert!(text(&o).contains("ASL_HISTORY_UNPROVEN"), "{}", text(&o));
    assert!(text(&o).contains("--map-item-bound"), "{}", text(&o));
    let o = tpf_sfn(&[
        "validate",
        &foreign,
        "--map-item-bound",
        "Ensure a driver for each due execution=100",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("ASL_HISTORY_UNPROVEN"), "{}", text(&o));
    assert!(text(&o).contains("valid, at most"), "{}", text(&o));
    let o = tpf_sfn(&["validate", &foreign, "--map-item-bound", "no-number"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `compile --out` is all-or-nothing: when one file cannot be renamed into place (its path
/// became a directory), the earlier output is left whole and no temporary is left anywhere.
#[test]
fn a_compile_whose_rename_fails_keeps_the_old_output_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let out_s = out.display().to_string();
    let (contract, release) = restaurant();
    let o = tpf_sfn(&["compile", &contract, "--out", &out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let before: Vec<(String, Vec<u8>)> = ["driver.asl.json", "driver.iam-policy.json"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(out.join(f)).unwrap()))
        .collect();
    // The manifest is written last; its path is now a directory, so only its rename fails.
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    std::fs::create_dir_all(out.join("manifest.json/keep")).unwrap();
    // With a release the identity (and so every definition) differs from the first output.
    let o = tpf_sfn(&["compile", &contract, "--release", &release, "--out", &out_s]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("error[IO_WRITE]"), "{}", text(&o));
    for (f, bytes) in &before {
        assert_eq!(&std::fs::read(out.join(f)).unwrap(), bytes, "{f} changed");
    }
    assert!(out.join("manifest.json/keep").is_dir());
    let mut leftovers = Vec::new();
    for d in [dir.path(), out.as_path()] {
        for e in std::fs::read_dir(d).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.contains("tpf-sfn-tmp") {
                leftovers.push(name);
            }
        }
    }
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn validate_with_nothing_to_validate_is_a_coded_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.json"), "{}").unwrap();
    let d = dir.path().display().to_string();
    let o = tpf_sfn(&["validate", &d]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("error[VALIDATE_NOTHING]"), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    // Asked for JSON, the error is JSON on stdout.
    let o = tpf_sfn(&["validate", &d, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["error"]["code"], "VALIDATE_NOTHING", "{v}");
    assert!(v["error"]["hint"].is_string(), "{v}");
    assert!(o.stderr.is_empty(), "{}", text(&o));
}

/// `--format json` errors are JSON too: a usage error before the command ran (the arguments
/// say JSON even when they do not parse), a command's error, and an input diagnostic.
#[test]
fn json_errors_are_json_including_usage_errors() {
    let (contract, _) = restaurant();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json").display().to_string();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let bad = bad.display().to_string();
    for (args, code) in [
        (
            vec!["simulate", "--format", "json", "--bogus"],
            "USAGE_UNKNOWN_ARGUMENT",
        ),
        (
            vec!["compile", &contract, "--format=json", "--binding", "smoke"],
            "USAGE_INVALID_VALUE",
        ),
        (vec!["status", "--format", "json"], "USAGE_MISSING_ARGUMENT"),
        (vec!["compile", &missing, "--format", "json"], "IO_READ"),
    ] {
        let o = tpf_sfn(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", text(&o)));
        let e = &v["error"];
        assert_eq!(e["code"], code, "{args:?}: {v}");
        assert!(e["message"].is_string(), "{args:?}: {v}");
        assert!(e["hint"].is_string() || code == "IO_READ", "{args:?}: {v}");
        assert!(
            e["location"].is_string() || code == "USAGE_MISSING_ARGUMENT",
            "{args:?}: {v}"
        );
        assert!(o.stderr.is_empty(), "{args:?}: {}", text(&o));
    }
    let o = tpf_sfn(&["simulate", "--format", "json", "--bogus"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["location"], "--bogus", "{v}");
    // An input diagnostic keeps its shape: `diagnostics`, with its location.
    let o = tpf_sfn(&["compile", &bad, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["diagnostics"][0]["code"], "CONTRACT_JSON_SYNTAX", "{v}");
    // In text, a usage error is coded like any other, with a hint.
    let o = tpf_sfn(&["simulate", "--bogus"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(
            "error[USAGE_UNKNOWN_ARGUMENT]: unexpected argument '--bogus' found\n  = hint: "
        ) && err.contains("see `tpf-sfn simulate --help`"),
        "{err}"
    );
}

/// Every command reads its inputs through one reader: a FIFO is refused at once (never
/// blocks), a device is never read, and the same holds for every command that takes a file.
#[cfg(unix)]
#[test]
fn inputs_that_are_not_regular_files_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("contract.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.display().to_string();
    let (contract, _) = restaurant();
    let commands: Vec<Vec<&str>> = vec![
        vec!["compile", &fifo, "--out", "unused"],
        vec![
            "compile",
            &contract,
            "--config",
            "/dev/zero",
            "--out",
            "unused",
        ],
        vec!["compile", &contract, "--release", &fifo, "--out", "unused"],
        vec!["validate", &fifo],
        vec!["graph", "/dev/zero"],
        vec!["simulate", &fifo],
        vec!["mapping-test", &fifo],
        vec!["serve", "--pipeline-contract", &fifo, "--token", "t"],
    ];
    for args in commands {
        let o = tpf_sfn(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("error[INPUT_NOT_FILE]"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

/// `mapping-test --backend lambda-durable` runs the gateway world's catalogue on the durable
/// gateway driver; a Step Functions definition is no durable driver.
#[test]
fn mapping_test_proves_the_lambda_durable_backend() {
    let (contract, release) = restaurant();
    let o = tpf_sfn(&[
        "mapping-test",
        &contract,
        "--release",
        &release,
        "--backend",
        "lambda-durable",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "lambda-durable");
    assert_eq!(v["binding"], "gateway");
    assert_eq!(v["passed"], true);
    assert_eq!(v["tpfConformance"].as_array().unwrap().len(), 22);
    // The checks every scenario was held to, each with what it proves.
    let checks: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "release-pinned",
        "single-live-generation",
        "history-within-budget",
        "retries-queued-when-due",
        "redrive-by-operator-only",
        "delivery-evidence",
    ] {
        assert!(checks.contains(&name), "{checks:?}");
    }
    assert!(v["checks"][0]["invariant"]
        .as_str()
        .is_some_and(|i| !i.is_empty()));

    let o = tpf_sfn(&[
        "mapping-test",
        &contract,
        "--backend",
        "lambda-durable",
        "--driver",
        "d.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("USAGE"), "{}", text(&o));
}

#[test]
fn simulate_runs_the_bundled_sample_on_the_lambda_durable_backend() {
    let o = tpf_sfn(&[
        "simulate",
        "--backend",
        "lambda-durable",
        "--scenario",
        "tpf-22-await-deadline",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("gateway RegisterCallback: answered"), "{t}");
    assert!(t.contains("  ok    tpf-22-await-deadline"), "{t}");
}

/// The placeholder refusal's hint is true: after `init` (which selects the gateway binding)
/// and filling in the keys the refusal names in ./tpf-sfn.toml, the same `compile --emit` from
/// the same directory, still without `--config`, reads that file and exports; the summary says
/// which file it read.
#[test]
fn following_the_placeholder_hint_exports() {
    let dir = tempfile::tempdir().unwrap();
    let (contract, release) = restaurant();
    let run = |args: &[&str]| {
        support::cli()
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("run tpf-sfn")
    };
    let compile = [
        "compile",
        &contract,
        "--release",
        &release,
        "--out",
        "out",
        "--emit",
        "cloudformation",
    ];
    // Without a file, the embedded default: the gateway binding, its placeholder ARNs refused,
    // each named by its key with the way to set it.
    let o = run(&compile);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error[EXPORT_PLACEHOLDER]")
            && err.contains("set `binding.gateway.function-arn` in tpf-sfn.toml (`tpf-sfn init` writes one; `compile` reads ./tpf-sfn.toml")
            && err.contains("binding.gateway.starter-function-arn")
            && err.contains("--config"),
        "{err}"
    );
    let o = run(&["init"]);
    assert!(o.status.success(), "{}", text(&o));
    // init writes the same defaults: refused the same way until they are filled in.
    let o = run(&compile);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("set `binding.gateway.function-arn` in tpf-sfn.toml")
            && err.contains("binding.gateway.starter-function-arn")
            && err.contains("--config"),
        "{err}"
    );
    let path = dir.path().join("tpf-sfn.toml");
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action-gateway:1",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway-acme:4",
        )
        .replace(
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-sfn-starter:1",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway-starter",
        );
    std::fs::write(&path, config).unwrap();
    let o = run(&compile);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("config    tpf-sfn.toml (found in the working directory)"),
        "{}",
        text(&o)
    );
    let manifest = std::fs::read_to_string(dir.path().join("out/manifest.json")).unwrap();
    assert!(
        manifest.contains("function:tpf-gateway-acme:4"),
        "{manifest}"
    );
    assert!(dir.path().join("out/cloudformation.json").is_file());
}

/// Files given in the wrong place are named for what they are: a release descriptor as the
/// contract, a contract or a release to `validate`.
#[test]
fn a_file_in_the_wrong_place_is_named_for_what_it_is() {
    let (contract, release) = restaurant();
    let o = tpf_sfn(&["compile", &release, "--out", "/nonexistent/never-written"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error[CONTRACT_IS_RELEASE]: this is a release descriptor")
            && err.contains("pass it with --release")
            && !err.contains("CONTRACT_UNKNOWN_FIELD"),
        "{err}"
    );
    for (file, what) in [
        (&contract, "a TPF pipeline contract"),
        (&release, "a TPF release descriptor"),
    ] {
        let o = tpf_sfn(&["validate", file]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error[VALIDATE_NOT_ASL]:")
                && err.contains(what)
                && !err.contains("StartAt"),
            "{err}"
        );
    }
    let o = tpf_sfn(&["validate", &contract]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`tpf-sfn mapping-test "),
        "{}",
        text(&o)
    );
}

/// A release compiled for the scheduled sweep runs beside its schedule: the trace shows the
/// schedule's sweeps, and the driver's own polls while TPF is queued or running read STATUS
/// alone; the catalogue passes as with the drivers' own sweeping.
#[test]
fn simulate_runs_the_scheduled_sweep_beside_a_release_compiled_for_it() {
    let config = examples().join("../aws/gateway-scheduled-sweep.tpf-sfn.toml");
    let config = config.to_str().unwrap();
    let o = tpf_sfn(&["simulate", "--config", config, "--scenario", "tpf-22"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("schedule Sweep: answered"), "{out}");
    let o = tpf_sfn(&["simulate", "--scenario", "tpf-22"]);
    assert!(!text(&o).contains("schedule Sweep"), "{}", text(&o));
    let contract = examples().join("restaurant-approval-current.pipeline-contract.json");
    let release = examples().join("restaurant-approval-current.pipeline-release.json");
    let o = tpf_sfn(&[
        "mapping-test",
        contract.to_str().unwrap(),
        "--release",
        release.to_str().unwrap(),
        "--config",
        config,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `simulate --scenario` takes an unambiguous start of a name and suggests names for a typo.
#[test]
fn simulate_takes_the_start_of_a_name_and_suggests_names() {
    let o = tpf_sfn(&["simulate", "--scenario", "tpf-22"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).starts_with("scenario tpf-22-await-deadline:"),
        "{}",
        text(&o)
    );
    let o = tpf_sfn(&["simulate", "--scenario", "tpf-22-await-dedline"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error[UNKNOWN_SCENARIO]") && err.contains("tpf-22-await-deadline"),
        "{err}"
    );
}

/// `mapping-test`'s JSON names, for each of TPF's 22 conformance scenarios, the gateway world's
/// scenarios that run and cover it (every one of them runs).
#[test]
fn mapping_test_json_maps_tpfs_conformance_scenarios_to_the_gateway_world() {
    let (contract, release) = restaurant();
    let o = tpf_sfn(&[
        "mapping-test",
        &contract,
        "--release",
        &release,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["tpfConformance"].as_array().unwrap();
    assert_eq!(rows.len(), 22);
    assert_eq!(rows[0]["id"], 1);
    assert_eq!(rows[0]["scenario"], "tpf-01-lost-ingress-response");
    assert_eq!(
        rows[0]["title"],
        "lost ingress response after AWS accepted the start"
    );
    assert_eq!(
        rows[0]["coveredBy"],
        serde_json::json!(["tpf-01-lost-ingress-response"])
    );
    assert_eq!(
        rows[5]["coveredBy"],
        serde_json::json!(["tpf-06-transition-response-before-ack"])
    );
    assert_eq!(rows[5]["gap"], serde_json::Value::Null);
    assert_eq!(
        rows[6]["coveredBy"],
        serde_json::json!(["tpf-07-duplicate-transition-delivery", "transition-timeout"])
    );
    assert_eq!(
        rows[21]["coveredBy"],
        serde_json::json!(["tpf-22-await-deadline", "suspended-timeout"])
    );
}

/// The crates `tpf-sfn` links with `features` (`cargo tree`, offline, normal dependencies).
fn linked_crates(features: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let o = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "-p",
            "tpf-sfn",
        ])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(features)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(o.status.success(), "cargo tree: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The main job (`simulate`, built `--no-default-features`) links none of the AWS SDK; the
/// default build, with the `aws` feature, does (so the check sees the SDK when it is there).
#[test]
fn the_build_without_the_aws_feature_links_no_aws_sdk_crate() {
    let sdk = |crates: &[String]| -> Vec<String> {
        let mut found: Vec<String> = crates
            .iter()
            .filter(|c| c.starts_with("aws-"))
            .cloned()
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    };
    let offline = linked_crates(&["--no-default-features"]);
    assert!(
        offline.iter().any(|c| c == "tpf-sfn-mapping"),
        "{offline:?}"
    );
    assert_eq!(sdk(&offline), Vec::<String>::new());
    let full = sdk(&linked_crates(&[]));
    assert!(full.iter().any(|c| c == "aws-sdk-sfn"), "{full:?}");
}

/// `tpf-sfn COMMAND CONTRACT --release RELEASE --config CONFIG EXTRA...`.
fn with_config(
    command: &str,
    contract: &str,
    release: &str,
    config: &str,
    extra: &[&str],
) -> Output {
    let args = [command, contract, "--release", release, "--config", config];
    support::cli()
        .args(args)
        .args(extra)
        .output()
        .expect("run tpf-sfn")
}

/// TPF's two transition-worker scenarios passed in `mapping-test`'s text report `t`.
fn transition_worker_scenarios_pass(t: &str) {
    for name in [
        "tpf-06-transition-response-before-ack",
        "tpf-07-duplicate-transition-delivery",
    ] {
        assert!(t.contains(&format!("  ok    {name}")), "{t}");
    }
}

/// A gateway binding's configuration in `dir`: the user's own function ARNs, `extra` lines
/// appended to `[binding.gateway]`.
fn gateway_config(dir: &Path, extra: &str) -> String {
    let path = dir.join("tpf-sfn.toml");
    std::fs::write(
        &path,
        format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\n\
             function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:3\"\n\
             transport = \"lambda\"\n\
             starter-function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:my-starter\"\n{extra}"
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn today() -> (String, String) {
    let e = examples();
    let p = |f: &str| e.join(f).display().to_string();
    (
        p("restaurant-approval-current.pipeline-contract.json"),
        p("restaurant-approval-current.pipeline-release.json"),
    )
}

/// `mapping-test` with the gateway binding runs the user's compiled driver in the gateway
/// world: every scenario passes or fails as declared, one line each, and the JSON marks each
/// of TPF's 22 ids from the run.
#[test]
fn mapping_test_runs_the_gateway_world_on_the_users_driver() {
    let dir = tempfile::tempdir().unwrap();
    let config = gateway_config(dir.path(), "");
    let (contract, release) = today();
    let o = with_config("mapping-test", &contract, &release, &config, &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("binding gateway, driver compiled, transport lambda, await deadline 1800 s"),
        "{t}"
    );
    assert!(t.contains("  ok    tpf-22-await-deadline"), "{t}");
    transition_worker_scenarios_pass(&t);
    assert!(
        t.contains("  known tpf-08-submitter-failure-before-binding"),
        "{t}"
    );
    assert!(t.contains("  known lost-answer-and-history-loss"), "{t}");
    assert!(t.contains("0 failed"), "{t}");

    let o = with_config(
        "mapping-test",
        &contract,
        &release,
        &config,
        &["--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], true);
    assert_eq!(v["awaitTimeoutSeconds"], 1800);
    let rows = v["tpfConformance"].as_array().unwrap();
    let ids: Vec<u64> = rows.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (1..=22).collect::<Vec<u64>>());
    let status = |id: usize| rows[id - 1]["status"].as_str().unwrap().to_owned();
    assert_eq!(status(1), "passed");
    assert_eq!(status(22), "passed");
    // TPF's transition worker scenarios run on TPF's transition worker in the world.
    assert_eq!(status(6), "passed");
    assert_eq!(status(7), "passed");
    assert_eq!(status(8), "failed");
    assert_eq!(rows[7]["knownFailure"], true);
    // Every id runs: each passed, or failed as a declared failure.
    assert!(rows
        .iter()
        .all(|r| r["status"] == "passed" || r["knownFailure"] == true));
    let scenarios = v["scenarios"].as_array().unwrap();
    let tpf22 = scenarios
        .iter()
        .find(|s| s["name"] == "tpf-22-await-deadline")
        .unwrap();
    assert_eq!(tpf22["result"]["verdict"], "passed");

    // simulate runs one of them and prints its trace.
    let o = with_config(
        "simulate",
        &contract,
        &release,
        &config,
        &["--scenario", "tpf-22-await-deadline"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("gateway RegisterCallback: answered"), "{t}");
    assert!(t.contains("+00:30:06.000 gateway Sweep"), "{t}");
    // Where the steps run on TPF's transition worker, its requests are in the trace.
    let o = with_config(
        "simulate",
        &contract,
        &release,
        &config,
        &["--scenario", "tpf-07-duplicate-transition-delivery"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for what in [
        ": sent",
        ": failed before the action",
        ": ran",
        ": committed",
    ] {
        assert!(
            t.lines()
                .any(|l| l.contains(" transition request ") && l.ends_with(what)),
            "{what}: {t}"
        );
    }
    let o = with_config(
        "simulate",
        &contract,
        &release,
        &config,
        &["--list", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names = v["scenarios"].as_array().unwrap();
    assert_eq!(names[0]["name"], "tpf-01-lost-ingress-response");
    // Every scenario runs, TPF's transition-worker ones too.
    assert!(names
        .iter()
        .any(|n| n["name"] == "tpf-06-transition-response-before-ack"));
}

/// The scenarios' deadline is the user's contract's: a configured await timeout of ten minutes
/// (the August contract has none of its own) moves the deadline scenarios to it, and they pass.
#[test]
fn the_gateway_worlds_deadline_is_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let config = gateway_config(dir.path(), "await-timeout-seconds = 600\n");
    let (contract, release) = restaurant();
    let o = with_config("mapping-test", &contract, &release, &config, &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("await deadline 600 s"), "{t}");
    assert!(t.contains("  ok    tpf-22-await-deadline"), "{t}");
    assert!(t.contains("  ok    suspended-timeout"), "{t}");

    // The queue transport: the driver sends to the user's queue; the relay invokes the gateway.
    let queue = gateway_config(
        dir.path(),
        "await-timeout-seconds = 600\nqueue-url = \"https://sqs.us-east-1.amazonaws.com/123456789012/gw\"\n",
    );
    std::fs::write(
        &queue,
        std::fs::read_to_string(&queue)
            .unwrap()
            .replace("transport = \"lambda\"", "transport = \"queue\""),
    )
    .unwrap();
    let o = with_config("mapping-test", &contract, &release, &queue, &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("transport queue, await deadline 600 s"), "{t}");
    assert!(t.contains("0 failed"), "{t}");
    let config = gateway_config(dir.path(), "await-timeout-seconds = 600\n");

    // `--binding gateway` picks the gateway binding over the config file's.
    let http = dir.path().join("http.toml");
    std::fs::write(
        &http,
        std::fs::read_to_string(&config)
            .unwrap()
            .replace("kind = \"gateway\"", "kind = \"http\""),
    )
    .unwrap();
    let http = http.display().to_string();
    let o = with_config("mapping-test", &contract, &release, &http, &[]);
    assert!(text(&o).contains("ACTION_API_V1_RETIRED"), "{}", text(&o));
    let o = with_config(
        "mapping-test",
        &contract,
        &release,
        &http,
        &["--binding", "gateway"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("binding gateway"), "{t}");
    assert!(t.contains("await deadline 600 s"), "{t}");
}

/// A hand-edited driver that parks shorter than the contract's deadline fails the deadline
/// scenarios by name, and `mapping-test` exits 1; the durable backend refuses the gateway
/// world with a code.
#[test]
fn a_gateway_driver_parking_short_of_the_deadline_fails_the_deadline_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let config = gateway_config(dir.path(), "");
    let (contract, release) = today();
    let out = dir.path().join("out");
    let o = with_config(
        "compile",
        &contract,
        &release,
        &config,
        &["--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let compiled = std::fs::read_to_string(out.join("driver.asl.json")).unwrap();
    assert!(compiled.contains("\"TimeoutSeconds\": 1801"));
    let mutant = dir.path().join("short-park.asl.json");
    std::fs::write(
        &mutant,
        compiled.replace("\"TimeoutSeconds\": 1801", "\"TimeoutSeconds\": 600"),
    )
    .unwrap();
    let o = mapping_test_driver(
        &contract,
        &release,
        mutant.to_str().unwrap(),
        &["--config", &config],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("  FAIL  tpf-22-await-deadline"), "{t}");
    assert!(t.contains("  FAIL  suspended-timeout"), "{t}");
    // Waking unsignalled before the deadline is polling while parked, wherever it parks.
    assert!(t.contains("  FAIL  tpf-19-missed-stream-record"), "{t}");
    assert!(
        t.contains("  FAIL  tpf-08-submitter-failure-before-binding"),
        "{t}"
    );
    assert!(t.contains("broke parks-without-polling"), "{t}");
    assert!(t.contains("4 failed"), "{t}");

    // A driver the engine cannot run is a coded error, not a scenario's failure.
    let unrunnable = dir.path().join("unrunnable.asl.json");
    let mut v: serde_json::Value = serde_json::from_str(&compiled).unwrap();
    v["StartAt"] = "Nowhere".into();
    std::fs::write(&unrunnable, v.to_string()).unwrap();
    let o = mapping_test_driver(
        &contract,
        &release,
        unrunnable.to_str().unwrap(),
        &["--config", &config],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("GATEWAY_DRIVER_UNRUNNABLE"),
        "{}",
        text(&o)
    );

    // The durable backend proves its own program: a Step Functions definition is refused.
    let o = with_config(
        "mapping-test",
        &contract,
        &release,
        &config,
        &[
            "--backend",
            "lambda-durable",
            "--driver",
            mutant.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("error[USAGE]"), "{}", text(&o));
}

/// `mapping-test --backend lambda-durable` runs the gateway world on the compiled durable
/// gateway driver: every scenario passes but the protocol's finding, and the JSON marks TPF's
/// ids from that run.
#[test]
fn mapping_test_runs_the_gateway_world_on_the_durable_driver() {
    let dir = tempfile::tempdir().unwrap();
    let config = gateway_config(dir.path(), "");
    let (contract, release) = today();
    let o = with_config(
        "mapping-test",
        &contract,
        &release,
        &config,
        &["--backend", "lambda-durable"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("await deadline 1800 s"), "{t}");
    assert!(t.contains("  ok    tpf-22-await-deadline"), "{t}");
    assert!(t.contains("  ok    concurrent-awaits"), "{t}");
    transition_worker_scenarios_pass(&t);
    // The replay engine refuses a send to a closed callback as AWS does, which TPF's wake-up
    // counts as gone.
    assert!(
        t.contains("  ok    tpf-13-callback-accepted-before-response-loss"),
        "{t}"
    );
    assert!(t.contains("  ok    provider-history-loss"), "{t}");
    assert!(t.contains("0 failed"), "{t}");
    let o = with_config(
        "mapping-test",
        &contract,
        &release,
        &config,
        &["--backend", "lambda-durable", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["tpfConformance"].as_array().unwrap();
    assert_eq!(rows.len(), 22);
    // TPF's submitter retries under one callback id: on durable functions 8 and 9 pass.
    assert_eq!(rows[7]["status"], "passed", "{}", rows[7]);
    assert_eq!(rows[21]["status"], "passed", "{}", rows[21]);
    // Every id runs and passes: the replay engine refuses a send to a closed callback as AWS
    // does, which TPF's wake-up counts as gone.
    for row in rows {
        assert_eq!(row["status"], "passed", "{row}");
    }
}
