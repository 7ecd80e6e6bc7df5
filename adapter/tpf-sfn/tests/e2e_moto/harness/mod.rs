//! The runtime loop as a user runs it, on moto: `tables create`, `compile --binding queue`,
//! `deploy`, then `serve` (DynamoDB store), `bridge` and `relay` as child processes. Each test
//! picks a scenario of the derived matrix; the same scenario then runs in our interpreter, and
//! the two must enter the same driver states in the same order.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use aws_sdk_sfn::types::ExecutionStatus;
use serde_json::{json, Value};
use tpf_sfn::relay::http::{ActionHost, HttpActionHost};
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::{matrix, Scenario};
use tpf_sfn_mapping::sfn::{self, Run, Subject};

use crate::support;
use crate::support::http::request;

mod compare;
pub mod lambda;
mod process;
mod runs;
mod tpf;
mod waits;

pub use compare::*;
pub use process::*;
pub use tpf::*;
pub use waits::*;

pub const TOKEN: &str = "e2e-token";
pub const TENANT: &str = "t1";
const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-e2e";
const MACHINE_ARN: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:";
const EXECUTION_ARN: &str = "arn:aws:states:us-east-1:123456789012:execution:";
pub const AWAIT: &str = "Await Restaurant Decision";
const CONTRACT: &str = "restaurant-approval.pipeline-contract.json";
const RELEASE: &str = "restaurant-approval.pipeline-release.json";

/// One compiled and deployed release.
pub struct Deployed {
    pub file: PathBuf,
    pub out: PathBuf,
    pub driver: String,
    pub release_version: String,
}

/// How a test wants the loop set up.
#[derive(Default)]
pub struct Options {
    /// Bridge and relay as processes, or as Lambda handlers on event source mappings.
    pub wake: Wake,
    /// Lambda only: the Step Functions clients the bridge and relay handlers use (a test
    /// hands in ones that fail on purpose).
    pub bridge_sfn: Option<aws_sdk_sfn::Client>,
    pub relay_sfn: Option<aws_sdk_sfn::Client>,
    pub relay: Relay,
    /// Also compile and deploy the proof's second release; the host runs both.
    pub next_release: bool,
    /// Extra `serve` flags.
    pub serve: Vec<&'static str>,
}

/// How the wake path runs.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub enum Wake {
    /// `tpf-sfn bridge` and `tpf-sfn relay` as child processes.
    #[default]
    Processes,
    /// The Lambda handlers, invoked by event source mappings on moto's streams and queue.
    Lambda,
}

/// Which runtime processes a test starts itself.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub enum Relay {
    /// `tpf-sfn relay` as a child process.
    #[default]
    Process,
    /// The test runs the relay library itself (to hook the action path).
    InTest,
}

pub struct Loop {
    pub endpoint: String,
    pub sfn: aws_sdk_sfn::Client,
    pub sqs: aws_sdk_sqs::Client,
    dir: tempfile::TempDir,
    pub prefix: String,
    name_prefix: String,
    pub queue_url: String,
    contract: PathBuf,
    pub releases: Vec<Deployed>,
    pub subject: Subject,
    pub scenario: Scenario,
    pub addr: SocketAddr,
    serve_extra: Vec<&'static str>,
    children: BTreeMap<&'static str, Child>,
    pub wake: Wake,
    mappings: BTreeMap<&'static str, Vec<AbortOnDrop>>,
    positions: lambda::Positions,
    config: aws_config::SdkConfig,
    bridge_sfn: aws_sdk_sfn::Client,
    relay_sfn: aws_sdk_sfn::Client,
    /// What the Lambda mappings delivered to the bridge and the relay handlers.
    pub bridge_deliveries: lambda::Shared,
    pub relay_deliveries: lambda::Shared,
}

impl Drop for Loop {
    fn drop(&mut self) {
        for child in self.children.values_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Loop {
    /// Sets up tables, queue, compiled and deployed release(s) for `scenario_name`, and starts
    /// serve, bridge and (with `Relay::Process`) the relay.
    pub async fn start(scenario_name: &str, options: Options) -> Loop {
        let Options {
            wake,
            bridge_sfn,
            relay_sfn,
            relay,
            next_release,
            serve,
        } = options;
        let endpoint = support::moto_endpoint();
        let config = support::moto_config().await;
        let sfn = aws_sdk_sfn::Client::new(&config);
        let sqs = aws_sdk_sqs::Client::new(&config);
        let id = support::unique("e2e");
        let prefix = format!("{}_", id.replace('-', "_"));
        let conn = ["--endpoint-url", endpoint.as_str(), "--region", "us-east-1"];

        let mut args = vec!["tables", "create", "--prefix", &prefix];
        args.extend(conn);
        run(&args);
        let mut queue = sqs.create_queue().queue_name(&id);
        if wake == Wake::Lambda {
            // A message the relay handler reports failed comes back after this, as on AWS.
            queue = queue.attributes(
                aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout,
                "2",
            );
        }
        let queue_url = queue
            .send()
            .await
            .expect("queue")
            .queue_url()
            .expect("queue url")
            .to_owned();

        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("tpf-sfn.toml");
        // A history budget no scenario here reaches: moto cannot run the nested startExecution
        // of a rollover.
        std::fs::write(
            &cfg,
            format!(
                "name-prefix = \"{id}\"\n[binding]\nkind = \"queue\"\n[binding.queue]\nqueue-url = \"{queue_url}\"\n\
                 [wakeup]\ntable-name = \"{prefix}tpf_sfn_wakeup\"\n[history]\nevent-budget = 20000\n"
            ),
        )
        .expect("config");
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
        let contract = examples.join(CONTRACT);
        let subject = subject(&contract, &examples.join(RELEASE), &cfg);
        let scenario = matrix::derive(&subject)
            .into_iter()
            .find(|s| s.name == scenario_name)
            .unwrap_or_else(|| panic!("no scenario `{scenario_name}` in the matrix"));

        let mut release_files = vec![examples.join(RELEASE)];
        if next_release {
            let next = dir.path().join("next.pipeline-release.json");
            let descriptor = proof::next_release_descriptor(&subject.plan.identity);
            std::fs::write(&next, descriptor.to_string()).expect("next release");
            release_files.push(next);
        }
        let mut releases = Vec::new();
        for (i, file) in release_files.into_iter().enumerate() {
            let out = dir.path().join(format!("release-{i}"));
            run(&[
                "compile",
                utf8(&contract),
                "--release",
                utf8(&file),
                "--config",
                utf8(&cfg),
                "--out",
                utf8(&out),
            ]);
            let mut args = vec!["deploy", "--out", utf8(&out), "--role-arn", ROLE];
            args.extend(conn);
            run(&args);
            let manifest: Value = serde_json::from_str(
                &std::fs::read_to_string(out.join("manifest.json")).expect("manifest"),
            )
            .expect("manifest json");
            releases.push(Deployed {
                file,
                out,
                driver: manifest["machines"]["driver"]["name"]
                    .as_str()
                    .expect("driver name")
                    .to_owned(),
                release_version: manifest["identity"]["releaseVersion"]
                    .as_str()
                    .expect("releaseVersion")
                    .to_owned(),
            });
        }

        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let mut this = Loop {
            endpoint,
            sfn,
            sqs,
            dir,
            prefix,
            name_prefix: id,
            queue_url,
            contract,
            releases,
            subject,
            scenario,
            addr,
            serve_extra: serve,
            children: BTreeMap::new(),
            wake,
            mappings: BTreeMap::new(),
            positions: Default::default(),
            bridge_sfn: bridge_sfn.unwrap_or_else(|| aws_sdk_sfn::Client::new(&config)),
            relay_sfn: relay_sfn.unwrap_or_else(|| aws_sdk_sfn::Client::new(&config)),
            config,
            bridge_deliveries: Default::default(),
            relay_deliveries: Default::default(),
        };
        this.write_script();
        this.spawn("serve");
        this.spawn("bridge");
        if relay == Relay::Process {
            this.spawn("relay");
        }
        let up = poll(200, || async {
            std::net::TcpStream::connect(addr).ok().map(|_| ())
        })
        .await;
        assert!(up.is_some(), "serve never listened\n{}", this.logs());
        this
    }

    /// The scenario's worker script in `serve --script` form: the same outcomes by attempt.
    fn write_script(&self) {
        let steps: Vec<Value> = self
            .scenario
            .worker
            .iter()
            .map(|w| json!({ "step": w.step, "outcomes": w.outcomes }))
            .collect();
        let text = toml::to_string(&json!({ "steps": steps })).expect("script toml");
        std::fs::write(self.dir.path().join("script.toml"), text).expect("script");
    }

    fn args(&self, which: &str) -> Vec<String> {
        let mut a: Vec<String> = match which {
            "serve" => {
                let mut a = vec![
                    "serve".into(),
                    "--pipeline-contract".into(),
                    utf8(&self.contract).into(),
                    "--listen".into(),
                    self.addr.to_string(),
                    "--store".into(),
                    "dynamodb".into(),
                    "--prefix".into(),
                    self.prefix.clone(),
                    "--activate-tenant".into(),
                    TENANT.into(),
                    "--script".into(),
                    utf8(&self.dir.path().join("script.toml")).into(),
                    // Short retry waits: the driver really waits for TPF's due time on moto.
                    "--retry-delay-ms".into(),
                    "200".into(),
                    "--retry-multiplier".into(),
                    "1".into(),
                ];
                for r in &self.releases {
                    a.extend(["--release".into(), utf8(&r.file).into()]);
                }
                a.extend(self.serve_extra.iter().map(|x| x.to_string()));
                a
            }
            "bridge" => vec![
                "bridge".into(),
                "--machine-arn-prefix".into(),
                MACHINE_ARN.into(),
                "--name-prefix".into(),
                self.name_prefix.clone(),
                "--interval-ms".into(),
                "100".into(),
                "--prefix".into(),
                self.prefix.clone(),
            ],
            "relay" => vec![
                "relay".into(),
                "--queue-url".into(),
                self.queue_url.clone(),
                "--action-url".into(),
                format!("http://{}", self.addr),
                "--wait-seconds".into(),
                "1".into(),
            ],
            other => panic!("no process `{other}`"),
        };
        a.extend([
            "--endpoint-url".into(),
            self.endpoint.clone(),
            "--region".into(),
            "us-east-1".into(),
        ]);
        a
    }

    /// Starts `tpf-sfn <which>`; its stderr goes to `<which>.log` (appended across restarts).
    /// With `Wake::Lambda`, `bridge` and `relay` are the handlers' event source mappings.
    pub fn spawn(&mut self, which: &'static str) {
        if self.wake == Wake::Lambda && which != "serve" {
            let mappings = match which {
                "bridge" => self.bridge_mappings(),
                "relay" => vec![self.queue_mapping(self.action_host())],
                other => panic!("no Lambda function `{other}`"),
            };
            self.mappings.insert(which, mappings);
            return;
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{which}.log")))
            .expect("log file");
        let child = tpf_sfn()
            .args(self.args(which))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn tpf-sfn");
        self.children.insert(which, child);
    }

    /// SIGKILL, as a crash would: no shutdown path runs. For a Lambda function: its mappings
    /// stop invoking it, keeping their positions, as while a function is throttled or failing.
    pub fn kill(&mut self, which: &'static str) {
        if self.mappings.remove(which).is_some() {
            return;
        }
        let mut child = self.children.remove(which).expect("running child");
        child.kill().expect("kill");
        child.wait().expect("reap");
    }

    pub fn logs(&self) -> String {
        ["serve", "bridge", "relay"]
            .iter()
            .map(|f| {
                format!(
                    "--- {f}.log\n{}",
                    std::fs::read_to_string(self.dir.path().join(format!("{f}.log")))
                        .unwrap_or_default()
                )
            })
            .collect()
    }

    pub fn pipeline_id(&self) -> &str {
        &self.subject.plan.identity.pipeline_id
    }

    /// An HTTP client for this loop's action host, as the relay process uses it.
    pub fn action_host(&self) -> HttpActionHost {
        HttpActionHost::new(
            &format!("http://{}", self.addr),
            Some(TOKEN.to_owned()),
            Duration::from_secs(30),
        )
        .expect("action url")
    }

    /// The bridge handler's two stream mappings (TPF's execution table, the wakeup table).
    fn bridge_mappings(&self) -> Vec<AbortOnDrop> {
        let tables = tpf_sfn::aws::tables::TableNames::with_prefix(&self.prefix);
        let handler = std::sync::Arc::new(tpf_sfn::bridge::RecordHandler::with_clients(
            aws_sdk_dynamodb::Client::new(&self.config),
            self.bridge_sfn.clone(),
            tables.clone(),
            tpf_sfn::bridge::Machines {
                arn_prefix: MACHINE_ARN.to_owned(),
                name_prefix: self.name_prefix.clone(),
            },
        ));
        [tables.execution, tables.wakeup]
            .into_iter()
            .map(|table| {
                lambda::stream_mapping(
                    aws_sdk_dynamodbstreams::Client::new(&self.config),
                    aws_sdk_dynamodb::Client::new(&self.config),
                    table,
                    handler.clone(),
                    self.positions.clone(),
                    self.bridge_deliveries.clone(),
                )
            })
            .collect()
    }

    /// The relay handler's queue mapping, with `host` on the action path.
    fn queue_mapping<A>(&self, host: A) -> AbortOnDrop
    where
        A: ActionHost + Send + Sync + 'static,
    {
        lambda::queue_mapping(
            self.sqs.clone(),
            self.queue_url.clone(),
            tpf_sfn::relay::TaskRelay::new(self.relay_sfn.clone(), host),
            self.relay_deliveries.clone(),
        )
    }

    /// Runs the relay in this test (for `Relay::InTest`) with `host` on the action path: the
    /// relay library's polling loop, or with `Wake::Lambda` the relay handler's mapping;
    /// aborted when the handle is dropped.
    pub fn relay_in_test<A>(&self, host: A) -> AbortOnDrop
    where
        A: ActionHost + Send + Sync + 'static,
    {
        if self.wake == Wake::Lambda {
            return self.queue_mapping(host);
        }
        let mut relay = tpf_sfn::relay::Relay::new(
            self.sqs.clone(),
            self.sfn.clone(),
            self.queue_url.clone(),
            host,
        );
        relay.wait_seconds = 1;
        AbortOnDrop(tokio::spawn(async move {
            loop {
                relay.poll_once().await.expect("relay pass");
            }
        }))
    }

    /// The driver execution ARN: `name` on release `release`'s machine.
    pub fn arn(&self, release: usize, name: &str) -> String {
        format!("{EXECUTION_ARN}{}:{name}", self.releases[release].driver)
    }
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
