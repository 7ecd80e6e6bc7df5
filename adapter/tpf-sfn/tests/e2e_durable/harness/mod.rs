//! The durable backend's loop as a user runs it, on AWS's own durable execution emulator:
//! `tables create` and `serve` (DynamoDB store) on moto, `dex-local-runner` running the durable
//! executions, one `cargo lambda watch` runtime per release with our `tpf-sfn-lambda` bootstrap
//! as that release's durable driver function (`_HANDLER=durable-driver`, the release's spec in
//! its environment), and `tpf-sfn bridge` starting and waking those drivers.
//!
//! Between the bridge (and the function) and the emulator sits the test shim (`shim.rs`): it
//! fills the emulator's gaps, each named there.
//!
//! [`Emulated`] is what every durable loop shares (the processes, `serve`'s HTTP API, the
//! emulator's reads); [`Loop`] is the Action API v1 loop on it, `gateway.rs` the gateway
//! protocol's. Two test binaries share this harness, each using its part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::{json, Value};
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::{matrix, Scenario};
use tpf_sfn_mapping::sfn::Subject;
use tpf_wire::wakeup::{self, attr};

use crate::support;
use crate::support::http::request;

pub mod gateway;
pub mod shim;

pub const TOKEN: &str = "e2e-token";
pub const TENANT: &str = "t1";
const CONTRACT: &str = "restaurant-approval.pipeline-contract.json";
const RELEASE: &str = "restaurant-approval.pipeline-release.json";
const MACHINE_ARN: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:";

/// A background task that ends with the test.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

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
pub fn tools() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
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
        root().join(".tools/dex")
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

/// A child process killed and reaped when dropped, also on panic.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One release as deployed here: its identity and its durable function's name.
pub struct Release {
    pub file: PathBuf,
    pub release_version: String,
    pub function: String,
}

#[derive(Default)]
pub struct Options {
    /// Also deploy the proof's second release; the host runs both.
    pub next_release: bool,
    /// Extra `serve` flags.
    pub serve: Vec<&'static str>,
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

pub struct Loop {
    base: Emulated,
    pub subject: Subject,
    pub scenario: Scenario,
    pub releases: Vec<Release>,
    durable_functions: String,
}

impl std::ops::Deref for Loop {
    type Target = Emulated;
    fn deref(&self) -> &Emulated {
        &self.base
    }
}

impl std::ops::DerefMut for Loop {
    fn deref_mut(&mut self) -> &mut Emulated {
        &mut self.base
    }
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
        let deadline = Instant::now() + Duration::from_secs(60);
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
        let child = tpf_sfn()
            .args(args)
            .stdout(Stdio::null())
            .stderr(self.log("serve"))
            .spawn()
            .expect("spawn serve");
        self.children.insert("serve".into(), Reaped(child));
    }

    pub fn connection(&self) -> Vec<String> {
        vec![
            "--endpoint-url".into(),
            self.endpoint.clone(),
            "--region".into(),
            "us-east-1".into(),
        ]
    }

    pub fn spawn_dex(&mut self, tools: &Path) {
        let child = Command::new("python3")
            .arg(tools.join("bin/dex-local-runner"))
            .args(["start-server", "--host", "127.0.0.1"])
            .args(["--port", &self.dex.port().to_string()])
            .args(["--log-level", "WARNING"])
            .args(["--execution-timeout", "900"])
            .env("PYTHONPATH", tools)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
            .stdout(Stdio::null())
            .stderr(self.log("dex"))
            .spawn()
            .expect("spawn dex-local-runner");
        self.children.insert("dex".into(), Reaped(child));
    }

    /// Release `i`'s Lambda runtime API (`cargo lambda watch`), which the emulator invokes.
    pub fn spawn_watch(&mut self, tools: &Path, i: usize, port: u16) {
        let watch = Command::new(tools.join("bin/cargo-lambda"))
            .args(["lambda", "watch", "--only-lambda-apis", "--ignore-changes"])
            .args(["-A", "127.0.0.1", "-P", &port.to_string()])
            .current_dir(root().join("adapter/tpf-sfn-lambda"))
            .stdout(Stdio::null())
            .stderr(self.log(&format!("watch-{i}")))
            .spawn()
            .expect("spawn cargo lambda watch");
        self.children.insert(format!("watch-{i}"), Reaped(watch));
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
        let mut command = Command::new(bootstrap);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("_HANDLER", "bootstrap")
            .env("TPF_SFN_HANDLER", "durable-driver")
            .env("TPF_SFN_DURABLE_SPEC", spec)
            .env(
                "AWS_LAMBDA_RUNTIME_API",
                format!("http://127.0.0.1:{port}/.rt"),
            )
            .env("AWS_LAMBDA_FUNCTION_NAME", function)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
            .env("AWS_ENDPOINT_URL_LAMBDA", &self.shim.url)
            .env("AWS_ENDPOINT_URL_DYNAMODB", &self.endpoint)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
        for (k, v) in env {
            command.env(k, v);
        }
        let function = command
            .stdout(self.log(&format!("function-{i}")))
            .stderr(self.log(&format!("function-{i}")))
            .spawn()
            .expect("spawn the durable driver function");
        self.children
            .insert(format!("function-{i}"), Reaped(function));
    }

    /// SIGKILL, as a crash would.
    pub fn kill(&mut self, which: &str) {
        drop(self.children.remove(which).expect("running child"));
    }

    /// Waits until `which`'s log satisfies `done`; returns the log.
    pub async fn wait_log(&self, which: &str, done: impl Fn(&str) -> bool) -> String {
        let path = self.dir.path().join(format!("{which}.log"));
        let deadline = Instant::now() + Duration::from_secs(60);
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

    /// The durable execution named `name`, once the bridge (or a hand-over) started it.
    pub async fn wait_started(&self, name: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
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

impl Loop {
    pub async fn start(scenario_name: &str, options: Options) -> Loop {
        let tools = tools().clone();
        let bootstrap = bootstrap().clone();
        let endpoint = support::moto_endpoint();
        let config = support::moto_config().await;
        let (id, prefix) = tables();

        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("tpf-sfn.toml");
        std::fs::write(
            &cfg,
            format!(
                "name-prefix = \"{id}\"\n[binding]\nkind = \"queue\"\n[binding.queue]\n\
                 queue-url = \"https://sqs.us-east-1.amazonaws.com/123456789012/unused\"\n\
                 [wakeup]\ntable-name = \"{prefix}tpf_sfn_wakeup\"\n"
            ),
        )
        .expect("config");
        let examples = root().join("examples/contracts");
        let contract = examples.join(CONTRACT);
        let subject = subject(&contract, &examples.join(RELEASE), &cfg);
        let scenario = matrix::derive(&subject)
            .into_iter()
            .find(|s| s.name == scenario_name)
            .unwrap_or_else(|| panic!("no scenario `{scenario_name}` in the matrix"));

        let identity = subject.plan.identity.clone();
        let mut releases = vec![Release {
            file: examples.join(RELEASE),
            release_version: identity.release_version.clone(),
            function: format!("{id}-driver-0"),
        }];
        if options.next_release {
            let next = dir.path().join("next.pipeline-release.json");
            let descriptor = proof::next_release_descriptor(&identity);
            std::fs::write(&next, descriptor.to_string()).expect("next release");
            releases.push(Release {
                file: next,
                release_version: descriptor["releaseVersion"]
                    .as_str()
                    .expect("releaseVersion")
                    .to_owned(),
                function: format!("{id}-driver-1"),
            });
        }

        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let dex: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let watch_ports: Vec<u16> = releases.iter().map(|_| free_port()).collect();
        let functions = releases
            .iter()
            .zip(&watch_ports)
            .map(|(r, port)| {
                (
                    r.function.clone(),
                    shim::Deployed {
                        lambda_endpoint: format!("http://127.0.0.1:{port}"),
                    },
                )
            })
            .collect();
        let shim = shim::Shim::start(dex, functions, None).await;
        let durable_functions = json!(releases
            .iter()
            .map(|r| (
                format!("{}@{}", identity.pipeline_id, r.release_version),
                Value::String(r.function.clone())
            ))
            .collect::<serde_json::Map<_, _>>())
        .to_string();

        let mut this = Loop {
            base: Emulated {
                endpoint,
                ddb: aws_sdk_dynamodb::Client::new(&config),
                dir,
                prefix,
                addr,
                dex,
                shim,
                children: BTreeMap::new(),
            },
            subject,
            scenario,
            releases,
            durable_functions,
        };
        this.write_script();
        let script = this.dir.path().join("script.toml");
        let files: Vec<PathBuf> = this.releases.iter().map(|r| r.file.clone()).collect();
        this.base
            .spawn_serve(&contract, &files, &script, &options.serve);
        this.base.spawn_dex(&tools);
        for (i, port) in watch_ports.iter().enumerate() {
            this.base.spawn_watch(&tools, i, *port);
        }
        this.wait_listening(addr, "serve").await;
        this.wait_listening(dex, "dex-local-runner").await;
        for (i, port) in watch_ports.iter().enumerate() {
            let a: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
            this.wait_listening(a, &format!("watch-{i}")).await;
            let spec = this.spec(i).to_string();
            let function = this.releases[i].function.clone();
            let env = [("TPF_SFN_ACTION_TOKEN", TOKEN)];
            this.base
                .start_bootstrap(&bootstrap, i, *port, &function, &spec, &env);
        }
        this.spawn("bridge");
        this
    }

    fn write_script(&self) {
        let steps: Vec<Value> = self
            .scenario
            .worker
            .iter()
            .map(|w| json!({ "step": w.step, "outcomes": w.outcomes }))
            .collect();
        write_script(&self.dir.path().join("script.toml"), &steps);
    }

    /// Release `i`'s durable driver spec, as `compile --backend lambda-durable` lowers it (short
    /// TPF-side waits from the config), with one change: the compiler takes only an `https://`
    /// action base, and the host here is plain HTTP on loopback.
    pub fn spec(&self, i: usize) -> Value {
        let r = &self.releases[i];
        let contract =
            std::fs::read(root().join("examples/contracts").join(CONTRACT)).expect("contract");
        let release = std::fs::read(&r.file).expect("release");
        let config = format!(
            "[binding]\nkind = \"http\"\n[binding.http]\napi-base-url = \"https://tpf.invalid\"\n\
             [wakeup]\ntable-name = \"{}{}\"\nlease-wait-seconds = 1\nrecheck-seconds = 2\n",
            self.prefix,
            wakeup::TABLE
        );
        let compiled = compile_durable((CONTRACT, &contract), Some((RELEASE, &release)), &config);
        let mut spec: Value = serde_json::from_str(&compiled.durable.spec_text).expect("spec json");
        assert_eq!(
            spec["identity"]["releaseVersion"],
            r.release_version.as_str()
        );
        spec["binding"]["apiBaseUrl"] = json!(format!("http://{}", self.addr));
        spec
    }

    /// Release `i`'s durable sweeper, as its scheduled function builds it: the wakeup table on
    /// moto, Lambda through the shim (the emulator's durable APIs), recoveries on the version
    /// this test deployed for the release.
    pub async fn sweeper(&self, i: usize) -> tpf_sfn::sweep::DurableSweeper {
        let r = &self.releases[i];
        let moto = support::moto_config().await;
        let lambda = aws_sdk_lambda::Client::from_conf(
            aws_sdk_lambda::config::Builder::from(&moto)
                .endpoint_url(&self.shim.url)
                .build(),
        );
        let mut identity = self.subject.plan.identity.clone();
        identity.release_version = r.release_version.clone();
        tpf_sfn::sweep::DurableSweeper::new(
            self.ddb.clone(),
            lambda,
            format!("{}{}", self.prefix, wakeup::TABLE),
            identity,
            r.function.clone(),
        )
    }

    /// One run of release `i`'s sweeper, as its scheduled function runs it: sweep-once over
    /// the Action API to `serve`, then the due executions.
    pub async fn sweep(&self, i: usize, key: &str) -> tpf_sfn::sweep::SweepReport {
        let sweeper = self.sweeper(i).await;
        let tpf = tpf_sfn::relay::http::HttpActionHost::new(
            &format!("http://{}", self.addr),
            Some(TOKEN.to_owned()),
            Duration::from_secs(10),
        )
        .expect("action host");
        let answer = tpf_sfn::sweep::sweep_once_over(&tpf, &sweeper.request(100, key))
            .await
            .unwrap_or_else(|e| panic!("{}\n{}", e.report(), self.logs()));
        sweeper.act_on(&answer.due).await
    }

    /// Starts `tpf-sfn bridge` against moto's streams and the shim's Lambda endpoint.
    pub fn spawn(&mut self, which: &str) {
        assert_eq!(which, "bridge", "only the bridge restarts");
        let mut args: Vec<String> = vec![
            "bridge".into(),
            "--machine-arn-prefix".into(),
            MACHINE_ARN.into(),
            "--interval-ms".into(),
            "100".into(),
            "--prefix".into(),
            self.prefix.clone(),
            "--durable-functions".into(),
            self.durable_functions.clone(),
            "--lambda-endpoint-url".into(),
            self.shim.url.clone(),
        ];
        args.extend(self.connection());
        let child = tpf_sfn()
            .args(args)
            .stdout(Stdio::null())
            .stderr(self.log("bridge"))
            .spawn()
            .expect("spawn bridge");
        self.children.insert("bridge".into(), Reaped(child));
    }

    pub fn pipeline_id(&self) -> &str {
        &self.subject.plan.identity.pipeline_id
    }

    // --- TPF's side, over the host's HTTP API

    pub async fn submit(&self, key: &str) -> String {
        let r = support::http::submit(self.addr, TOKEN, TENANT, self.pipeline_id(), key).await;
        assert_eq!(r.status, 200, "{}", r.raw);
        r.body["executionId"].as_str().expect("id").to_owned()
    }

    // --- the wakeup table

    /// The execution's wakeup-table row `sk` (`driver` or `wakeup`), as strings.
    pub async fn row(&self, id: &str, sk: &str) -> Option<BTreeMap<String, String>> {
        let out = self
            .ddb
            .get_item()
            .table_name(format!("{}{}", self.prefix, wakeup::TABLE))
            .key(wakeup::PK, AttributeValue::S(wakeup::pk(TENANT, id)))
            .key(wakeup::SK, AttributeValue::S(sk.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .expect("GetItem");
        out.item().map(|item| {
            item.iter()
                .filter_map(|(k, v)| match v {
                    AttributeValue::S(s) | AttributeValue::N(s) => Some((k.clone(), s.clone())),
                    _ => None,
                })
                .collect()
        })
    }

    /// Waits until the driver parked: TPF's record is WAITING_EXTERNAL and the token row holds
    /// a callback id of this execution. Returns the token row.
    pub async fn wait_parked(&self, id: &str, arn: &str) -> BTreeMap<String, String> {
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            if let Some(row) = self.row(id, wakeup::WAKEUP_ROW).await {
                if row.get(attr::EXECUTION_ARN).map(String::as_str) == Some(arn)
                    && self.record(id).await["status"] == "WAITING_EXTERNAL"
                {
                    return row;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{id} never parked on {arn}\n{}", self.logs());
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

fn subject(contract: &Path, release: &Path, config: &Path) -> Subject {
    let config_text = std::fs::read_to_string(config).expect("config");
    let contract_bytes = std::fs::read(contract).expect("contract");
    let release_bytes = std::fs::read(release).expect("release");
    proof::subject(
        &Input {
            contract_file: CONTRACT,
            contract: &contract_bytes,
            release: Some((RELEASE, &release_bytes)),
            config: Some(("tpf-sfn.toml", &config_text)),
            binding: Some(BindingKind::Queue),
            allow_unverified_hash: false,
        },
        None,
    )
    .expect("subject")
}
