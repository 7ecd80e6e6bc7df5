//! The gateway host's deployed pieces on moto, with real SDK clients: `tables create`'s
//! callback-binding table, the wake-up handler on real stream records (bind, deliver to a
//! parked Step Functions execution, the delivery evidence, a malformed row), the reconciler
//! starting the next generation, and the starter's already-exists path.
//!
//! TPF's gateway itself is a Java function moto cannot run: [`Tpf`] answers the three reads the
//! host makes (READ_AWAIT_CHECKPOINT, READ_EXECUTION_AWAITS, STATUS) as the gateway does, from
//! facts each test sets, and keeps every request it was sent so the test can check that TPF's
//! gateway would accept it.

use crate::support;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_sdk_dynamodb::types::AttributeValue as Ddb;
use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use aws_sdk_sfn::types::ExecutionStatus as SfnStatus;
use serde_json::{json, Value};
use support::streams::lambda_record;
use tpf_sfn::aws::tables::{create_all, create_all_with, TableNames};
use tpf_sfn_lambda::gateway::wakeup_batch;
use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::error::Error;
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::{Invoked, Invoker};
use tpf_sfn_wakepath::gateway::provider::Providers;
use tpf_sfn_wakepath::gateway::reads::AwsHost;
use tpf_sfn_wakepath::gateway::reconciler::{Reconciled, Reconciler};
use tpf_sfn_wakepath::gateway::starter::Starter;
use tpf_sfn_wakepath::gateway::wakeup::Wakeup;
use tpf_sfn_wakeup::reconcile::Quiet;
use tpf_wire::gateway::binding::{self as binding, CallbackRegistration, ProviderFields};
use tpf_wire::gateway::response::AWAIT_CHECKPOINT_UNAVAILABLE;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, AwaitCheckpoint, DriverCheckpoint, ExecutionCheckpoint,
    FunctionError, Operation,
};
use tpf_wire::java_error::class;
use tpf_wire::records::ExecutionStatus;

const TENANT: &str = "t1";
const PIPELINE: &str = "restaurant-approval";
const CONTRACT: &str = "1";
const RELEASE: &str = "r1";
const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-gateway-test";
const MACHINE_ARN: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// TPF's gateway as the host reads it: await checkpoints and statuses the test sets.
#[derive(Default)]
struct Tpf {
    checkpoints: Mutex<Vec<AwaitCheckpoint>>,
    statuses: Mutex<HashMap<String, ExecutionStatus>>,
    requests: Mutex<Vec<String>>,
}

impl Tpf {
    fn with(checkpoints: Vec<AwaitCheckpoint>, status: Option<(&str, ExecutionStatus)>) -> Self {
        let tpf = Tpf::default();
        *tpf.checkpoints.lock().unwrap() = checkpoints;
        if let Some((e, s)) = status {
            tpf.statuses.lock().unwrap().insert(e.to_owned(), s);
        }
        tpf
    }

    fn operations(&self) -> Vec<Operation> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                ActionRequest::read(r)
                    .expect("TPF's gateway reads it")
                    .operation
            })
            .collect()
    }
}

impl Invoker for Tpf {
    async fn invoke(&self, request: &ActionRequest) -> Result<Invoked, Error> {
        let text = request.to_json();
        self.requests.lock().unwrap().push(text.clone());
        // What TPF's gateway reads, from the bytes sent.
        let request = ActionRequest::read(&text).expect("a request TPF's gateway accepts");
        let failed = |class: &str, message: String| {
            Ok(Invoked::Failed(FunctionError {
                error_message: message,
                error_type: class.to_owned(),
            }))
        };
        let execution = request.execution_id.clone().unwrap_or_default();
        Ok(Invoked::Response(Box::new(match request.operation {
            Operation::ReadAwaitCheckpoint => {
                let id = request.await_identity.expect("awaitIdentity");
                let found = self
                    .checkpoints
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|c| c.tenant_id == id.tenant_id && c.interaction_id == id.interaction_id)
                    .cloned();
                match found {
                    Some(c) => ActionResponse::await_checkpoint(c),
                    None => {
                        return failed(class::ILLEGAL_STATE, AWAIT_CHECKPOINT_UNAVAILABLE.into())
                    }
                }
            }
            Operation::ReadExecutionAwaits => ActionResponse::await_checkpoints(
                self.checkpoints
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|c| c.execution_id == execution)
                    .cloned()
                    .collect(),
            ),
            Operation::Status => match self.statuses.lock().unwrap().get(&execution) {
                Some(s) => ActionResponse::status(s.as_str()).unwrap(),
                None => {
                    return failed(
                        class::NOT_FOUND,
                        format!("Execution not found: {execution}"),
                    )
                }
            },
            other => panic!("the host never sends {other:?}"),
        })))
    }
}

fn checkpoint(execution: &str, interaction: &str, status: &str) -> AwaitCheckpoint {
    AwaitCheckpoint::new([
        Some(TENANT),
        Some(execution),
        Some(interaction),
        Some("corr-1"),
        Some("unit-1"),
        Some("approve"),
        Some(status),
        Some(PIPELINE),
        Some(CONTRACT),
        Some(RELEASE),
    ])
    .unwrap()
}

fn registration(
    execution: &str,
    generation: i64,
    arn: &str,
    callback: &str,
) -> CallbackRegistration {
    let e = ExecutionCheckpoint::new(
        Some(TENANT),
        Some(execution),
        Some(PIPELINE),
        Some(CONTRACT),
        Some(RELEASE),
    )
    .unwrap();
    let name = arn.rsplit(':').next().unwrap();
    CallbackRegistration::new(
        DriverCheckpoint::new(e, generation).unwrap(),
        ProviderFields::new(Some(name), Some(arn), Some(callback)).unwrap(),
        1_700_000_000_000,
        1_700_000_000 + binding::DEFAULT_RETENTION_SECONDS,
    )
    .unwrap()
}

/// Everything one test needs on moto.
struct World {
    rt: tokio::runtime::Runtime,
    config: aws_config::SdkConfig,
    names: TableNames,
    prefix: String,
}

impl World {
    fn new(tag: &str) -> Self {
        let rt = runtime();
        let config = rt.block_on(support::moto_config());
        let prefix = support::unique(tag).replace('-', "_");
        let names = TableNames::with_prefix(&format!("{prefix}_"));
        let ddb = aws_sdk_dynamodb::Client::new(&config);
        rt.block_on(create_all(&ddb, &names))
            .expect("tables create");
        World {
            rt,
            config,
            names,
            prefix,
        }
    }

    fn ddb(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.config)
    }

    fn sfn(&self) -> aws_sdk_sfn::Client {
        aws_sdk_sfn::Client::new(&self.config)
    }

    fn host<I: Invoker>(&self, gateway: I) -> AwsHost<I> {
        AwsHost {
            gateway,
            bindings: BindingTable::new(self.ddb(), &self.names.callback_binding),
            providers: Providers {
                sfn: self.sfn(),
                lambda: aws_sdk_lambda::Client::new(&self.config),
            },
        }
    }

    fn machines(&self) -> Machines {
        Machines {
            arn_prefix: MACHINE_ARN.to_owned(),
            name_prefix: self.prefix.replace('_', "-"),
        }
    }

    fn starter(&self) -> Starter {
        Starter {
            sfn: self.sfn(),
            lambda: aws_sdk_lambda::Client::new(&self.config),
            machines: self.machines(),
            durable: DurableFunctions::default(),
        }
    }

    fn wakeup<I: Invoker>(&self, gateway: I) -> Wakeup<I> {
        Wakeup {
            host: self.host(gateway),
            starter: self.starter(),
            now_ms: || 1_700_000_000_123,
        }
    }

    fn create_machine(&self, name: &str, definition: Value) -> String {
        self.rt
            .block_on(
                self.sfn()
                    .create_state_machine()
                    .name(name)
                    .definition(definition.to_string())
                    .role_arn(ROLE)
                    .send(),
            )
            .expect("create machine")
            .state_machine_arn()
            .to_owned()
    }

    /// The release's driver machine as the starter names it.
    fn driver_machine(&self) -> String {
        let arn = self.machines().driver_arn(PIPELINE, RELEASE);
        let name = arn.strip_prefix(MACHINE_ARN).unwrap();
        self.create_machine(
            name,
            json!({"StartAt": "Park", "States": {"Park": {"Type": "Wait", "Seconds": 3600, "End": true}}}),
        )
    }

    fn put(&self, table: &str, item: &tpf_wire::records::Item) {
        self.rt
            .block_on(
                self.ddb()
                    .put_item()
                    .table_name(table)
                    .set_item(Some(tpf_sfn_wakepath::aws::item::to_sdk(item)))
                    .send(),
            )
            .expect("put");
    }

    fn get(&self, pk: &str, sk: &str) -> Option<HashMap<String, Ddb>> {
        self.rt
            .block_on(
                self.ddb()
                    .get_item()
                    .table_name(&self.names.callback_binding)
                    .key("pk", Ddb::S(pk.into()))
                    .key("sk", Ddb::S(sk.into()))
                    .consistent_read(true)
                    .send(),
            )
            .expect("get")
            .item()
            .cloned()
    }

    fn delete(&self, pk: &str, sk: &str) {
        self.rt
            .block_on(
                self.ddb()
                    .delete_item()
                    .table_name(&self.names.callback_binding)
                    .key("pk", Ddb::S(pk.into()))
                    .key("sk", Ddb::S(sk.into()))
                    .send(),
            )
            .expect("delete");
    }

    /// Every record of `table`'s stream so far, as Lambda's event source mapping delivers them.
    fn stream_event(&self, table: &str) -> StreamEvent {
        let streams = aws_sdk_dynamodbstreams::Client::new(&self.config);
        let records = self.rt.block_on(async {
            let described = self
                .ddb()
                .describe_table()
                .table_name(table)
                .send()
                .await
                .unwrap();
            let arn = described
                .table()
                .unwrap()
                .latest_stream_arn()
                .unwrap()
                .to_owned();
            let stream = streams
                .describe_stream()
                .stream_arn(&arn)
                .send()
                .await
                .unwrap();
            let mut out = Vec::new();
            for shard in stream.stream_description().unwrap().shards() {
                let it = streams
                    .get_shard_iterator()
                    .stream_arn(&arn)
                    .shard_id(shard.shard_id().unwrap())
                    .shard_iterator_type(ShardIteratorType::TrimHorizon)
                    .send()
                    .await
                    .unwrap();
                let got = streams
                    .get_records()
                    .shard_iterator(it.shard_iterator().unwrap())
                    .send()
                    .await
                    .unwrap();
                out.extend(got.records().iter().map(|r| lambda_record(r, &arn)));
            }
            out
        });
        serde_json::from_value(json!({ "Records": records })).expect("a Lambda DynamoDB event")
    }
}

/// The sequence numbers a batch response reports failed.
fn failed(response: &aws_lambda_events::event::streams::DynamoDbEventResponse) -> Vec<String> {
    response
        .batch_item_failures
        .iter()
        .filter_map(|f| f.item_identifier.clone())
        .collect()
}

#[test]
fn tables_create_makes_tpfs_callback_binding_table() {
    let w = World::new("gw-tables");
    let ddb = w.ddb();
    let table = &w.names.callback_binding;
    assert_eq!(table, &format!("{}_tpf_callback_binding", w.prefix));
    let d =
        w.rt.block_on(ddb.describe_table().table_name(table).send())
            .unwrap();
    let t = d.table().unwrap();
    let keys: Vec<(&str, &str)> = t
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name(), k.key_type().as_str()))
        .collect();
    assert_eq!(keys, [("pk", "HASH"), ("sk", "RANGE")]);
    let gsi = &t.global_secondary_indexes()[0];
    assert_eq!(t.global_secondary_indexes().len(), 1);
    assert_eq!(gsi.index_name(), Some("provider-execution-index"));
    let gsi_keys: Vec<(&str, &str)> = gsi
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name(), k.key_type().as_str()))
        .collect();
    assert_eq!(gsi_keys, [("provider_execution_arn", "HASH")]);
    assert_eq!(
        gsi.projection()
            .and_then(|p| p.projection_type())
            .map(|p| p.as_str()),
        Some("ALL")
    );
    let stream = t.stream_specification().unwrap();
    assert!(stream.stream_enabled());
    assert_eq!(
        stream.stream_view_type().map(|v| v.as_str()),
        Some("NEW_AND_OLD_IMAGES")
    );
    let ttl =
        w.rt.block_on(ddb.describe_time_to_live().table_name(table).send())
            .unwrap();
    assert_eq!(
        ttl.time_to_live_description()
            .and_then(|d| d.attribute_name()),
        Some("expires_at_epoch_s")
    );
    let pitr = |name: &str| {
        w.rt.block_on(ddb.describe_continuous_backups().table_name(name).send())
            .unwrap()
            .continuous_backups_description()
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|p| p.point_in_time_recovery_status())
            .map(|s| s.as_str().to_owned())
    };
    assert_eq!(pitr(table).as_deref(), Some("ENABLED"));

    // A binding table made by hand without the index and PITR: `tables create` names both
    // gaps, and `--fix` turns PITR on.
    let names = TableNames::with_prefix(&format!("{}_bare_", w.prefix));
    w.rt.block_on(
        ddb.create_table()
            .table_name(&names.callback_binding)
            .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
            .key_schema(key("pk", aws_sdk_dynamodb::types::KeyType::Hash))
            .key_schema(key("sk", aws_sdk_dynamodb::types::KeyType::Range))
            .attribute_definitions(attr("pk"))
            .attribute_definitions(attr("sk"))
            .send(),
    )
    .unwrap();
    let outcomes = w.rt.block_on(create_all_with(&ddb, &names, false)).unwrap();
    let bare = outcomes
        .iter()
        .find(|o| o.name == names.callback_binding)
        .unwrap();
    assert!(!bare.created);
    let gaps: Vec<&str> = bare.gaps.iter().map(|g| g.what.as_str()).collect();
    for want in [
        "index provider-execution-index (provider_execution_arn S) is missing",
        "stream NEW_AND_OLD_IMAGES is off",
        "TTL on expires_at_epoch_s is off",
        "point-in-time recovery is off",
    ] {
        assert!(gaps.contains(&want), "{want}: {gaps:?}");
    }
    assert_eq!(pitr(&names.callback_binding).as_deref(), Some("DISABLED"));
    w.rt.block_on(create_all_with(&ddb, &names, true)).unwrap();
    assert_eq!(pitr(&names.callback_binding).as_deref(), Some("ENABLED"));
}

fn key(
    name: &str,
    kind: aws_sdk_dynamodb::types::KeyType,
) -> aws_sdk_dynamodb::types::KeySchemaElement {
    aws_sdk_dynamodb::types::KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .unwrap()
}

fn attr(name: &str) -> aws_sdk_dynamodb::types::AttributeDefinition {
    aws_sdk_dynamodb::types::AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(aws_sdk_dynamodb::types::ScalarAttributeType::S)
        .build()
        .unwrap()
}

/// A driver parked on a task token: Step Functions sends the token to a queue and waits.
fn park(w: &World) -> (String, String) {
    let sqs = aws_sdk_sqs::Client::new(&w.config);
    let queue =
        w.rt.block_on(
            sqs.create_queue()
                .queue_name(format!("{}-park", w.prefix))
                .send(),
        )
        .unwrap()
        .queue_url()
        .unwrap()
        .to_owned();
    let machine = w.create_machine(
        &format!("{}-parked", w.prefix.replace('_', "-")),
        json!({"StartAt": "Await", "States": {"Await": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"QueueUrl": queue, "MessageBody": {"taskToken.$": "$$.Task.Token"}},
            "End": true
        }}}),
    );
    let execution =
        w.rt.block_on(
            w.sfn()
                .start_execution()
                .state_machine_arn(&machine)
                .name("tpf-parked")
                .send(),
        )
        .unwrap()
        .execution_arn()
        .to_owned();
    let token = w.rt.block_on(async {
        for _ in 0..100 {
            let got = sqs
                .receive_message()
                .queue_url(&queue)
                .wait_time_seconds(1)
                .send()
                .await
                .unwrap();
            if let Some(body) = got.messages().first().and_then(|m| m.body()) {
                let body: Value = serde_json::from_str(body).unwrap();
                return body["taskToken"].as_str().unwrap().to_owned();
            }
        }
        panic!("the driver never parked");
    });
    (execution, token)
}

fn status(w: &World, execution: &str) -> (SfnStatus, Option<String>) {
    w.rt.block_on(async {
        for _ in 0..100 {
            let d = w
                .sfn()
                .describe_execution()
                .execution_arn(execution)
                .send()
                .await
                .unwrap();
            if *d.status() != SfnStatus::Running {
                return (d.status().clone(), d.output().map(str::to_owned));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (SfnStatus::Running, None)
    })
}

#[test]
fn a_wakeup_batch_binds_delivers_once_and_acknowledges_a_malformed_row() {
    let w = World::new("gw-wake");
    let (execution_arn, token) = park(&w);
    let reg = registration("e1", 1, &execution_arn, &token);

    // The await completes before the driver registered: its record finds no registration and
    // is retried (the negative case of the binding: nothing to bind to yet).
    let mut interaction = tpf_wire::records::Item::new();
    for (k, v) in [
        ("tenant_id", TENANT),
        ("interaction_id", "i1"),
        ("execution_id", "e1"),
        ("correlation_id", "corr-1"),
        ("status", "COMPLETED"),
    ] {
        interaction.insert(k.into(), tpf_wire::records::AttrValue::S(v.into()));
    }
    w.put(&w.names.await_interaction, &interaction);
    let tpf = Tpf::with(vec![checkpoint("e1", "i1", "COMPLETED")], None);
    let wakeup = w.wakeup(tpf);
    let early = w.stream_event(&w.names.await_interaction);
    let batch = w.rt.block_on(wakeup_batch(&wakeup, &early));
    assert_eq!(failed(&batch.response).len(), 1, "{:?}", batch.retried);
    assert!(
        batch.retried[0].contains("RegistrationMissing"),
        "{:?}",
        batch.retried
    );
    assert_eq!(status(&w, &execution_arn).0, SfnStatus::Running);

    // The driver registers: the REGISTRATION's own stream record binds the first await and
    // wakes the driver with TPF's signal.
    w.put(&w.names.callback_binding, &reg.to_item());
    let registered = w.stream_event(&w.names.callback_binding);
    let batch = w.rt.block_on(wakeup_batch(&wakeup, &registered));
    assert!(failed(&batch.response).is_empty(), "{:?}", batch.retried);
    assert_eq!(batch.delivered, 1);
    let (state, output) = status(&w, &execution_arn);
    assert_eq!(state, SfnStatus::Succeeded);
    assert_eq!(
        serde_json::from_str::<Value>(&output.unwrap()).unwrap(),
        json!({"tenantId": TENANT, "executionId": "e1", "interactionId": "i1",
               "correlationId": "corr-1", "generation": 1, "admittedStatus": "COMPLETED"})
    );
    let bound = w.get("t1#i1", "GEN#00000000000000000001").expect("BINDING");
    assert_eq!(bound["provider_callback_id"], Ddb::S(token.clone()));
    let delivered = w.get("t1#i1", "DELIVERED#1").expect("DELIVERY");
    assert_eq!(
        delivered["provider_outcome"],
        Ddb::S("CALLBACK_ACCEPTED".into())
    );
    // The requests TPF's gateway read: the registration's awaits, then the checkpoint.
    assert_eq!(
        wakeup.host.gateway.operations(),
        [
            Operation::ReadExecutionAwaits,
            Operation::ReadAwaitCheckpoint
        ]
    );

    // The same batches again (a duplicate stream delivery): the evidence acknowledges them,
    // nothing is sent.
    let before = wakeup.host.gateway.requests.lock().unwrap().len();
    let again = w.rt.block_on(wakeup_batch(&wakeup, &registered));
    assert!(failed(&again.response).is_empty(), "{:?}", again.retried);
    assert_eq!((again.delivered, again.acknowledged), (0, 1));
    let again = w.rt.block_on(wakeup_batch(&wakeup, &early));
    assert_eq!((again.delivered, again.acknowledged), (0, 1));
    assert!(wakeup.host.gateway.requests.lock().unwrap().len() > before);
    let attempt = delivered["attempt_id"].clone();
    assert_eq!(
        w.get("t1#i1", "DELIVERED#1").unwrap()["attempt_id"],
        attempt
    );

    // Without the evidence the host sends again, finds the task gone and its success in the
    // history, and records that instead: the evidence is what keeps it from sending twice.
    w.delete("t1#i1", "DELIVERED#1");
    let resent = w.rt.block_on(wakeup_batch(&wakeup, &early));
    assert!(failed(&resent.response).is_empty(), "{:?}", resent.retried);
    assert_eq!(resent.delivered, 1);
    assert_eq!(
        w.get("t1#i1", "DELIVERED#1").unwrap()["provider_outcome"],
        Ddb::S("PROVIDER_STATE_SUCCEEDED".into())
    );

    // A malformed BINDING-table row (TPF's scenario 18): acknowledged, never retried.
    let mut bad = reg.to_item();
    bad.remove("provider_callback_id");
    bad.insert(
        "sk".into(),
        tpf_wire::records::AttrValue::S("REGISTRATION#00000000000000000009".into()),
    );
    w.put(&w.names.callback_binding, &bad);
    let with_bad = w.stream_event(&w.names.callback_binding);
    let batch = w.rt.block_on(wakeup_batch(&wakeup, &with_bad));
    assert!(failed(&batch.response).is_empty(), "{:?}", batch.retried);
}

/// A driver that ended: a machine whose execution fails at once.
fn failed_driver(w: &World, name: &str) -> String {
    let machine = w.create_machine(
        &format!("{}-{name}", w.prefix.replace('_', "-")),
        json!({"StartAt": "Fail", "States": {"Fail": {"Type": "Fail", "Error": "Lost", "Cause": "lost"}}}),
    );
    let arn =
        w.rt.block_on(
            w.sfn()
                .start_execution()
                .state_machine_arn(&machine)
                .name(name)
                .send(),
        )
        .unwrap()
        .execution_arn()
        .to_owned();
    assert_eq!(status(w, &arn).0, SfnStatus::Failed);
    arn
}

fn status_change(arn: &str, status: &str) -> Value {
    json!({
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {"executionArn": arn, "status": status}
    })
}

/// The executions of the release's driver machine: `(name, input)`.
fn driver_executions(w: &World, machine: &str) -> Vec<(String, Value)> {
    w.rt.block_on(async {
        let listed = w
            .sfn()
            .list_executions()
            .state_machine_arn(machine)
            .send()
            .await
            .unwrap();
        let mut out = Vec::new();
        for e in listed.executions() {
            let d = w
                .sfn()
                .describe_execution()
                .execution_arn(e.execution_arn())
                .send()
                .await
                .unwrap();
            out.push((
                e.name().to_owned(),
                serde_json::from_str(d.input().unwrap_or("null")).unwrap(),
            ));
        }
        out
    })
}

#[test]
fn the_reconciler_starts_generation_2_for_a_failed_driver_that_tpf_still_waits_on() {
    let w = World::new("gw-reconcile");
    let machine = w.driver_machine();
    let ended = failed_driver(&w, "tpf-gen1");
    w.put(
        &w.names.callback_binding,
        &registration("e1", 1, &ended, "token-1").to_item(),
    );
    let event = status_change(&ended, "FAILED");

    // TPF's execution no longer waits (it succeeded): nothing starts.
    let done = Reconciler {
        host: w.host(Tpf::with(
            vec![checkpoint("e1", "i1", "PENDING")],
            Some(("e1", ExecutionStatus::Succeeded)),
        )),
        starter: w.starter(),
    };
    assert_eq!(
        w.rt.block_on(done.on_event(&event)).unwrap(),
        Reconciled::Nothing(Quiet::ExecutionSettled(ExecutionStatus::Succeeded))
    );
    assert!(driver_executions(&w, &machine).is_empty());
    // Waiting, but TPF lists no await yet: the event fails so it comes again.
    let early = Reconciler {
        host: w.host(Tpf::with(
            vec![],
            Some(("e1", ExecutionStatus::WaitingExternal)),
        )),
        starter: w.starter(),
    };
    let e = w.rt.block_on(early.on_event(&event)).unwrap_err();
    assert_eq!(e.code(), "GATEWAY_HOST_RECONCILE_RETRY");
    assert!(driver_executions(&w, &machine).is_empty());

    // Waiting on an await: the await is bound to the ended generation and generation 2 starts
    // under TPF's name with TPF's resume input.
    let tpf = Tpf::with(
        vec![checkpoint("e1", "i1", "PENDING")],
        Some(("e1", ExecutionStatus::WaitingExternal)),
    );
    let reconciler = Reconciler {
        host: w.host(tpf),
        starter: w.starter(),
    };
    let name =
        tpf_wire::gateway::names::durable_execution_name(Some(TENANT), Some("e1"), 2).unwrap();
    assert_eq!(
        w.rt.block_on(reconciler.on_event(&event)).unwrap(),
        Reconciled::Started(name.clone())
    );
    let started = driver_executions(&w, &machine);
    assert_eq!(started.len(), 1);
    assert_eq!(started[0].0, name);
    assert_eq!(
        started[0].1,
        json!({"tenantId": TENANT, "idempotencyKey": "e1", "pipelineId": PIPELINE,
               "contractVersion": CONTRACT, "releaseVersion": RELEASE, "inputJson": "{}",
               "resumeExecutionId": "e1", "generation": 2})
    );
    assert!(w.get("t1#i1", "GEN#00000000000000000001").is_some());
    // The same event again: the name already started, still one generation 2.
    assert_eq!(
        w.rt.block_on(reconciler.on_event(&event)).unwrap(),
        Reconciled::Started(name)
    );
    assert_eq!(driver_executions(&w, &machine).len(), 1);
    // An event that names no execution is not a status change.
    assert_eq!(
        w.rt.block_on(reconciler.on_event(&json!({"detail": {}})))
            .unwrap(),
        Reconciled::NotAStatusChange
    );
}

#[test]
fn the_starter_starts_by_tpfs_name_and_counts_an_existing_one_as_started() {
    let w = World::new("gw-start");
    let machine = w.driver_machine();
    let release = ReleaseIdentity {
        pipeline_id: Some(PIPELINE),
        contract_version: Some(CONTRACT),
        release_version: Some(RELEASE),
    };
    let input = ExecutionInput::new(
        Some(TENANT),
        Some("key-1"),
        release,
        Some("{\"a\":1}"),
        None,
        1,
    )
    .unwrap();
    let payload: Value = serde_json::from_str(&input.to_json()).unwrap();
    let starter = w.starter();
    let first =
        w.rt.block_on(tpf_sfn_lambda::gateway::start(&starter, &payload))
            .unwrap();
    assert_eq!(first.durable_execution_name, input.durable_execution_name());
    assert_eq!(first.status_code, 202);
    let second =
        w.rt.block_on(tpf_sfn_lambda::gateway::start(&starter, &payload))
            .unwrap();
    assert_eq!(second, first);
    let started = driver_executions(&w, &machine);
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0].1, payload);

    // A release with no driver is refused, and nothing starts.
    let mut other = payload.clone();
    other["releaseVersion"] = json!("r-undeployed");
    let e =
        w.rt.block_on(tpf_sfn_lambda::gateway::start(&starter, &other))
            .unwrap_err();
    assert_eq!(e.code(), "GATEWAY_HOST_START_REFUSED");
    // An input TPF's starter would not read.
    let mut broken = payload.clone();
    broken["generation"] = json!(0);
    let e =
        w.rt.block_on(tpf_sfn_lambda::gateway::start(&starter, &broken))
            .unwrap_err();
    assert_eq!(e.code(), "GATEWAY_HOST_START_INPUT");
    assert_eq!(driver_executions(&w, &machine).len(), 1);
}

/// `dev`'s local stream mapping on moto's stream: a record the wake-up retries (an await row
/// whose execution never registered) holds its shard for each pass, and after the template's
/// five retries is passed over, as Lambda's mapping hands it to its on-failure destination;
/// the shard then reads on.
#[test]
fn the_local_stream_mapping_retries_a_record_five_times_then_passes_it_over() {
    use tpf_sfn_wakepath::gateway::local::{StreamMapping, MAX_RETRIES};
    let w = World::new("gw-local");
    let mut interaction = tpf_wire::records::Item::new();
    for (k, v) in [
        ("tenant_id", TENANT),
        ("interaction_id", "i1"),
        ("execution_id", "e1"),
        ("correlation_id", "corr-1"),
        ("status", "COMPLETED"),
    ] {
        interaction.insert(k.into(), tpf_wire::records::AttrValue::S(v.into()));
    }
    w.put(&w.names.await_interaction, &interaction);
    let wakeup = w.wakeup(Tpf::with(vec![checkpoint("e1", "i1", "COMPLETED")], None));
    let mut mapping = StreamMapping::new(&w.config, vec![w.names.await_interaction.clone()]);
    for n in 0..=MAX_RETRIES {
        let pass = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
        assert_eq!(pass.records, 1, "pass {n}: {pass:?}");
        if n < MAX_RETRIES {
            assert_eq!(pass.retried.len(), 1, "pass {n}: {pass:?}");
            assert!(pass.passed_over.is_empty(), "pass {n}: {pass:?}");
        } else {
            assert!(pass.retried.is_empty(), "{pass:?}");
            assert_eq!(pass.passed_over.len(), 1, "{pass:?}");
            assert!(
                pass.passed_over[0].contains("RegistrationMissing"),
                "{pass:?}"
            );
        }
    }
    let pass = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
    assert_eq!(pass.records, 0, "the shard reads on past it: {pass:?}");
}

/// An await row the wake-up acknowledges without a read (it names no status): what a test
/// counts through the stream mapping.
fn unread_interaction(id: &str) -> tpf_wire::records::Item {
    let mut row = tpf_wire::records::Item::new();
    for (k, v) in [
        ("tenant_id", TENANT),
        ("interaction_id", id),
        ("execution_id", "e-steady"),
    ] {
        row.insert(k.into(), tpf_wire::records::AttrValue::S(v.into()));
    }
    row
}

/// `dev`'s stream mapping asks the streams for records and nothing else once it has read them
/// once: after the first pass it describes neither table nor stream again and opens no new
/// shard iterator (moto keeps every iterator it issues), and the records written between
/// passes are each read exactly once through the iterators the last reads handed back. A
/// retried record drops its shard's iterator, so the next pass opens one just after the last
/// acknowledged record, and reads the retried record again and nothing twice.
#[test]
fn the_local_stream_mapping_reads_on_through_the_iterators_it_was_handed() {
    use tpf_sfn_wakepath::gateway::local::StreamMapping;
    let w = World::new("gw-steady");
    let (endpoint, log) = support::proxy::recording_proxy(&support::moto_endpoint());
    let proxied = w.config.to_builder().endpoint_url(endpoint).build();
    let wakeup = w.wakeup(Tpf::with(vec![], None));
    let mut mapping = StreamMapping::new(
        &proxied,
        vec![
            w.names.await_interaction.clone(),
            w.names.callback_binding.clone(),
        ],
    );
    let count = |operation: &str| log.lock().unwrap().matches(operation).count();
    let (describe_table, describe_stream, open, read) = (
        "DynamoDB_20120810.DescribeTable",
        "DynamoDBStreams_20120810.DescribeStream",
        "DynamoDBStreams_20120810.GetShardIterator",
        "DynamoDBStreams_20120810.GetRecords",
    );

    let first = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
    assert_eq!(first.records, 0, "{first:?}");
    // Two streams of one shard each on moto: each described, each shard opened once.
    assert_eq!(
        (count(describe_table), count(describe_stream), count(open)),
        (2, 2, 2)
    );
    let reads = count(read);
    for _ in 0..3 {
        let idle = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
        assert_eq!(idle.records, 0, "{idle:?}");
    }
    assert_eq!(
        count(read),
        reads + 3 * 2,
        "one read per shard and idle pass"
    );

    // Records written between passes: each read once, on the pass after it was written.
    let mut total = 0;
    for batch in [1, 3, 2] {
        for n in 0..batch {
            w.put(
                &w.names.await_interaction,
                &unread_interaction(&format!("i{total}-{n}")),
            );
        }
        total += batch;
        let pass = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
        assert_eq!(pass.records, batch, "{pass:?}");
        assert!(pass.retried.is_empty(), "{pass:?}");
        let again = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
        assert_eq!(again.records, 0, "read twice: {again:?}");
    }
    assert_eq!(
        (count(describe_table), count(describe_stream), count(open)),
        (2, 2, 2),
        "described again, or a new iterator for a shard already open"
    );

    // A retried record (an await completed before its execution registered) holds its shard:
    // the next pass opens one iterator just after the records already acknowledged and reads
    // it alone again; one acknowledged before it in the same batch is not read twice.
    w.put(
        &w.names.await_interaction,
        &unread_interaction("before-retry"),
    );
    let mut held = unread_interaction("held");
    held.insert(
        "correlation_id".into(),
        tpf_wire::records::AttrValue::S("corr".into()),
    );
    held.insert(
        "status".into(),
        tpf_wire::records::AttrValue::S("COMPLETED".into()),
    );
    w.put(&w.names.await_interaction, &held);
    let pass = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
    assert_eq!((pass.records, pass.retried.len()), (2, 1), "{pass:?}");
    let pass = w.rt.block_on(mapping.poll_once(&wakeup)).expect("pass");
    assert_eq!((pass.records, pass.retried.len()), (1, 1), "{pass:?}");
    assert_eq!(
        count(open),
        3,
        "one new iterator for the retried record's shard"
    );
}

/// `dev`'s durable status changes ask Lambda for the ended executions the reconciler acts on
/// (FAILED, TIMED_OUT, STOPPED), not for every execution of the function each pass; what comes
/// back is checked again (the emulator ignores the filter), so a succeeded one is never handed on.
#[test]
fn the_durable_status_changes_list_only_the_ended_executions() {
    use aws_sdk_lambda::operation::list_durable_executions_by_function::ListDurableExecutionsByFunctionOutput;
    use aws_sdk_lambda::primitives::DateTime;
    use aws_sdk_lambda::types::{Execution, ExecutionStatus as Durable};
    use aws_smithy_mocks::{mock, mock_client, RuleMode};
    use tpf_sfn_wakepath::gateway::local::StatusChanges;

    let w = World::new("gw-durable-changes");
    let execution = |name: &str, status: Durable| {
        Execution::builder()
            .durable_execution_arn(format!(
                "arn:aws:lambda:us-east-1:123456789012:function:f:1/durable-execution/{name}/id"
            ))
            .durable_execution_name(name)
            .function_arn("arn:aws:lambda:us-east-1:123456789012:function:f:1")
            .status(status)
            .start_timestamp(DateTime::from_secs(1_700_000_000))
            .build()
            .expect("execution")
    };
    let ended = [Durable::Failed, Durable::TimedOut, Durable::Stopped];
    let list = mock!(aws_sdk_lambda::Client::list_durable_executions_by_function)
        .match_requests(move |r| r.function_name() == Some("f") && r.statuses() == ended)
        .then_output(move || {
            ListDurableExecutionsByFunctionOutput::builder()
                .durable_executions(execution("failed", Durable::Failed))
                .durable_executions(execution("succeeded", Durable::Succeeded))
                .build()
        });
    let lambda = mock_client!(aws_sdk_lambda, RuleMode::MatchAny, [&list]);
    let mut changes = StatusChanges::durable(lambda, vec!["f".into()]);
    let reconciler = Reconciler {
        host: w.host(Tpf::with(vec![], None)),
        starter: w.starter(),
    };
    let handled = w.rt.block_on(changes.poll_once(&reconciler)).expect("pass");
    let arns: Vec<&str> = handled.iter().map(|(arn, _)| arn.as_str()).collect();
    assert_eq!(
        arns,
        ["arn:aws:lambda:us-east-1:123456789012:function:f:1/durable-execution/failed/id"]
    );
    assert_eq!(list.num_calls(), 1);
}
