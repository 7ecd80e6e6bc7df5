//! Golden tests of the command line (insta-cmd): every command's `--help`, found by walking
//! clap's own definition so a new command cannot go unpinned, and the main outputs of the
//! commands, offline and (read-only) against moto. Snapshots live in `snapshots/cli/<set>/`;
//! a snapshot no test produces any more fails its set.
//!
//! Commands run in a scratch directory with relative paths, so no snapshot names a path of
//! the machine that wrote it; the emulator's endpoint reaches the AWS commands through the
//! environment a launcher gives them, not through their arguments. Offline commands get it too and
//! never use it.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use clap::CommandFactory;
use insta_cmd::assert_cmd_snapshot;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts")
}

/// The binary in `dir`, run through [`launcher`]: the command as the snapshots record it is
/// `tpf-sfn` and its arguments only.
fn tpf_sfn(dir: &Path) -> Command {
    let mut c = Command::new(launcher());
    c.current_dir(dir);
    c
}

/// A script named `tpf-sfn` that runs the built binary with static credentials and region,
/// never instance metadata, the user's profiles or a token, and moto's endpoint. The
/// environment is the launcher's rather than the command's, because what a command is given
/// explicitly is recorded in every snapshot (moto's port with it); and not this process's,
/// which every other test of the binary shares.
fn launcher() -> &'static Path {
    static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cli-golden-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let endpoint = support::moto_endpoint();
        let mut script = String::from("#!/bin/sh\n");
        for (key, value) in [
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_EC2_METADATA_DISABLED", "true"),
            ("AWS_CONFIG_FILE", "/dev/null"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/dev/null"),
            ("AWS_ENDPOINT_URL", &endpoint),
        ] {
            assert!(!value.contains('\''), "{key} holds a quote: {value}");
            script.push_str(&format!("export {key}='{value}'\n"));
        }
        let binary = env!("CARGO_BIN_EXE_tpf-sfn");
        assert!(
            !binary.contains('\''),
            "the binary's path holds a quote: {binary}"
        );
        script.push_str(&format!(
            "unset AWS_PROFILE TPF_SFN_TOKEN\nexec '{binary}' \"$@\"\n"
        ));
        let path = dir.join("tpf-sfn");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        // A process another test forked while the script was open for writing holds it open
        // until its own exec, and running the script meanwhile fails with "text file busy".
        for attempt in 0.. {
            match Command::new(&path).arg("--version").output() {
                Ok(out) => {
                    assert!(out.status.success(), "{path:?} --version: {out:?}");
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 100 => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("run {path:?}: {e}"),
            }
        }
        path
    })
}

/// A scratch directory holding the restaurant sample under short names.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (from, to) in [
        (
            "restaurant-approval.pipeline-contract.json",
            "contract.json",
        ),
        ("restaurant-approval.pipeline-release.json", "release.json"),
    ] {
        std::fs::copy(examples().join(from), dir.path().join(to)).unwrap();
    }
    dir
}

/// Binds `snapshots/cli/<set>/` for `body`, then fails on snapshots there that `names` lacks.
fn snapshot_set(set: &str, body: impl FnOnce(&mut Vec<String>)) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/cli")
        .join(set);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(&dir);
    settings.set_prepend_module_to_snapshot(false);
    let mut names = Vec::new();
    settings.bind(|| body(&mut names));
    let expected: BTreeSet<String> = names.iter().map(|n| format!("{n}.snap")).collect();
    let stale: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|f| f.ends_with(".snap") && !expected.contains(f))
                .collect()
        })
        .unwrap_or_default();
    assert!(stale.is_empty(), "stale snapshots in {set}: {stale:?}");
}

/// Every command path clap knows, the root first: `[]`, `["compile"]`, `["tables", "create"]`.
fn command_paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    for sub in cmd.get_subcommands() {
        let mut path = prefix.clone();
        path.push(sub.get_name().to_owned());
        command_paths(sub, path, out);
    }
}

#[test]
fn help_of_every_command() {
    let dir = scratch();
    let mut paths = Vec::new();
    command_paths(&tpf_sfn::cli::Cli::command(), Vec::new(), &mut paths);
    assert!(paths.len() > 15, "{paths:?}");
    snapshot_set("help", |names| {
        for path in paths {
            let name = std::iter::once("tpf-sfn".to_owned())
                .chain(path.iter().cloned())
                .collect::<Vec<_>>()
                .join("-");
            assert_cmd_snapshot!(name.as_str(), tpf_sfn(dir.path()).args(&path).arg("--help"));
            names.push(name);
        }
        assert_cmd_snapshot!("version", tpf_sfn(dir.path()).arg("--version"));
        names.push("version".into());
    });
}

#[test]
fn offline_outputs() {
    let dir = scratch();
    let d = dir.path();
    let run = |names: &mut Vec<String>, name: &str, args: &[&str]| {
        assert_cmd_snapshot!(name, tpf_sfn(d).args(args));
        names.push(name.to_owned());
    };
    snapshot_set("offline", |names| {
        let compile = ["compile", "contract.json", "--release", "release.json"];
        run(
            names,
            "compile",
            &[&compile[..], &["--out", "out"]].concat(),
        );
        run(
            names,
            "compile-json",
            &[&compile[..], &["--out", "out-json", "--format", "json"]].concat(),
        );
        run(
            names,
            "compile-check",
            &[&compile[..], &["--out", "out", "--check"]].concat(),
        );
        let driver = d.join("out/driver.asl.json");
        let committed = std::fs::read_to_string(&driver).unwrap();
        let edited = committed.replacen("\"IntervalSeconds\": 5", "\"IntervalSeconds\": 3", 1);
        assert_ne!(
            edited, committed,
            "the edit must change the committed driver"
        );
        std::fs::write(&driver, edited).unwrap();
        run(
            names,
            "compile-check-drift",
            &[&compile[..], &["--out", "out", "--check"]].concat(),
        );
        run(names, "compile-bad-contract", &["compile", "release.json"]);
        run(names, "compile-missing-file", &["compile", "nope.json"]);
        run(names, "validate", &["validate", "out-json"]);
        run(
            names,
            "validate-json",
            &["validate", "out-json", "--format", "json"],
        );
        run(names, "validate-edited", &["validate", "out"]);
        run(names, "graph", &["graph", "contract.json"]);
        run(names, "init", &["init", "tpf-sfn.toml"]);
        run(names, "init-exists", &["init", "tpf-sfn.toml"]);
        // From here on ./tpf-sfn.toml is init's file: the gateway binding, TPF's protocol; the
        // `-v1-retired` runs name an Action API v1 binding, and are refused.
        run(names, "simulate", &["simulate"]);
        run(
            names,
            "simulate-v1-retired",
            &["simulate", "--binding", "http"],
        );
        run(names, "simulate-list", &["simulate", "--list"]);
        run(
            names,
            "simulate-unknown",
            &["simulate", "--scenario", "no-such-scenario"],
        );
        run(
            names,
            "mapping-test",
            &["mapping-test", "contract.json", "--release", "release.json"],
        );
        run(
            names,
            "mapping-test-v1-retired",
            &[
                "mapping-test",
                "contract.json",
                "--release",
                "release.json",
                "--binding",
                "http",
            ],
        );
        run(
            names,
            "mapping-test-lambda-durable",
            &[
                "mapping-test",
                "contract.json",
                "--release",
                "release.json",
                "--backend",
                "lambda-durable",
            ],
        );
        run(
            names,
            "simulate-lambda-durable",
            &["simulate", "--backend", "lambda-durable"],
        );
        run(
            names,
            "tables-bad-override",
            &["tables", "create", "--table", "nonsense=x"],
        );
        run(
            names,
            "serve-without-token",
            &["serve", "--pipeline-contract", "contract.json"],
        );
    });
}

/// Read-only commands against moto, on names no other test uses.
#[test]
fn aws_outputs() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("tpf-sfn.toml"), "name-prefix = \"golden\"\n").unwrap();
    let compiled = tpf_sfn(d)
        .args(["compile", "contract.json", "--release", "release.json"])
        .args(["--config", "tpf-sfn.toml", "--out", "out"])
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{compiled:?}");
    let run = |names: &mut Vec<String>, name: &str, args: &[&str]| {
        assert_cmd_snapshot!(name, tpf_sfn(d).args(args));
        names.push(name.to_owned());
    };
    snapshot_set("aws", |names| {
        run(
            names,
            "deploy-dry-run",
            &["deploy", "--out", "out", "--dry-run"],
        );
        run(
            names,
            "releases-none",
            &["releases", "--name-prefix", "golden-"],
        );
        run(
            names,
            "prune-without-registry",
            &["prune", "--name-prefix", "golden-", "--prefix", "golden_"],
        );
        run(
            names,
            "status-without-tables",
            &[
                "status",
                "--out",
                "out",
                "--tenant",
                "t1",
                "--execution",
                "e1",
                "--prefix",
                "golden_",
            ],
        );
    });
}
