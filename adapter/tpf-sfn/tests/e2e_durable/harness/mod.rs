//! The durable backend's loop as a user runs it, on AWS's own durable execution emulator:
//! `tables create` and `serve` (DynamoDB store) on moto, `dex-local-runner` running the durable
//! executions, one `cargo lambda watch` runtime per release with our `tpf-sfn-lambda` bootstrap
//! as that release's durable driver function (`_HANDLER=durable-driver`, the release's spec in
//! its environment).
//!
//! The processes and the Lambda endpoint between the functions and the emulator (which fills
//! the emulator's gaps, each named there) are the ones `tpf-sfn dev --backend lambda-durable`
//! runs: `tpf_sfn::emulator`.
//!
//! [`Emulated`] is what every durable loop shares (the processes, `serve`'s HTTP API, the
//! emulator's reads); `gateway.rs` is the gateway protocol's loop on it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tpf_sfn_compiler::compile::Input;

use crate::support;
use crate::support::http::request;

pub mod gateway;
use tpf_sfn::emulator::function::DriverFunction;
pub use tpf_sfn::emulator::lambda as shim;
use tpf_sfn::emulator::tools::{write_runtime_manifest, Tools};
pub use tpf_sfn::emulator::{AbortOnDrop, Reaped};

pub const TOKEN: &str = "e2e-token";
/// How long a wait on the emulators lasts before the test fails. Their processes share the
/// machine's cores with the other tests (the test command runs six at once), so a step that
/// takes a second alone can take tens under load: this bounds a hang, it times nothing.
pub const PATIENCE: Duration = Duration::from_secs(120);
pub const TENANT: &str = "t1";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("ephemeral port")
        .port()
}

pub fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The emulator and cargo-lambda, installed by `scripts/dex.sh` into `.tools/dex`. Never
/// skipped: the install runs here if it did not run before, and a failure fails the test.
pub fn tools() -> &'static Tools {
    static DIR: OnceLock<Tools> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("bash")
            .arg(root().join("scripts/dex.sh"))
            .arg("install")
            .output()
            .expect("run scripts/dex.sh");
        assert!(
            out.status.success(),
            "could not install the durable execution emulator: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tools::at(&root().join(tpf_sfn::emulator::tools::DIR))
            .unwrap_or_else(|e| panic!("{}", e.report()))
    })
}

/// The `tpf-sfn-lambda` bootstrap: the one `TPF_SFN_LAMBDA_BOOTSTRAP` names (the test command
/// builds the shipped zip's binary first and points here, so the tests run what ships), else
/// built once per test run with the cargo that runs the tests.
pub fn bootstrap() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(given) = std::env::var_os("TPF_SFN_LAMBDA_BOOTSTRAP").filter(|v| !v.is_empty())
        {
            let bin = PathBuf::from(given);
            assert!(
                bin.is_file(),
                "TPF_SFN_LAMBDA_BOOTSTRAP names no file: {}",
                bin.display()
            );
            return bin;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(root())
            .args(["build", "-p", "tpf-sfn-lambda", "--bin", "tpf-sfn-lambda"])
            .status()
            .expect("cargo build tpf-sfn-lambda");
        assert!(
            status.success(),
            "building the durable driver function failed"
        );
        // target/debug/deps/<this test> -> target/debug/tpf-sfn-lambda
        let exe = std::env::current_exe().expect("test exe");
        let bin = exe
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("tpf-sfn-lambda");
        assert!(bin.exists(), "no bootstrap at {}", bin.display());
        bin
    })
}

/// What every durable loop runs: `serve` on moto's DynamoDB, the emulator, the shim in front
/// of it, the functions' runtimes; their logs in one temporary folder.
pub struct Emulated {
    pub endpoint: String,
    pub ddb: aws_sdk_dynamodb::Client,
    pub dir: tempfile::TempDir,
    pub prefix: String,
    pub addr: SocketAddr,
    pub dex: SocketAddr,
    pub shim: shim::Shim,
    pub children: BTreeMap<String, Reaped>,
}

/// A fresh moto table set under a unique prefix (`tables create`): the prefix's id and the
/// prefix.
pub fn tables() -> (String, String) {
    let endpoint = support::moto_endpoint();
    let id = support::unique("dur");
    let prefix = format!("{}_", id.replace('-', "_"));
    run(&[
        "tables",
        "create",
        "--prefix",
        &prefix,
        "--endpoint-url",
        &endpoint,
        "--region",
        "us-east-1",
    ]);
    (id, prefix)
}

impl Emulated {
    pub async fn wait_listening(&self, addr: SocketAddr, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(addr).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{what} never listened on {addr}\n{}", self.logs());
    }

    pub fn log(&self, which: &str) -> std::fs::File {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{which}.log")))
            .expect("log file")
    }

    /// `serve` on moto's tables under this loop's prefix, running `releases`' pipeline with the
    /// failure script at `script`, plus `extra` flags.
    pub fn spawn_serve(
        &mut self,
        contract: &Path,
        releases: &[PathBuf],
        script: &Path,
        extra: &[&'static str],
    ) {
        let mut args: Vec<String> = vec![
            "serve".into(),
            "--pipeline-contract".into(),
            utf8(contract).into(),
            "--listen".into(),
            self.addr.to_string(),
            "--store".into(),
            "dynamodb".into(),
            "--prefix".into(),
            self.prefix.clone(),
            "--activate-tenant".into(),
            TENANT.into(),
            "--script".into(),
            utf8(script).into(),
            "--retry-delay-ms".into(),
            "200".into(),
            "--retry-multiplier".into(),
            "1".into(),
        ];
        for r in releases {
            args.extend(["--release".into(), utf8(r).into()]);
        }
        args.extend(extra.iter().map(|x| x.to_string()));
        args.extend(self.connection());
        let mut serve = tpf_sfn();
        serve
            .args(args)
            .stdout(Stdio::null())
            .stderr(self.log("serve"));
        self.spawn("serve", serve);
    }

    pub fn connection(&self) -> Vec<String> {
        vec![
            "--endpoint-url".into(),
            self.endpoint.clone(),
            "--region".into(),
            "us-east-1".into(),
        ]
    }

    /// Starts `command` as the child `name`, stopped with the loop.
    fn spawn(&mut self, name: &str, command: Command) {
        let child = Reaped::spawn(name, command).unwrap_or_else(|e| panic!("{}", e.report()));
        self.children.insert(name.to_owned(), child);
    }

    pub fn spawn_dex(&mut self, tools: &Tools) {
        let mut dex = tools.emulator(self.dex.port());
        dex.stdout(Stdio::null()).stderr(self.log("dex"));
        self.spawn("dex", dex);
    }

    /// Release `i`'s Lambda runtime API (`cargo lambda watch`), which the emulator invokes.
    pub fn spawn_watch(&mut self, tools: &Tools, i: usize, port: u16) {
        let manifest = self.dir.path().join(format!("function-{i}"));
        write_runtime_manifest(&manifest).unwrap_or_else(|e| panic!("{}", e.report()));
        let mut watch = tools.runtime_api(port, &manifest);
        watch
            .stdout(Stdio::null())
            .stderr(self.log(&format!("watch-{i}")));
        self.spawn(&format!("watch-{i}"), watch);
    }

    /// Function `i`: the bootstrap polling its runtime API as `function`'s published version,
    /// with the durable driver spec `spec` and `env` in its environment, as Lambda runs it.
    pub fn start_bootstrap(
        &mut self,
        bootstrap: &Path,
        i: usize,
        port: u16,
        function: &str,
        spec: &str,
        env: &[(&str, &str)],
    ) {
        let mut command = DriverFunction {
            name: function,
            spec,
            runtime_port: port,
            lambda_endpoint: &self.shim.url,
            dynamodb_endpoint: &self.endpoint,
            region: "us-east-1",
        }
        .command(bootstrap);
        for (k, v) in env {
            command.env(k, v);
        }
        command
            .stdout(self.log(&format!("function-{i}")))
            .stderr(self.log(&format!("function-{i}")));
        self.spawn(&format!("function-{i}"), command);
    }

    /// SIGKILL, as a crash would.
    pub fn kill(&mut self, which: &str) {
        drop(self.children.remove(which).expect("running child"));
    }

    /// Waits until `which`'s log satisfies `done`; returns the log.
    pub async fn wait_log(&self, which: &str, done: impl Fn(&str) -> bool) -> String {
        let path = self.dir.path().join(format!("{which}.log"));
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            if done(&log) {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{which}'s log never showed it\n{}", self.logs());
    }

    pub fn logs(&self) -> String {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".log"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                // The tail is what explains a failure.
                let tail: String = text
                    .lines()
                    .rev()
                    .take(60)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                format!("--- {f}\n{tail}\n")
            })
            .collect()
    }

    pub async fn record(&self, id: &str) -> Value {
        request(
            self.addr,
            "GET",
            &format!("/tpf/control-plane/tenants/{TENANT}/executions/{id}"),
            Some(TOKEN),
            None,
        )
        .await
        .body
    }

    pub async fn pending(&self, id: &str) -> Option<String> {
        let r = request(
            self.addr,
            "GET",
            &format!("/tpf/control-plane/tenants/{TENANT}/interactions/pending"),
            Some(TOKEN),
            None,
        )
        .await;
        r.body
            .as_array()?
            .iter()
            .find(|i| i["executionId"] == id)
            .and_then(|i| i["interactionId"].as_str())
            .map(str::to_owned)
    }

    pub async fn complete(&self, interaction: &str) -> Value {
        let body = json!({
            "interactionId": interaction, "responsePayload": {"decision": "accepted"}, "actor": "chef"
        })
        .to_string();
        let r = request(
            self.addr,
            "POST",
            &format!("/tpf/control-plane/tenants/{TENANT}/interactions/complete"),
            Some(TOKEN),
            Some(&body),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.raw);
        r.body
    }

    pub async fn post_admin(&self, path: &str, body: &str) -> Value {
        let r = request(
            self.addr,
            "POST",
            &format!("/tpf/admin/tenants/{TENANT}/{path}"),
            Some(TOKEN),
            Some(body),
        )
        .await;
        assert_eq!(r.status, 200, "{path}: {}", r.raw);
        r.body
    }

    // --- the emulator's durable executions

    pub async fn dex_get(&self, path: &str) -> Value {
        let r = request(self.dex, "GET", path, None, None).await;
        assert!(r.status < 300, "GET {path}: {}", r.raw);
        r.body
    }

    pub fn encoded(arn: &str) -> String {
        arn.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// `GetDurableExecution`.
    pub async fn execution(&self, arn: &str) -> Value {
        self.dex_get(&format!(
            "/2025-12-01/durable-executions/{}",
            Self::encoded(arn)
        ))
        .await
    }

    /// `GetDurableExecutionHistory`: every event, in order.
    pub async fn history(&self, arn: &str) -> Vec<Value> {
        let body = self
            .dex_get(&format!(
                "/2025-12-01/durable-executions/{}/history?MaxItems=1000&IncludeExecutionData=true",
                Self::encoded(arn)
            ))
            .await;
        body["Events"].as_array().cloned().unwrap_or_default()
    }

    /// The durable execution named `name`, once the starter (or a hand-over) started it.
    pub async fn wait_started(&self, name: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Some(arn) = self.shim.arn(name) {
                return arn;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no durable execution {name} was started\n{}", self.logs());
    }

    /// Waits until the durable execution `arn` ended; returns its status.
    pub async fn wait_ended(&self, arn: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(180);
        while Instant::now() < deadline {
            let e = self.execution(arn).await;
            match e["Status"].as_str() {
                Some("RUNNING") | None => {}
                Some(s) => return s.to_owned(),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let events: Vec<String> = self
            .history(arn)
            .await
            .iter()
            .map(|e| format!("{} {}", e["EventType"], e["Name"]))
            .collect();
        panic!(
            "{arn} never ended; its history: {events:#?}\n{}",
            self.logs()
        );
    }

    /// The names of the operations the execution checkpointed, in the order they started
    /// (one per operation: a step's retries and a callback's inner parts are not counted).
    pub async fn operations(&self, arn: &str) -> Vec<(String, String)> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for e in self.history(arn).await {
            let (Some(id), Some(kind)) = (e["Id"].as_str(), e["EventType"].as_str()) else {
                continue;
            };
            if kind.starts_with("Execution") || e.get("ParentId").is_some_and(|p| !p.is_null()) {
                continue;
            }
            if kind.ends_with("Started") && seen.insert(id.to_owned()) {
                out.push((
                    kind.trim_end_matches("Started").to_owned(),
                    e["Name"].as_str().unwrap_or_default().to_owned(),
                ));
            }
        }
        out
    }
}

fn tpf_sfn() -> Command {
    let mut c = support::cli();
    c.env("TPF_SFN_TOKEN", TOKEN);
    c
}

/// `compile --backend lambda-durable` of a contract and release (file name, bytes) under the
/// config text `config`.
pub fn compile_durable(
    contract: (&str, &[u8]),
    release: Option<(&str, &[u8])>,
    config: &str,
) -> tpf_sfn_compiler::durable::Compiled {
    tpf_sfn_compiler::compile::compile(
        &Input {
            contract_file: contract.0,
            contract: contract.1,
            release,
            config: Some(("tpf-sfn.toml", config)),
            binding: None,
            allow_unverified_hash: false,
        },
        tpf_sfn_compiler::durable::LambdaDurable,
    )
    .expect("durable compile")
}

/// A `serve --script` file: per step, outcomes by attempt.
pub fn write_script(path: &Path, steps: &[Value]) {
    let text = toml::to_string(&json!({ "steps": steps })).expect("script toml");
    std::fs::write(path, text).expect("script");
}

fn run(args: &[&str]) {
    let o = tpf_sfn().args(args).output().expect("run tpf-sfn");
    assert!(
        o.status.success(),
        "tpf-sfn {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
