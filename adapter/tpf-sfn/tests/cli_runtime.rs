//! The runtime commands as a user runs them: `tables create` on moto, `serve` on a socket,
//! `bridge --once`, and their coded failures.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tpf_sfn() -> Command {
    support::cli()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn contract() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/contracts/restaurant-approval.pipeline-contract.json")
        .display()
        .to_string()
}

#[test]
fn tables_create_creates_then_reports_existing_tables() {
    let endpoint = support::moto_endpoint();
    let prefix = format!("cli{}_", std::process::id());
    let run = || {
        tpf_sfn()
            .args(["tables", "create", "--prefix", &prefix, "--format", "json"])
            .args(["--endpoint-url", &endpoint, "--region", "us-east-1"])
            .output()
            .expect("run")
    };
    let first = run();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let report: serde_json::Value = serde_json::from_slice(&first.stdout).expect("json");
    let tables = report["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 9);
    assert!(tables.iter().all(|t| t["created"] == true));
    // Action API v1's wakeup table is not made any more.
    assert!(
        !tables
            .iter()
            .any(|t| t["table"] == format!("{prefix}tpf_sfn_wakeup").as_str()),
        "{report}"
    );
    for table in [
        "tpf_execution_payload",
        "tpf_await_admission",
        "tpf_callback_binding",
    ] {
        assert!(
            tables
                .iter()
                .any(|t| t["table"] == format!("{prefix}{table}").as_str()),
            "{table}"
        );
    }
    let second = run();
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let report: serde_json::Value = serde_json::from_slice(&second.stdout).expect("json");
    assert!(report["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .all(|t| t["created"] == false));
}

/// Action API v1's wake path is retired: its relay protocol is refused with a code before any
/// AWS call (the endpoint refuses every connection), and its bridge is no command.
#[test]
fn action_api_v1_relay_and_bridge_are_refused() {
    let o = tpf_sfn()
        .args(["relay", "--protocol", "action-api", "--once"])
        .args(["--queue-url", "http://127.0.0.1:9/123456789012/q"])
        .args([
            "--endpoint-url",
            "http://127.0.0.1:9",
            "--region",
            "us-east-1",
        ])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("error[ACTION_API_V1_RETIRED]"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("--protocol gateway"), "{}", text(&o));
    assert!(!text(&o).contains("RELAY_"), "no AWS call: {}", text(&o));
    // The gateway protocol on the same flags goes as far as the queue.
    let o = tpf_sfn()
        .args(["relay", "--protocol", "gateway", "--once"])
        .args(["--queue-url", "http://127.0.0.1:9/123456789012/q"])
        .args([
            "--endpoint-url",
            "http://127.0.0.1:9",
            "--region",
            "us-east-1",
        ])
        .output()
        .expect("run");
    assert!(text(&o).contains("RELAY_"), "{}", text(&o));
    let o = tpf_sfn().args(["bridge", "--once"]).output().expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn bad_table_override_and_missing_token_exit_2() {
    let o = tpf_sfn()
        .args(["tables", "create", "--table", "nonsense=x"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("TABLE_OVERRIDE"));
    let o = tpf_sfn()
        .args(["serve", "--pipeline-contract", &contract()])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("NO_TOKEN"));
}

/// Kills the child it holds when dropped, so a failing assertion leaves no server behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(addr: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\r\n"
    )
    .expect("write");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, raw)
}

#[test]
fn serve_listens_on_loopback_and_requires_the_token() {
    let mut child = tpf_sfn()
        .args(["serve", "--pipeline-contract", &contract()])
        .args(["--listen", "127.0.0.1:0", "--activate-tenant", "demo"])
        .env("TPF_SFN_TOKEN", "from-env")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let child = Child(child);
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).expect("banner");
    let addr = line
        .trim()
        .rsplit("http://")
        .next()
        .expect("address")
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    let path = "/tpf/control-plane/tenants/demo/executions/nope";
    assert_eq!(get(&addr, path, None).0, 401);
    assert_eq!(get(&addr, path, Some("wrong")).0, 401);
    let (status, raw) = get(&addr, path, Some("from-env"));
    assert_eq!(status, 404, "{raw}");
    assert!(raw.contains("NOT_FOUND"));
    drop(child);
}
