//! Every command with its output going nowhere: stdout on a full device, stderr on a full
//! device, and a reader that went away. Each ends with its coded exit and never with a panic
//! (exit 101, "panicked").

use crate::support;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts")
}

fn example(name: &str) -> String {
    examples().join(name).display().to_string()
}

fn full() -> Stdio {
    Stdio::from(
        File::options()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full"),
    )
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The commands that print, each as a user runs it, with what it writes on stdout.
fn printing_commands(dir: &Path) -> Vec<Vec<String>> {
    let contract = example("restaurant-approval.pipeline-contract.json");
    let release = example("restaurant-approval.pipeline-release.json");
    let out = dir.join("out").display().to_string();
    let compiled = support::cli()
        .args(["compile", &contract, "--release", &release, "--out", &out])
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", text(&compiled));
    let driver = dir.join("out/driver.asl.json").display().to_string();
    let init = dir.join("init.tpf-sfn.toml").display().to_string();
    let owned = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let compile = owned(&["compile", &contract, "--release", &release, "--out", &out]);
    vec![
        owned(&["simulate"]),
        owned(&["simulate", "--list"]),
        owned(&["simulate", "--format", "json"]),
        owned(&["graph", &contract]),
        owned(&["mapping-test", &contract, "--release", &release]),
        owned(&["validate", &driver]),
        owned(&["validate", &driver, "--format", "json"]),
        [compile.clone(), owned(&["--format", "json"])].concat(),
        compile.clone(),
        [compile.clone(), owned(&["--check"])].concat(),
        owned(&["completions", "bash"]),
        owned(&["init", &init, "--force"]),
        owned(&["--help"]),
        owned(&["--version"]),
        owned(&["simulate", "--help"]),
    ]
}

/// Commands that fail, so that they write their error on stderr.
fn failing_commands(dir: &Path) -> Vec<Vec<String>> {
    let missing = dir.join("missing.json").display().to_string();
    let nowhere = dir.join("nowhere").display().to_string();
    let owned = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        owned(&["simulate", "--scenario", "no-such-scenario"]),
        owned(&["graph", &missing]),
        owned(&["mapping-test", &missing]),
        owned(&["validate", &missing]),
        owned(&["compile", &missing, "--format", "json"]),
        owned(&["compile", &missing]),
        owned(&["deploy", "--out", &nowhere, "--dry-run"]),
        owned(&[
            "status",
            "--out",
            &nowhere,
            "--tenant",
            "t",
            "--execution",
            "e",
        ]),
        owned(&["init", &dir.display().to_string()]),
        owned(&["completions", "no-such-shell"]),
        owned(&["simulate", "--no-such-flag"]),
        owned(&[]),
    ]
}

fn assert_no_panic(args: &[String], o: &Output) {
    assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {}", text(o));
    assert!(!text(o).contains("panicked"), "{args:?}: {}", text(o));
}

#[test]
fn stdout_on_a_full_device_is_a_coded_error_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    for args in printing_commands(dir.path()) {
        let o = support::cli().args(&args).stdout(full()).output().unwrap();
        assert_no_panic(&args, &o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("error[STDOUT_WRITE]: cannot write to stdout: No space left on device")
                && stderr.contains("= hint:"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn stderr_on_a_full_device_ends_with_the_commands_own_exit() {
    let dir = tempfile::tempdir().unwrap();
    for args in failing_commands(dir.path()) {
        let o = support::cli().args(&args).stderr(full()).output().unwrap();
        assert_no_panic(&args, &o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
    // A command that succeeds but has a warning to say: the lost warning is a coded exit.
    let contract = example("restaurant-approval.pipeline-contract.json");
    let out = dir.path().join("warned").display().to_string();
    let args = ["compile", &contract, "--out", &out].map(String::from);
    let o = support::cli().args(&args).stderr(full()).output().unwrap();
    assert_no_panic(&args, &o);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // Nothing is written to stderr by a command that succeeds quietly: it still succeeds.
    let args = ["completions", "bash"].map(String::from);
    let o = support::cli().args(&args).stderr(full()).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Runs `args` with stdout or stderr a pipe whose reader is gone before the command starts, so
/// that every write it makes finds no reader.
fn closed(args: &[String], stdout: bool) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut command = support::cli();
    command.args(args);
    if stdout {
        command.stdout(writer);
    } else {
        command.stderr(writer);
    }
    let o = command.output().unwrap();
    assert_no_panic(args, &o);
    o
}

#[test]
fn a_closed_stdout_or_stderr_ends_quietly_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    for args in printing_commands(dir.path()) {
        let o = closed(&args, true);
        // Not a word about the closed pipe (a compile's warnings still go to stderr).
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("error["), "{args:?}: {stderr}");
        assert_eq!(o.status.code(), Some(141), "{args:?}: {stderr}");
    }
    for args in failing_commands(dir.path()) {
        let o = closed(&args, false);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

#[test]
fn nothing_prints_around_the_one_writer() {
    // `println!` and friends panic on a failed write; the source uses the stdio macros only.
    // This crate's source and the wake path's, which the binary links.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![root.join("src"), root.join("../tpf-sfn-wakepath/src")];
    let mut offenders = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("stdio.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or("");
                    if [
                        "println!",
                        "print!(",
                        "eprintln!",
                        "eprint!(",
                        "dbg!",
                        "io::stdout()",
                        "io::stderr()",
                    ]
                    .iter()
                    .any(|m| code.contains(m))
                    {
                        offenders.push(format!("{}:{}: {line}", p.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
