//! The gateway protocol's durable loop on the emulator: today's Restaurant Approval compiled
//! with `[binding] kind = "gateway"` for Lambda durable functions, its driver function run by
//! the emulator; TPF's action gateway answered by `serve`'s gateway route (over moto's
//! DynamoDB: TPF's tables and its callback-binding table), reached through the shim as a
//! synchronous Lambda `Invoke` of the gateway's numbered version; generations started by TPF's
//! ingress (`tpf_sfn_wakepath::gateway::starter`); and the gateway host's wake-up handler
//! (invoking the gateway by its numbered version through the shim, as deployed)
//! (`tpf_sfn_lambda::gateway::wakeup_batch`) fed by [`Pump`], which reads the interaction
//! table's and the binding table's streams on moto as Lambda's event source mappings do.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue as Ddb;
use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use serde_json::{json, Map, Value};
use tpf_durable_driver::spec::Binding;
use tpf_sfn_compiler::contract::hash::{contract_hash, contract_version};
use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::{Gateway, LambdaInvoker};
use tpf_sfn_wakepath::gateway::provider::Providers;
use tpf_sfn_wakepath::gateway::reads::AwsHost;
use tpf_sfn_wakepath::gateway::starter::Starter;
use tpf_sfn_wakepath::gateway::wakeup::Wakeup;
use tpf_wire::gateway::binding::TABLE as BINDING_TABLE;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};

use super::shim::{Deployed, GatewayRoute, Shim};
use super::{
    bootstrap, compile_durable, free_port, root, tables, tools, write_script, AbortOnDrop,
    Emulated, TENANT, TOKEN,
};
use crate::support;
use crate::support::streams::lambda_record;

const CONTRACT: &str = "restaurant-approval-current.pipeline-contract.json";
const RELEASE: &str = "restaurant-approval-current.pipeline-release.json";
const ACCOUNT: &str = "arn:aws:lambda:us-east-1:123456789012:function:";
/// Where Step Functions machines would be: the starter's other branch, unused here.
const MACHINE_ARN: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:";

#[derive(Default)]
pub struct GatewayOptions {
    /// Another example contract, of August's form (no release descriptor: its release is its
    /// contract version, as in TPF), instead of today's Restaurant Approval.
    pub contract: Option<&'static str>,
    /// The await's deadline in seconds instead of the contract's 30 minutes: the contract is
    /// today's Restaurant Approval with that one value changed, rehashed by TPF's recipe (and
    /// its release descriptor pinned to the new version), so the compiled park timeout and
    /// TPF's own deadline both follow it.
    pub deadline_seconds: Option<u64>,
    /// `serve`'s failure script: per step, outcomes by attempt.
    pub script: Vec<Value>,
    /// Run the wake-up (off: every wake-up is lost).
    pub wakeup: bool,
    /// More of the driver configuration (a `[sweeper]` table).
    pub extra_config: &'static str,
}

pub struct GatewayLoop {
    base: Emulated,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    /// The driver function's name (the starter invokes it with the durable execution name).
    pub function: String,
    /// TPF's gateway, the numbered version the driver's spec names.
    pub gateway_arn: String,
    /// The park timeout the compiler put in the spec.
    pub longest_await_seconds: u64,
    pub binding_table: String,
    pub starter: Starter,
    pub providers: Providers,
    wakeup: Arc<Wakeup<Gateway>>,
    pump: Option<Pump>,
}

impl std::ops::Deref for GatewayLoop {
    type Target = Emulated;
    fn deref(&self) -> &Emulated {
        &self.base
    }
}

impl std::ops::DerefMut for GatewayLoop {
    fn deref_mut(&mut self) -> &mut Emulated {
        &mut self.base
    }
}

/// Today's contract with its await's deadline set to `seconds`, rehashed, and its release
/// descriptor pinned to the new contract version.
fn with_deadline(contract: &[u8], release: &[u8], seconds: u64) -> (Vec<u8>, Vec<u8>) {
    let mut doc: Map<String, Value> = serde_json::from_slice(contract).expect("contract");
    let mut changed = 0;
    for step in doc["steps"].as_array_mut().expect("steps") {
        if let Some(d) = step.get_mut("deferredCompletion") {
            d["timeout"] = json!(format!("PT{seconds}S"));
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "one await in the restaurant contract");
    let hash = contract_hash(&doc);
    doc.insert("contractHash".into(), json!(hash));
    doc.insert("contractVersion".into(), json!(contract_version(&hash)));
    let mut rel: Value = serde_json::from_slice(release).expect("release");
    rel["contractVersion"] = json!(contract_version(&hash));
    (
        serde_json::to_vec_pretty(&doc).expect("contract"),
        serde_json::to_vec_pretty(&rel).expect("release"),
    )
}

impl GatewayLoop {
    pub async fn start(options: GatewayOptions) -> GatewayLoop {
        let tools = tools().clone();
        let bootstrap = bootstrap().clone();
        let endpoint = support::moto_endpoint();
        let config = support::moto_config().await;
        let (id, prefix) = tables();
        let dir = tempfile::tempdir().expect("tempdir");

        let examples = root().join("examples/contracts");
        let function = format!("{id}-driver");
        let gateway_arn = format!("{ACCOUNT}{id}-gateway:1");
        let config_text = format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{gateway_arn}\"\n\
             starter-function-arn = \"{ACCOUNT}{id}-starter:1\"\n{}",
            options.extra_config
        );
        let (contract_file, releases, compiled) = match options.contract {
            Some(name) => {
                let contract = std::fs::read(examples.join(name)).expect("contract");
                let file = dir.path().join(name);
                std::fs::write(&file, &contract).expect("contract");
                let compiled = compile_durable((name, &contract), None, &config_text);
                (file, Vec::new(), compiled)
            }
            None => {
                let mut contract = std::fs::read(examples.join(CONTRACT)).expect("contract");
                let mut release = std::fs::read(examples.join(RELEASE)).expect("release");
                if let Some(seconds) = options.deadline_seconds {
                    (contract, release) = with_deadline(&contract, &release, seconds);
                }
                let file = dir.path().join(CONTRACT);
                let release_file = dir.path().join(RELEASE);
                std::fs::write(&file, &contract).expect("contract");
                std::fs::write(&release_file, &release).expect("release");
                let compiled = compile_durable(
                    (CONTRACT, &contract),
                    Some((RELEASE, &release)),
                    &config_text,
                );
                (file, vec![release_file], compiled)
            }
        };
        let spec = compiled.durable.spec.clone();
        let Binding::Gateway {
            function_arn,
            longest_await_seconds,
            ..
        } = &spec.binding;
        assert_eq!(function_arn, &gateway_arn);
        let identity = spec.identity.clone();

        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let dex: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let watch_port = free_port();
        let shim = Shim::start(
            "127.0.0.1:0".parse().expect("addr"),
            dex,
            BTreeMap::from([
                (
                    function.clone(),
                    Deployed {
                        lambda_endpoint: format!("http://127.0.0.1:{watch_port}"),
                    },
                ),
                // What `cargo lambda watch` reports as the invoked function ARN: a hand-over
                // starts the next generation on the version that runs it.
                (
                    super::shim::INVOKED_FUNCTION_ARN.to_owned(),
                    Deployed {
                        lambda_endpoint: format!("http://127.0.0.1:{watch_port}"),
                    },
                ),
            ]),
            Some(GatewayRoute {
                function_arn: gateway_arn.clone(),
                serve: addr,
                token: TOKEN.to_owned(),
            }),
        )
        .await
        .unwrap_or_else(|e| panic!("{}", e.report()));

        let ddb = aws_sdk_dynamodb::Client::new(&config);
        let lambda = aws_sdk_lambda::Client::from_conf(
            aws_sdk_lambda::config::Builder::from(&config)
                .endpoint_url(&shim.url)
                .build(),
        );
        let sfn = aws_sdk_sfn::Client::new(&config);
        let mut by_release = Map::new();
        by_release.insert(
            format!("{}@{}", identity.pipeline_id, identity.release_version),
            json!(function),
        );
        let durable = DurableFunctions::parse(&Value::Object(by_release).to_string())
            .expect("durable functions");
        let starter = Starter {
            sfn: sfn.clone(),
            lambda: lambda.clone(),
            machines: Machines {
                arn_prefix: MACHINE_ARN.into(),
                name_prefix: "tpf".into(),
            },
            durable,
        };
        let providers = Providers {
            sfn,
            lambda: lambda.clone(),
        };
        let binding_table = format!("{prefix}{BINDING_TABLE}");
        let host = AwsHost {
            // As deployed: the gateway's numbered version, invoked through Lambda (the shim).
            gateway: Gateway::Lambda(
                LambdaInvoker::new(lambda.clone(), &gateway_arn).expect("numbered version"),
            ),
            bindings: BindingTable::new(ddb.clone(), &binding_table),
            providers: providers.clone(),
        };
        let wakeup = Arc::new(tpf_sfn_lambda::gateway::wakeup(host, starter.clone()));

        let mut base = Emulated {
            endpoint,
            ddb,
            dir,
            prefix: prefix.clone(),
            addr,
            dex,
            shim,
            children: BTreeMap::new(),
        };
        let script = base.dir.path().join("script.toml");
        write_script(&script, &options.script);
        base.spawn_serve(&contract_file, &releases, &script, &[]);
        base.spawn_dex(&tools);
        base.spawn_watch(&tools, 0, watch_port);
        base.wait_listening(addr, "serve").await;
        base.wait_listening(dex, "dex-local-runner").await;
        let a: SocketAddr = format!("127.0.0.1:{watch_port}").parse().expect("addr");
        base.wait_listening(a, "watch-0").await;
        let spec_text = compiled.durable.spec_text.clone();
        base.start_bootstrap(&bootstrap, 0, watch_port, &function, &spec_text, &[]);

        let mut this = GatewayLoop {
            base,
            pipeline_id: identity.pipeline_id,
            contract_version: identity.contract_version,
            release_version: identity.release_version,
            function,
            gateway_arn,
            longest_await_seconds: *longest_await_seconds,
            binding_table,
            starter,
            providers,
            wakeup,
            pump: None,
        };
        if options.wakeup {
            this.start_wakeup(&config, &prefix);
        }
        this
    }

    fn start_wakeup(&mut self, config: &aws_config::SdkConfig, prefix: &str) {
        let names = tpf_sfn_wakepath::aws::table_names::TableNames::with_prefix(prefix);
        self.pump = Some(Pump::start(
            self.wakeup.clone(),
            aws_sdk_dynamodbstreams::Client::new(config),
            self.ddb.clone(),
            vec![names.await_interaction, names.callback_binding],
            self.dir.path().join("wakeup.log"),
        ));
    }

    /// Generation 1's input: TPF's `AwsDurableExecutionInput` for the client's `key`.
    pub fn input(&self, key: &str) -> ExecutionInput {
        ExecutionInput::new(
            Some(TENANT),
            Some(key),
            self.release(),
            Some(r#"{"orderId":"order-1","restaurantId":"r-1"}"#),
            None,
            1,
        )
        .expect("input")
    }

    pub fn release(&self) -> ReleaseIdentity<'_> {
        ReleaseIdentity {
            pipeline_id: Some(&self.pipeline_id),
            contract_version: Some(&self.contract_version),
            release_version: Some(&self.release_version),
        }
    }

    /// Starts `input`'s generation through TPF's ingress; the durable execution's ARN.
    pub async fn start_generation(&self, input: &ExecutionInput) -> String {
        let started = self
            .starter
            .start(input)
            .await
            .unwrap_or_else(|e| panic!("{}\n{}", e.report(), self.logs()));
        assert_eq!(
            started.durable_execution_name,
            input.durable_execution_name()
        );
        assert_eq!(started.status_code, 202);
        self.wait_started(&started.durable_execution_name).await
    }

    /// TPF's execution id, once the driver's SUBMIT answered it (every later request names it).
    pub async fn execution_id(&self) -> String {
        let deadline = Instant::now() + super::PATIENCE;
        while Instant::now() < deadline {
            let found = self.shim.gateway_exchanges().iter().find_map(|x| {
                let v: Value = serde_json::from_str(&x.request).ok()?;
                v["executionId"].as_str().map(str::to_owned)
            });
            if let Some(id) = found {
                return id;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "the driver never called TPF with an execution\n{}",
            self.logs()
        );
    }

    /// Every row of the binding table under `pk`, by sort key, as strings.
    pub async fn rows(&self, pk: &str) -> BTreeMap<String, BTreeMap<String, String>> {
        let out = self
            .ddb
            .query()
            .table_name(&self.binding_table)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", Ddb::S(pk.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .expect("Query");
        out.items()
            .iter()
            .map(|item| {
                let text: BTreeMap<String, String> = item
                    .iter()
                    .filter_map(|(k, v)| match v {
                        Ddb::S(s) | Ddb::N(s) => Some((k.clone(), s.clone())),
                        _ => None,
                    })
                    .collect();
                (text["sk"].clone(), text)
            })
            .collect()
    }

    /// Waits until generation `generation`'s driver `arn` registered its callback while TPF
    /// waits on the await; the REGISTRATION row.
    pub async fn wait_registered(
        &self,
        id: &str,
        arn: &str,
        generation: i64,
    ) -> BTreeMap<String, String> {
        let pk = tpf_wire::gateway::names::registration_partition_key(TENANT, id);
        let sk = tpf_wire::gateway::names::registration_sort_key(generation).expect("sk");
        let deadline = Instant::now() + super::PATIENCE;
        while Instant::now() < deadline {
            if let Some(row) = self.rows(&pk).await.remove(&sk) {
                assert_eq!(row["provider_execution_arn"], arn, "{row:?}");
                if self.record(id).await["status"] == "WAITING_EXTERNAL" {
                    return row;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{id} never registered {arn}\n{}", self.logs());
    }

    /// The BINDING and DELIVERY rows of `interaction`, by sort key.
    pub async fn binding_rows(
        &self,
        interaction: &str,
    ) -> BTreeMap<String, BTreeMap<String, String>> {
        self.rows(&tpf_wire::gateway::names::binding_partition_key(
            TENANT,
            interaction,
        ))
        .await
    }

    /// Waits until the wake-up wrote `interaction`'s DELIVERED row of `generation`; the row.
    pub async fn wait_delivered(
        &self,
        interaction: &str,
        generation: i64,
    ) -> BTreeMap<String, String> {
        let sk = tpf_wire::gateway::names::delivered_sort_key(generation);
        let deadline = Instant::now() + super::PATIENCE;
        while Instant::now() < deadline {
            if let Some(row) = self.binding_rows(interaction).await.remove(&sk) {
                return row;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no {sk} for {interaction}\n{}", self.logs());
    }

    /// What the wake-up did, batch by batch.
    pub fn wakeup_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("wakeup.log")).unwrap_or_default()
    }

    /// The wake-up's own send of a callback success to `callback_id` of the driver `arn`,
    /// outside any record: the provider's answer and how the wake-up classifies it.
    pub async fn send_again(
        &self,
        callback_id: &str,
        arn: &str,
    ) -> (
        tpf_sfn_wakepath::gateway::provider::Sent,
        tpf_sfn_wakeup::wake::SendOutcome,
    ) {
        let engine = self.providers.engine(arn).expect("engine");
        let sent = self.providers.send_success(engine, callback_id, "{}").await;
        let outcome = self
            .providers
            .send_outcome(engine, arn, &sent, callback_id)
            .await
            .unwrap_or_else(|e| panic!("{}", e.report()));
        (sent, outcome)
    }
}

/// Lambda's event source mappings on the two streams, in a test: every new record of each
/// stream handed to the wake-up handler in one batch per stream and poll; a record the
/// handler reports failed is handed over again, with every later one (a mapping with
/// `ReportBatchItemFailures` resumes from the first failed record), until acknowledged.
pub struct Pump {
    _task: AbortOnDrop,
}

impl Pump {
    fn start(
        wakeup: Arc<Wakeup<Gateway>>,
        streams: aws_sdk_dynamodbstreams::Client,
        ddb: aws_sdk_dynamodb::Client,
        tables: Vec<String>,
        log: PathBuf,
    ) -> Pump {
        let task = tokio::spawn(async move {
            let mut readers: Vec<StreamReader> = Vec::new();
            for table in &tables {
                readers.push(StreamReader::open(&ddb, table).await);
            }
            loop {
                for reader in &mut readers {
                    reader.pull(&streams).await;
                    if reader.pending.is_empty() {
                        continue;
                    }
                    let event: aws_lambda_events::event::dynamodb::Event =
                        serde_json::from_value(json!({ "Records": reader.pending }))
                            .expect("a Lambda DynamoDB event");
                    let batch =
                        tpf_sfn_lambda::gateway::wakeup_batch(wakeup.as_ref(), &event).await;
                    append(
                        &log,
                        &format!(
                            "{}: {} records, {} acknowledged, {} bound, {} delivered, {} replaced, retried {:?}\n",
                            reader.table,
                            reader.pending.len(),
                            batch.acknowledged,
                            batch.bound,
                            batch.delivered,
                            batch.replaced,
                            batch.retried
                        ),
                    );
                    let failed: Vec<String> = batch
                        .response
                        .batch_item_failures
                        .iter()
                        .filter_map(|f| f.item_identifier.clone())
                        .collect();
                    let first = reader.pending.iter().position(|r| {
                        r["dynamodb"]["SequenceNumber"]
                            .as_str()
                            .is_some_and(|s| failed.iter().any(|f| f == s))
                    });
                    match first {
                        Some(i) => reader.pending.drain(..i),
                        None => reader.pending.drain(..),
                    };
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Pump {
            _task: AbortOnDrop(task),
        }
    }
}

fn append(path: &Path, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// One table's stream, read shard by shard from its start.
struct StreamReader {
    table: String,
    arn: String,
    /// Per shard: the iterator to read next.
    iterators: BTreeMap<String, Option<String>>,
    /// Records read and not yet acknowledged, as Lambda's event carries them.
    pending: Vec<Value>,
}

impl StreamReader {
    async fn open(ddb: &aws_sdk_dynamodb::Client, table: &str) -> StreamReader {
        let described = ddb
            .describe_table()
            .table_name(table)
            .send()
            .await
            .expect("DescribeTable");
        let arn = described
            .table()
            .and_then(|t| t.latest_stream_arn())
            .expect("a stream")
            .to_owned();
        StreamReader {
            table: table.to_owned(),
            arn,
            iterators: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    async fn pull(&mut self, streams: &aws_sdk_dynamodbstreams::Client) {
        let Ok(described) = streams.describe_stream().stream_arn(&self.arn).send().await else {
            return;
        };
        for shard in described
            .stream_description()
            .map(|d| d.shards())
            .unwrap_or_default()
        {
            let Some(id) = shard.shard_id() else { continue };
            if !self.iterators.contains_key(id) {
                let it = streams
                    .get_shard_iterator()
                    .stream_arn(&self.arn)
                    .shard_id(id)
                    .shard_iterator_type(ShardIteratorType::TrimHorizon)
                    .send()
                    .await
                    .ok()
                    .and_then(|o| o.shard_iterator().map(str::to_owned));
                self.iterators.insert(id.to_owned(), it);
            }
        }
        for iterator in self.iterators.values_mut() {
            let Some(it) = iterator.clone() else { continue };
            let Ok(got) = streams.get_records().shard_iterator(&it).send().await else {
                continue;
            };
            self.pending
                .extend(got.records().iter().map(|r| lambda_record(r, &self.arn)));
            *iterator = got.next_shard_iterator().map(str::to_owned);
        }
    }
}
