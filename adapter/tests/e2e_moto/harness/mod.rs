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
use tpf_sfn_mapping::scenario::run::{Run, Subject};
use tpf_sfn_mapping::scenario::{self, matrix, Scenario};

use crate::support;
use crate::support::http::request;

mod compare;
pub mod lambda;
mod process;

pub use compare::*;
pub use process::*;

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
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/contracts");
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

    /// Submits an order; returns TPF's execution id.
    pub async fn submit(&self, key: &str) -> String {
        submit(self.addr, self.pipeline_id(), key).await
    }

    /// TPF's `ExecutionStatusDto` for `id`.
    pub async fn record(&self, id: &str) -> Value {
        record(self.addr, id).await
    }

    /// The pending interaction of execution `id`, if TPF has one.
    pub async fn pending(&self, id: &str) -> Option<String> {
        pending_interaction(self.addr, id).await
    }

    /// Completes interaction `interaction`; returns the response body.
    pub async fn complete(&self, interaction: &str) -> Value {
        complete_interaction(self.addr, interaction).await
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

    /// Waits until TPF parked `id` and its driver `arn` entered the await; returns how many
    /// states the driver had entered by then.
    pub async fn wait_parked(&self, arn: &str, id: &str) -> usize {
        let parked = poll(300, || async {
            let entered = entered_states(&self.sfn, arn).await;
            (self.record(id).await["status"] == "WAITING_EXTERNAL"
                && entered.last().map(String::as_str) == Some(AWAIT))
            .then_some(entered.len())
        })
        .await;
        parked.unwrap_or_else(|| panic!("{arn} never parked\n{}", self.logs()))
    }

    /// Waits until the driver `arn` and TPF's record of `id` both end in `status`.
    pub async fn wait_ended(&self, arn: &str, id: &str, status: ExecutionStatus) {
        self.wait_ended_completing(arn, id, status, false).await
    }

    /// `wait_ended`; with `complete_parks` it also completes every interaction of `id` once the
    /// driver has parked on it, as the matrix's "complete every park" actor does (its
    /// completions come minutes after the park). Completing earlier would race the driver's own
    /// calls, and under duplicate delivery TPF could legitimately finish before the driver
    /// parks: a different, equally correct path.
    pub async fn wait_ended_completing(
        &self,
        arn: &str,
        id: &str,
        status: ExecutionStatus,
        complete_parks: bool,
    ) {
        let tpf = status.as_str().to_owned();
        let ended = poll(300, || async {
            let parked = || async {
                entered_states(&self.sfn, arn)
                    .await
                    .last()
                    .map(String::as_str)
                    == Some(AWAIT)
            };
            if complete_parks && parked().await {
                if let Some(interaction) = self.pending(id).await {
                    self.complete(&interaction).await;
                }
            }
            let d = self
                .sfn
                .describe_execution()
                .execution_arn(arn)
                .send()
                .await
                .ok()?;
            (d.status() == &status && self.record(id).await["status"] == tpf.as_str()).then_some(())
        })
        .await;
        assert!(
            ended.is_some(),
            "{arn} never {tpf} in both\n{}",
            self.logs()
        );
    }

    /// Waits until the driver `arn` has entered more than `after` states (it resumed).
    pub async fn wait_resumed(&self, arn: &str, after: usize) {
        let resumed = poll(300, || async {
            (entered_states(&self.sfn, arn).await.len() > after).then_some(())
        })
        .await;
        assert!(resumed.is_some(), "{arn} never resumed\n{}", self.logs());
    }

    /// TPF's record status straight from DynamoDB, as `tpf-sfn status` reports it.
    pub fn stored_status(&self, id: &str) -> String {
        let o = tpf_sfn()
            .args(["status", "--out", utf8(&self.releases[0].out)])
            .args(["--tenant", TENANT, "--execution", id])
            .args([
                "--execution-table",
                &format!("{}tpf_execution", self.prefix),
            ])
            .args(["--format", "json"])
            .args(["--endpoint-url", &self.endpoint, "--region", "us-east-1"])
            .output()
            .expect("run tpf-sfn status");
        let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        report["record"]["status"].as_str().unwrap_or("").to_owned()
    }

    /// Every driver execution on every deployed release machine, oldest first: (name, states
    /// entered in order, early wakes dropped; see `driver_path`).
    pub async fn moto_generations(&self) -> Vec<(String, Vec<String>)> {
        self.moto_paths()
            .await
            .into_iter()
            .map(|(name, path)| (name, path.normalised))
            .collect()
    }

    /// Every driver execution on every deployed release machine, oldest first, with its path.
    pub async fn moto_paths(&self) -> Vec<(String, DriverPath)> {
        let mut all = Vec::new();
        for r in &self.releases {
            let list = self
                .sfn
                .list_executions()
                .state_machine_arn(format!("{MACHINE_ARN}{}", r.driver))
                .send()
                .await
                .expect("list executions");
            for e in list.executions() {
                let started = e.start_date();
                all.push((
                    (started.secs(), started.subsec_nanos()),
                    e.name().to_owned(),
                    e.execution_arn().to_owned(),
                ));
            }
        }
        all.sort();
        let mut out = Vec::new();
        for (_, name, arn) in all {
            let path = driver_path(&self.sfn, &arn).await;
            if path.early_wakes > 0 {
                println!("{name}: {} early wake(s) on moto dropped", path.early_wakes);
            }
            out.push((name, path));
        }
        out
    }

    /// How many times driver `arn` left the await state: one per resume.
    pub async fn await_exits(&self, arn: &str) -> usize {
        let history = self
            .sfn
            .get_execution_history()
            .execution_arn(arn)
            .max_results(1000)
            .send()
            .await
            .expect("history");
        history
            .events()
            .iter()
            .filter_map(|e| e.state_exited_event_details())
            .filter(|d| d.name() == AWAIT)
            .count()
    }

    /// The same scenario in our interpreter, on the same compiled driver.
    pub fn simulate(&self) -> Run {
        let run = scenario::run(&self.subject, &self.scenario, proof::SEED).expect("simulate");
        assert!(
            run.unmet.is_empty(),
            "the interpreter run misses its own expectations: {:?}",
            run.unmet
        );
        run
    }

    /// Fails unless TPF's record of `id` (in DynamoDB) ended where the interpreter's did, after
    /// as many transitions: a duplicated or lost transition changes `version`.
    pub async fn assert_same_record(&self, id: &str, sim: &Run) {
        assert_eq!(
            self.record_summary(id).await,
            interpreter_record(sim),
            "TPF's record of {id}: loop on moto (left) vs interpreter (right)"
        );
    }

    /// The fields of TPF's record of `id` that `interpreter_record` gives for the interpreter.
    pub async fn record_summary(&self, id: &str) -> Value {
        let record = self.record(id).await;
        ["status", "stepIndex", "attempt", "version", "errorCode"]
            .iter()
            .map(|k| (k.to_string(), record[*k].clone()))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// The interpreter's run of another scenario of the same matrix.
    pub fn simulate_other(&self, name: &str) -> Run {
        let other = matrix::derive(&self.subject)
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario `{name}`"));
        scenario::run(&self.subject, &other, proof::SEED).expect("simulate")
    }

    /// Fails unless moto's driver executions entered the same states, in the same order, as
    /// the interpreter's for the same scenario (generation by generation, oldest first).
    pub async fn cross_check(&self, sim: &Run) -> Vec<(String, Vec<String>)> {
        match self.compare(sim).await {
            Ok(generations) => generations,
            Err(why) => panic!("{why}"),
        }
    }

    /// `cross_check` without the panic: `Err` describes the disagreement.
    pub async fn compare(&self, sim: &Run) -> Result<Vec<(String, Vec<String>)>, String> {
        let paths = self.moto_paths().await;
        let on_moto: Vec<(String, Vec<String>)> = paths
            .iter()
            .map(|(n, p)| (n.clone(), p.normalised.clone()))
            .collect();
        let moto: Vec<&Vec<String>> = on_moto.iter().map(|(_, s)| s).collect();
        let interp = interpreter_generations(sim);
        let interp: Vec<&Vec<String>> = interp.iter().collect();
        if moto != interp {
            // Everything moto recorded, for the disagreement's write-up.
            let mut raw = String::new();
            for (name, _) in &on_moto {
                for r in &self.releases {
                    let arn = format!("{EXECUTION_ARN}{}:{name}", r.driver);
                    let history = self
                        .sfn
                        .get_execution_history()
                        .execution_arn(&arn)
                        .max_results(1000)
                        .send()
                        .await;
                    for e in history.iter().flat_map(|h| h.events()) {
                        let detail = e
                            .state_entered_event_details()
                            .map(|d| d.name().to_owned())
                            .or_else(|| {
                                e.task_failed_event_details()
                                    .and_then(|d| d.error().map(str::to_owned))
                            })
                            .unwrap_or_default();
                        raw.push_str(&format!("  {name} {:?} {detail}\n", e.r#type()));
                    }
                }
            }
            return Err(format!(
                "driver states entered per generation differ\n moto: {moto:?}\n ours: {interp:?}\nmoto's history:\n{raw}\n{}",
                self.logs()
            ));
        }
        // Same states; now the same data in them: the driver's counters and TPF's answers.
        for ((name, path), ours) in paths.iter().zip(interpreter_inputs(sim)) {
            let exact = path.early_wakes == 0;
            for (i, (theirs, ours)) in path.inputs.iter().zip(&ours).enumerate() {
                let (a, b) = (digest(theirs, exact), digest(ours, exact));
                if a != b {
                    return Err(format!(
                        "{name}: the input of state #{i} ({}) differs\n moto: {a}\n ours: {b}",
                        path.normalised[i]
                    ));
                }
            }
        }
        Ok(on_moto)
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

/// TPF's `ExecutionStatusDto` for `id`, from the host at `addr`.
pub async fn record(addr: SocketAddr, id: &str) -> Value {
    request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{TENANT}/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await
    .body
}

/// Submits an order to the host at `addr`; returns TPF's execution id.
pub async fn submit(addr: SocketAddr, pipeline_id: &str, key: &str) -> String {
    let r = support::http::submit(addr, TOKEN, TENANT, pipeline_id, key).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.body["executionId"].as_str().expect("id").to_owned()
}

pub async fn pending_interaction(addr: SocketAddr, id: &str) -> Option<String> {
    let r = request(
        addr,
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

pub async fn complete_interaction(addr: SocketAddr, interaction: &str) -> Value {
    let body = json!({
        "interactionId": interaction, "responsePayload": {"decision": "accepted"}, "actor": "chef"
    })
    .to_string();
    let r = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{TENANT}/interactions/complete"),
        Some(TOKEN),
        Some(&body),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.body
}

/// Names of the states the driver entered, in order; empty until the bridge has started it.
pub async fn entered_states(sfn: &aws_sdk_sfn::Client, arn: &str) -> Vec<String> {
    driver_path(sfn, arn).await.states
}
