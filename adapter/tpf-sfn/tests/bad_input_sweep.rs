//! The bad-input sweep: every command, every argument that takes a value, given each hostile
//! value in turn (empty, huge, negative, NaN, not UTF-8, a FIFO, a symlink loop, a device), the
//! rest of the command line valid. Driven by the clap definition, so a new flag is swept the day
//! it is added. Each run must end (no hang) without a panic (exit 101, a "panicked" message).
//!
//! The AWS commands point at a loopback port nothing listens on, so they end at their first
//! call; the commands that would serve for ever are given inputs that make them stop.

use crate::support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::CommandFactory;
use tpf_sfn::cli::Cli;

/// A run longer than this hangs.
const HANG: Duration = Duration::from_secs(30);

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The hostile values, by name.
fn hostile(dir: &Path) -> Vec<(&'static str, OsString)> {
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let looped = dir.join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let non_utf8 = {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(vec![b'a', 0xff, 0xfe, b'z'])
    };
    vec![
        ("empty", OsString::new()),
        ("huge", OsString::from("9".repeat(400))),
        ("negative", OsString::from("-1")),
        ("nan", OsString::from("NaN")),
        ("non-utf8", non_utf8),
        ("fifo", fifo.into_os_string()),
        ("symlink-loop", looped.into_os_string()),
        ("device", OsString::from("/dev/zero")),
    ]
}

/// Valid arguments for each command, so the hostile value is the only thing wrong: positionals
/// in order, then `--flag value` pairs.
fn base(command: &str, dir: &Path, out: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let contract = examples()
        .join("contracts/restaurant-approval.pipeline-contract.json")
        .display()
        .to_string();
    let asl = dir.join("m.asl.json").display().to_string();
    let fresh = dir.join("fresh").display().to_string();
    let out = out.display().to_string();
    let nowhere = "http://127.0.0.1:9".to_string();
    let aws = |mut flags: Vec<(&'static str, String)>| {
        flags.push(("--endpoint-url", nowhere.clone()));
        flags.push(("--aws-timeout-seconds", "1".into()));
        flags.push(("--region", "us-east-1".into()));
        flags
    };
    let (positionals, flags): (Vec<String>, Vec<(&'static str, String)>) = match command {
        "compile" => (vec![contract], vec![("--out", fresh)]),
        "validate" => (vec![asl], vec![]),
        "graph" => (vec![contract], vec![]),
        "init" => (vec![dir.join("init.toml").display().to_string()], vec![]),
        "mapping-test" | "simulate" => (vec![contract], vec![]),
        "tables create" => (vec![], aws(vec![])),
        "serve" => (
            vec![],
            aws(vec![
                ("--pipeline-contract", contract),
                ("--token", "t".into()),
                ("--listen", "127.0.0.1:0".into()),
                ("--store", "dynamodb".into()),
                ("--activate-tenant", "t".into()),
            ]),
        ),
        "relay" => (
            vec![],
            aws(vec![
                ("--queue-url", format!("{nowhere}/q")),
                ("--action-url", nowhere.clone()),
                ("--token", "t".into()),
                ("--once", String::new()),
            ]),
        ),
        "dev" => (
            vec![],
            aws(vec![
                ("--token", "t".into()),
                ("--listen", "127.0.0.1:0".into()),
                ("--out", fresh),
            ]),
        ),
        "deploy" => (
            vec![],
            aws(vec![("--out", out), ("--dry-run", String::new())]),
        ),
        "status" => (
            vec![],
            aws(vec![
                ("--out", out),
                ("--tenant", "t".into()),
                ("--execution", "e".into()),
            ]),
        ),
        "releases" | "prune" => (vec![], aws(vec![])),
        "completions" => (vec!["bash".into()], vec![]),
        other => panic!("the sweep has no base arguments for `{other}`: add them"),
    };
    (
        positionals,
        flags.into_iter().map(|(f, v)| (f.to_string(), v)).collect(),
    )
}

/// A value-taking argument: its long flag (or id), and its index when it is positional.
type Argument = (String, Option<usize>);

/// Every leaf command path (`tables create`, `serve`, …) with its value-taking arguments.
fn commands() -> Vec<(String, Vec<Argument>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, clap::Command)> = Cli::command()
        .get_subcommands()
        .map(|c| (c.get_name().to_string(), c.clone()))
        .collect();
    while let Some((path, cmd)) = stack.pop() {
        if cmd.get_name() == "help" {
            continue;
        }
        if cmd.has_subcommands() {
            for sub in cmd.get_subcommands() {
                stack.push((format!("{path} {}", sub.get_name()), sub.clone()));
            }
            continue;
        }
        let mut args = Vec::new();
        let mut position = 0;
        for arg in cmd.get_arguments() {
            if !arg.get_action().takes_values() {
                continue;
            }
            if arg.is_positional() {
                args.push((arg.get_id().to_string(), Some(position)));
                position += 1;
            } else if let Some(long) = arg.get_long() {
                args.push((format!("--{long}"), None));
            }
        }
        out.push((path, args));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

struct Run {
    what: String,
    argv: Vec<OsString>,
}

#[test]
fn every_argument_of_every_command_survives_every_hostile_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.asl.json"),
        r#"{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}"#,
    )
    .unwrap();
    let values = hostile(dir.path());
    let out = dir.path().join("release");
    let o = support::cli()
        .args(["compile", "--out"])
        .arg(&out)
        .arg(examples().join("contracts/restaurant-approval.pipeline-contract.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let mut runs = Vec::new();
    for (path, args) in commands() {
        let (positionals, flags) = base(&path, dir.path(), &out);
        for (arg, position) in &args {
            for (name, value) in &values {
                let mut argv: Vec<OsString> = path.split(' ').map(OsString::from).collect();
                let mut given = false;
                for (i, p) in positionals.iter().enumerate() {
                    if *position == Some(i) {
                        argv.push(value.clone());
                        given = true;
                    } else {
                        argv.push(p.into());
                    }
                }
                if let (Some(i), false) = (position, given) {
                    // An optional positional the base leaves out: give it alone.
                    if *i == positionals.len() {
                        argv.push(value.clone());
                    } else {
                        continue;
                    }
                }
                for (flag, v) in &flags {
                    if flag == arg {
                        continue;
                    }
                    argv.push(flag.into());
                    if !v.is_empty() {
                        argv.push(v.into());
                    }
                }
                if position.is_none() {
                    argv.push(arg.into());
                    argv.push(value.clone());
                }
                runs.push(Run {
                    what: format!("{path} {arg}={name}"),
                    argv,
                });
            }
        }
    }
    assert!(
        runs.len() > 500,
        "the sweep lost its commands: {}",
        runs.len()
    );

    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        // Most runs wait on a refused connection or a parse, not on a core.
        for _ in 0..8 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(run) = runs.get(i) else { break };
                if let Some(why) = one(run, dir.path()) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {why}", run.what));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "bad-input sweep: {} runs over {} commands in {:.1} s",
        runs.len(),
        commands().len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs one command line; what went wrong, if anything.
fn one(run: &Run, dir: &Path) -> Option<String> {
    // One attempt per AWS call: the endpoint refuses every connection, and retrying that only
    // slows the sweep.
    let mut child = support::cli()
        .env("AWS_MAX_ATTEMPTS", "1")
        .args(&run.argv)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = reader.join().unwrap_or_default();
    match status {
        None => Some(format!("still running after {} s", HANG.as_secs())),
        Some(s) if s.code() == Some(101) || err.contains("panicked") => Some(format!(
            "panicked: {}",
            err.lines().take(3).collect::<Vec<_>>().join(" | ")
        )),
        Some(s) if s.code().is_none() => Some(format!("killed by a signal: {s}")),
        Some(_) => None,
    }
}
