//! The gateway loop on moto, as a user runs its pieces: `tables create` (TPF's tables and the
//! callback-binding table), `compile --binding gateway` with the queue transport, `deploy`,
//! then `serve` (TPF's gateway over the model on DynamoDB, running TPF's work function) and
//! `relay --protocol gateway` as child processes. The gateway wake-up and the reconciler run in
//! the test as `tpf-sfn dev` runs them: the wake-up function's per-record work on the real
//! streams of TPF's await-interaction table and of the binding table
//! (`tpf_sfn_wakepath::gateway::local::StreamMapping`), the reconciler on the drivers' ended
//! executions (`StatusChanges`). Drivers start through TPF's ingress (the starter), under TPF's
//! execution names.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_sfn::types::{ExecutionStatus, HistoryEvent};
use serde_json::{json, Value};
use tpf_sfn::aws::tables::TableNames;
use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::HttpInvoker;
use tpf_sfn_wakepath::gateway::local::{StatusChanges, StreamMapping};
use tpf_sfn_wakepath::gateway::provider::Providers;
use tpf_sfn_wakepath::gateway::reads::AwsHost;
use tpf_sfn_wakepath::gateway::reconciler::{Reconciled, Reconciler};
use tpf_sfn_wakepath::gateway::starter::Starter;
use tpf_sfn_wakepath::gateway::wakeup::{system_now_ms, Wakeup};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{ActionRequest, Operation};

use super::http::request;
pub use super::{free_port, Reaped};

pub const TOKEN: &str = "gateway-e2e-token";
pub const TENANT: &str = "t1";
const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-gateway-e2e";
const MACHINE_ARN: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:";
/// The gateway's numbered version the driver is compiled against. On moto nothing invokes it:
/// the queue transport's relay carries each request to `serve`'s gateway route.
const GATEWAY_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:1";
const CONTRACT: &str = "restaurant-approval-current.pipeline-contract.json";
const RELEASE: &str = "restaurant-approval-current.pipeline-release.json";
pub use tpf_sfn_compiler::sfn::states::gateway as states;

/// How a test wants the loop.
#[derive(Default)]
pub struct GatewayOptions {
    /// The await's deadline in seconds instead of the contract's 30 minutes: the contract is
    /// today's Restaurant Approval with `deferredCompletion.timeout` changed, re-fingerprinted
    /// and re-hashed as TPF's build writes them (and the release pinned to the new hash).
    pub await_seconds: Option<u64>,
    /// The worker's script (`serve --script`).
    pub script: Option<&'static str>,
    /// Leave the gateway wake-up off for the whole run (TPF's missed-stream-record injection).
    pub no_wakeup: bool,
    /// More of the driver configuration (a `[sweeper]` table).
    pub extra_config: &'static str,
}

/// A background task that ends with the test.
struct Aborted(tokio::task::JoinHandle<()>);

impl Drop for Aborted {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub struct GatewayLoop {
    pub endpoint: String,
    pub config: aws_config::SdkConfig,
    pub sfn: aws_sdk_sfn::Client,
    pub ddb: aws_sdk_dynamodb::Client,
    dir: tempfile::TempDir,
    pub prefix: String,
    pub names: TableNames,
    name_prefix: String,
    pub queue_url: String,
    pub out: PathBuf,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub machine_arn: String,
    pub addr: SocketAddr,
    children: Vec<Reaped>,
    tasks: Vec<Aborted>,
    /// The configuration compiled, for our interpreter's run of the same driver.
    config_text: String,
    /// What the reconciler answered, per ended driver execution.
    pub reconciled: Arc<Mutex<Vec<(String, String)>>>,
}

pub fn cli() -> Command {
    let mut c = super::cli();
    c.env("TPF_SFN_TOKEN", TOKEN);
    c
}

fn run(args: &[&str]) -> String {
    let o = cli().args(args).output().expect("run tpf-sfn");
    assert!(
        o.status.success(),
        "tpf-sfn {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Polls `probe` every 200 ms for at most `seconds`; `None` when it never answered.
pub async fn poll<T, F, Fut>(seconds: u64, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..seconds * 5 {
        if let Some(v) = probe().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// Today's Restaurant Approval with its await's deadline set to `seconds`, hashed as TPF's
/// build hashes it; the release pinned to it.
fn short_deadline(dir: &Path, contract: &[u8], release: &[u8], seconds: u64) -> (PathBuf, PathBuf) {
    use tpf_sfn_compiler::contract::{contract_hash, contract_version, deferred_fingerprint};
    let mut doc: serde_json::Map<String, Value> =
        serde_json::from_slice(contract).expect("contract json");
    let steps = doc["steps"].as_array_mut().expect("steps");
    let mut changed = 0;
    for step in steps {
        if let Some(d) = step
            .get_mut("deferredCompletion")
            .and_then(Value::as_object_mut)
        {
            d.insert("timeout".into(), json!(format!("PT{seconds}S")));
            let fingerprint = deferred_fingerprint(d);
            d.insert("fingerprint".into(), json!(fingerprint));
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "Restaurant Approval has one await");
    let hash = contract_hash(&doc);
    let version = contract_version(&hash);
    doc.insert("contractHash".into(), json!(hash));
    doc.insert("contractVersion".into(), json!(version));
    let mut rel: Value = serde_json::from_slice(release).expect("release json");
    rel["contractVersion"] = json!(version);
    let (c, r) = (dir.join(CONTRACT), dir.join(RELEASE));
    std::fs::write(&c, Value::Object(doc).to_string()).expect("contract");
    std::fs::write(&r, rel.to_string()).expect("release");
    (c, r)
}

impl GatewayLoop {
    pub async fn start(options: GatewayOptions) -> GatewayLoop {
        let endpoint = super::moto_endpoint();
        let config = super::moto_config().await;
        let sfn = aws_sdk_sfn::Client::new(&config);
        let sqs = aws_sdk_sqs::Client::new(&config);
        let ddb = aws_sdk_dynamodb::Client::new(&config);
        let id = super::unique("gw");
        let prefix = format!("{}_", id.replace('-', "_"));
        let names = TableNames::with_prefix(&prefix);
        let conn = ["--endpoint-url", endpoint.as_str(), "--region", "us-east-1"];
        let mut args = vec!["tables", "create", "--prefix", &prefix];
        args.extend(conn);
        run(&args);
        let queue_url = sqs
            .create_queue()
            .queue_name(&id)
            .send()
            .await
            .expect("queue")
            .queue_url()
            .expect("queue url")
            .to_owned();

        let dir = tempfile::tempdir().expect("tempdir");
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
        let (contract, release) = match options.await_seconds {
            None => (examples.join(CONTRACT), examples.join(RELEASE)),
            Some(s) => short_deadline(
                dir.path(),
                &std::fs::read(examples.join(CONTRACT)).expect("contract"),
                &std::fs::read(examples.join(RELEASE)).expect("release"),
                s,
            ),
        };
        let cfg = dir.path().join("tpf-sfn.toml");
        let config_text = format!(
            "name-prefix = \"{id}\"\n[binding]\nkind = \"gateway\"\n[binding.gateway]\n\
             function-arn = \"{GATEWAY_ARN}\"\ntransport = \"queue\"\nqueue-url = \"{queue_url}\"\n{}",
            options.extra_config
        );
        std::fs::write(&cfg, &config_text).expect("config");
        let out = dir.path().join("release");
        run(&[
            "compile",
            utf8(&contract),
            "--release",
            utf8(&release),
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
        let text = |v: &Value| v.as_str().expect("manifest string").to_owned();
        let driver = text(&manifest["machines"]["driver"]["name"]);
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");

        let mut lp = GatewayLoop {
            endpoint,
            sfn,
            ddb,
            prefix,
            names,
            name_prefix: id,
            queue_url,
            pipeline_id: text(&manifest["identity"]["pipelineId"]),
            contract_version: text(&manifest["identity"]["contractVersion"]),
            release_version: text(&manifest["identity"]["releaseVersion"]),
            machine_arn: format!("{MACHINE_ARN}{driver}"),
            out,
            addr,
            children: Vec::new(),
            tasks: Vec::new(),
            config_text,
            reconciled: Arc::default(),
            config,
            dir,
        };
        let mut serve = vec![
            "serve".to_owned(),
            "--pipeline-contract".into(),
            utf8(&contract).into(),
            "--release".into(),
            utf8(&release).into(),
            "--listen".into(),
            addr.to_string(),
            "--store".into(),
            "dynamodb".into(),
            "--prefix".into(),
            lp.prefix.clone(),
            "--activate-tenant".into(),
            TENANT.into(),
            // Short retry delays: the driver's polls find TPF's retries due.
            "--retry-delay-ms".into(),
            "200".into(),
            "--retry-multiplier".into(),
            "1".into(),
        ];
        if let Some(s) = options.await_seconds {
            serve.extend(["--await-timeout-seconds".into(), s.to_string()]);
        }
        if let Some(script) = options.script {
            let path = lp.dir.path().join("script.toml");
            std::fs::write(&path, script).expect("script");
            serve.extend(["--script".into(), utf8(&path).into()]);
        }
        lp.spawn("serve", serve);
        lp.spawn(
            "relay",
            vec![
                "relay".into(),
                "--protocol".into(),
                "gateway".into(),
                "--queue-url".into(),
                lp.queue_url.clone(),
                "--action-url".into(),
                format!("http://{addr}"),
                "--wait-seconds".into(),
                "1".into(),
                "--idle-interval-ms".into(),
                "200".into(),
            ],
        );
        let up = poll(30, || async { std::net::TcpStream::connect(addr).ok() }).await;
        assert!(up.is_some(), "serve never listened\n{}", lp.logs());
        if !options.no_wakeup {
            lp.start_wakeup();
        }
        lp.start_reconciler();
        lp
    }

    fn spawn(&mut self, which: &str, mut args: Vec<String>) {
        args.extend([
            "--endpoint-url".into(),
            self.endpoint.clone(),
            "--region".into(),
            "us-east-1".into(),
        ]);
        let log = std::fs::File::create(self.dir.path().join(format!("{which}.log"))).expect("log");
        let child = cli()
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn tpf-sfn");
        self.children.push(Reaped(child));
    }

    pub fn logs(&self) -> String {
        ["serve", "relay"]
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

    /// The gateway host's reads and writes as the wake-up and reconciler make them (the tests
    /// also call TPF's gateway through it, as a driver would).
    pub fn host(&self) -> AwsHost<HttpInvoker> {
        AwsHost {
            gateway: HttpInvoker::with_token(
                &format!("http://{}", self.addr),
                Some(TOKEN.to_owned()),
                Duration::from_secs(30),
            )
            .expect("gateway url"),
            bindings: BindingTable::new(self.ddb.clone(), &self.names.callback_binding),
            providers: Providers {
                sfn: self.sfn.clone(),
                lambda: aws_sdk_lambda::Client::new(&self.config),
            },
        }
    }

    pub fn starter(&self) -> Starter {
        Starter {
            sfn: self.sfn.clone(),
            lambda: aws_sdk_lambda::Client::new(&self.config),
            machines: Machines {
                arn_prefix: MACHINE_ARN.to_owned(),
                name_prefix: self.name_prefix.clone(),
            },
            durable: DurableFunctions::default(),
        }
    }

    /// The wake-up on both streams, polled as `dev` polls them.
    fn start_wakeup(&mut self) {
        let wakeup = Wakeup {
            host: self.host(),
            starter: self.starter(),
            now_ms: system_now_ms,
        };
        let mut mapping = StreamMapping::new(
            &self.config,
            vec![
                self.names.await_interaction.clone(),
                self.names.callback_binding.clone(),
            ],
        );
        self.tasks.push(Aborted(tokio::spawn(async move {
            loop {
                if let Err(e) = mapping.poll_once(&wakeup).await {
                    eprintln!("wake-up pass: {}", e.report());
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })));
    }

    /// The reconciler on the drivers' ended executions.
    fn start_reconciler(&mut self) {
        let reconciler = Reconciler {
            host: self.host(),
            starter: self.starter(),
        };
        let mut changes = StatusChanges::new(&self.config, vec![self.machine_arn.clone()]);
        let seen = self.reconciled.clone();
        self.tasks.push(Aborted(tokio::spawn(async move {
            loop {
                if let Ok(handled) = changes.poll_once(&reconciler).await {
                    let mut seen = seen.lock().expect("reconciled");
                    for (arn, result) in handled {
                        let what = match result {
                            Ok(Reconciled::Nothing(q)) => format!("nothing: {q:?}"),
                            Ok(Reconciled::Started(name)) => format!("started {name}"),
                            Ok(Reconciled::NotAStatusChange) => "not a status change".into(),
                            Err(e) => format!("retry: {}", e.code()),
                        };
                        seen.push((arn, what));
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })));
    }

    /// Generation 1's input for the idempotency key `key`.
    pub fn input(&self, key: &str) -> ExecutionInput {
        ExecutionInput::new(
            Some(TENANT),
            Some(key),
            self.release(),
            Some(r#"{"orderId":"o-1","customerId":"c-1","items":["soup"]}"#),
            None,
            1,
        )
        .expect("TPF's input rules")
    }

    pub fn release(&self) -> ReleaseIdentity<'_> {
        ReleaseIdentity {
            pipeline_id: Some(&self.pipeline_id),
            contract_version: Some(&self.contract_version),
            release_version: Some(&self.release_version),
        }
    }

    /// Starts `input`'s generation through TPF's ingress; returns the driver's ARN.
    pub async fn start_driver(&self, input: &ExecutionInput) -> String {
        let started = self.starter().start(input).await.expect("start");
        assert_eq!(
            started.durable_execution_name,
            input.durable_execution_name()
        );
        format!(
            "{}:{}",
            self.machine_arn.replace(":stateMachine:", ":execution:"),
            started.durable_execution_name
        )
    }

    /// Every history event of `arn`.
    pub async fn history(&self, arn: &str) -> Vec<HistoryEvent> {
        let mut events = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let Ok(page) = self
                .sfn
                .get_execution_history()
                .execution_arn(arn)
                .set_next_token(next.take())
                .send()
                .await
            else {
                return events;
            };
            events.extend(page.events().iter().cloned());
            match page.next_token() {
                Some(t) => next = Some(t.to_owned()),
                None => return events,
            }
        }
    }

    /// The states `arn` entered, in order.
    pub async fn entered(&self, arn: &str) -> Vec<String> {
        self.history(arn)
            .await
            .iter()
            .filter_map(|e| e.state_entered_event_details().map(|d| d.name().to_owned()))
            .collect()
    }

    /// TPF's execution id, from the driver's first gateway answer that carries a checkpoint.
    pub async fn execution_id(&self, arn: &str) -> String {
        let id = poll(60, || async {
            self.history(arn).await.iter().find_map(|e| {
                let out: Value =
                    serde_json::from_str(e.task_succeeded_event_details()?.output()?).ok()?;
                out["checkpoint"]["executionId"].as_str().map(str::to_owned)
            })
        })
        .await;
        id.unwrap_or_else(|| panic!("{arn} never got a checkpoint\n{}", self.logs()))
    }

    /// Every gateway request the driver sent (the queue messages' `gatewayRequest`, from the
    /// history's scheduled tasks), each read by TPF's gateway reader: a request it refuses fails
    /// the test.
    pub async fn requests(&self, arn: &str) -> Vec<ActionRequest> {
        self.history(arn)
            .await
            .iter()
            .filter_map(|e| e.task_scheduled_event_details())
            .map(|d| {
                let parameters: Value =
                    serde_json::from_str(d.parameters()).expect("task parameters");
                let body = &parameters["MessageBody"];
                let body: Value = match body {
                    Value::String(s) => serde_json::from_str(s).expect("message body"),
                    other => other.clone(),
                };
                let text = body["gatewayRequest"].to_string();
                ActionRequest::read(&text)
                    .unwrap_or_else(|e| panic!("TPF's gateway refuses {text}: {e:?}"))
            })
            .collect()
    }

    /// Waits until the driver `arn` is parked and TPF's record of `id` waits on its await.
    pub async fn wait_parked(&self, arn: &str, id: &str) {
        let parked = poll(120, || async {
            let entered = self.entered(arn).await;
            (entered.last().map(String::as_str) == Some(states::PARK)
                && self.record(id).await["status"] == "WAITING_EXTERNAL"
                && self.registration(id, 1).await.is_some()
                    | self.registration(id, 2).await.is_some())
            .then_some(())
        })
        .await;
        assert!(parked.is_some(), "{arn} never parked\n{}", self.logs());
    }

    /// Waits until the driver ends; returns its description's status, error and cause, output.
    pub async fn wait_ended(&self, arn: &str) -> (ExecutionStatus, Value) {
        let ended = poll(240, || async {
            let d = self
                .sfn
                .describe_execution()
                .execution_arn(arn)
                .send()
                .await
                .ok()?;
            (d.status() != &ExecutionStatus::Running).then(|| {
                (
                    d.status().clone(),
                    json!({
                        "error": d.error(),
                        "cause": d.cause(),
                        "output": d.output().and_then(|o| serde_json::from_str::<Value>(o).ok()),
                    }),
                )
            })
        })
        .await;
        ended.unwrap_or_else(|| panic!("{arn} never ended\n{}", self.logs()))
    }

    /// TPF's `ExecutionStatusDto` for `id`.
    pub async fn record(&self, id: &str) -> Value {
        super::http::execution_record(self.addr, TOKEN, TENANT, id).await
    }

    /// Waits until TPF's record of `id` has `status`.
    pub async fn wait_record(&self, id: &str, status: &str) -> Value {
        let r = poll(240, || async {
            let r = self.record(id).await;
            (r["status"] == status).then_some(r)
        })
        .await;
        r.unwrap_or_else(|| panic!("{id} never {status}\n{}", self.logs()))
    }

    pub async fn pending(&self, id: &str) -> Option<String> {
        super::http::pending_interaction(self.addr, TOKEN, TENANT, id).await
    }

    pub async fn complete(&self, interaction: &str) -> Value {
        super::http::complete_interaction(self.addr, TOKEN, TENANT, interaction).await
    }

    pub async fn redrive(&self, id: &str) -> Value {
        let r = request(
            self.addr,
            "POST",
            &format!("/tpf/admin/tenants/{TENANT}/executions/{id}/redrive"),
            Some(TOKEN),
            Some(r#"{"allowFailed": true}"#),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.raw);
        r.body
    }

    async fn row(&self, pk: &str, sk: &str) -> Option<HashMap<String, AttributeValue>> {
        self.ddb
            .get_item()
            .table_name(&self.names.callback_binding)
            .key("pk", AttributeValue::S(pk.into()))
            .key("sk", AttributeValue::S(sk.into()))
            .consistent_read(true)
            .send()
            .await
            .expect("get binding row")
            .item()
            .cloned()
    }

    /// The REGISTRATION row of (`id`, `generation`).
    pub async fn registration(
        &self,
        id: &str,
        generation: i64,
    ) -> Option<HashMap<String, AttributeValue>> {
        use tpf_wire::gateway::names;
        self.row(
            &names::registration_partition_key(TENANT, id),
            &names::registration_sort_key(generation).expect("sort key"),
        )
        .await
    }

    /// The BINDING row of (`interaction`, `generation`).
    pub async fn binding(
        &self,
        interaction: &str,
        generation: i64,
    ) -> Option<HashMap<String, AttributeValue>> {
        use tpf_wire::gateway::names;
        self.row(
            &names::binding_partition_key(TENANT, interaction),
            &names::generation_sort_key(generation).expect("sort key"),
        )
        .await
    }

    /// The DELIVERY row of (`interaction`, `generation`).
    pub async fn delivery(
        &self,
        interaction: &str,
        generation: i64,
    ) -> Option<HashMap<String, AttributeValue>> {
        use tpf_wire::gateway::names;
        self.row(
            &names::binding_partition_key(TENANT, interaction),
            &names::delivered_sort_key(generation),
        )
        .await
    }

    /// The driver's gateway operations in our interpreter's run of TPF's scenario `name` (the
    /// gateway world, the driver compiled with the same configuration on our Step Functions
    /// engine), poll cycles collapsed; the run must pass its own assertions and checks. The
    /// world times its scenarios against the contract's own 30-minute deadline (its work
    /// function takes minutes), so the driver is compiled from today's Restaurant Approval as
    /// published; a shortened deadline changes the park's timeout, not the calls.
    pub fn interpreter_operations(&self, name: &str) -> Vec<Operation> {
        use tpf_sfn_compiler::compile::Input;
        use tpf_sfn_compiler::config::BindingKind;
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
        let contract = std::fs::read(examples.join(CONTRACT)).expect("contract");
        let release = std::fs::read(examples.join(RELEASE)).expect("release");
        let subject = tpf_sfn_mapping::sfn::gateway_proof::subject(
            &Input {
                contract_file: CONTRACT,
                contract: &contract,
                release: Some((RELEASE, &release)),
                config: Some(("tpf-sfn.toml", &self.config_text)),
                binding: Some(BindingKind::Gateway),
                allow_unverified_hash: false,
            },
            None,
        )
        .expect("compiles");
        let info = tpf_sfn_mapping::gateway::catalogue::scenario(name).expect("TPF's scenario");
        let (report, trace) = subject.run_one(info).expect("the engine runs the driver");
        assert!(report.passed(), "{name} in our interpreter: {report:?}");
        collapse(trace.invocations.iter().filter_map(|i| i.operation))
    }

    /// Every row of the binding table, as (pk, sk, record_type).
    pub async fn binding_rows(&self) -> Vec<(String, String, String)> {
        let items = self
            .ddb
            .scan()
            .table_name(&self.names.callback_binding)
            .consistent_read(true)
            .send()
            .await
            .expect("scan binding table");
        let s = |i: &HashMap<String, AttributeValue>, k: &str| {
            i.get(k)
                .and_then(|v| v.as_s().ok())
                .cloned()
                .unwrap_or_default()
        };
        let mut rows: Vec<_> = items
            .items()
            .iter()
            .map(|i| (s(i, "pk"), s(i, "sk"), s(i, "record_type")))
            .collect();
        rows.sort();
        rows
    }
}

/// A text attribute of a row.
pub fn text(row: &HashMap<String, AttributeValue>, name: &str) -> String {
    row.get(name)
        .and_then(|v| v.as_s().ok().or_else(|| v.as_n().ok()))
        .cloned()
        .unwrap_or_default()
}

/// A driver's operations with every run of SWEEP and STATUS polls between two other calls
/// collapsed to one round: how many polls a wait takes depends on timing (moto's clock, the
/// world's work delay), what the driver does between them does not. Operations other drivers' pieces
/// send (the wake-up's and reconciler's reads) are left out.
pub fn collapse(ops: impl IntoIterator<Item = Operation>) -> Vec<Operation> {
    let mut out: Vec<Operation> = Vec::new();
    // The poll rounds since the last other call: any number of them is one round, SWEEP then
    // STATUS when one of them swept (a driver that sweeps on a schedule polls STATUS alone).
    let mut swept = false;
    let mut polled = false;
    let flush = |out: &mut Vec<Operation>, swept: &mut bool, polled: &mut bool| {
        if *swept {
            out.push(Operation::Sweep);
        }
        if *polled {
            out.push(Operation::Status);
        }
        (*swept, *polled) = (false, false);
    };
    for op in ops {
        match op {
            Operation::Sweep => swept = true,
            Operation::Status => polled = true,
            Operation::Submit | Operation::RegisterCallback | Operation::Result => {
                flush(&mut out, &mut swept, &mut polled);
                out.push(op);
            }
            _ => {}
        }
    }
    flush(&mut out, &mut swept, &mut polled);
    out
}
