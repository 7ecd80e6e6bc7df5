//! The DynamoDB store on moto: the same conformance cases as the in-memory store, the
//! restaurant coordinator trace, and `tables create`'s idempotence.

use crate::support;

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use tokio::runtime::Runtime;
use tpf_model::coordinator::local_release;
use tpf_model::store::conformance;
use tpf_model::{AwaitCompletion, Coordinator, PipelineDef, ScriptedWorker, SubmitRequest};
use tpf_sfn::aws::dynamo_item::from_sdk;
use tpf_sfn::aws::dynamo_store::DynamoStore;
use tpf_sfn::aws::tables::{create_all, TableNames};
use tpf_wire::records::{AttrValue, ExecutionStatus};

const TENANT: &str = "restaurant-demo";
const PIPELINE: &str = "org.pipelineframework.restaurantapproval";
const T0: i64 = conformance::NOW;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

fn client(rt: &Runtime) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&rt.block_on(support::moto_config()))
}

/// Fresh tables under a unique prefix, and a store over them.
fn fresh_store(rt: &Runtime, client: &aws_sdk_dynamodb::Client) -> DynamoStore {
    static N: AtomicU32 = AtomicU32::new(0);
    let prefix = format!(
        "t{}_{}_",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let names = TableNames::with_prefix(&prefix);
    rt.block_on(create_all(client, &names))
        .expect("create tables");
    DynamoStore::new(client.clone(), names, rt.handle().clone())
}

#[test]
fn dynamo_store_passes_the_store_conformance_suite_on_moto() {
    let rt = runtime();
    let client = client(&rt);
    conformance::run_all(|| fresh_store(&rt, &client));
}

#[test]
fn restaurant_trace_on_dynamo_reads_back_with_tpf_attribute_names() {
    let rt = runtime();
    let client = client(&rt);
    let store = fresh_store(&rt, &client);
    let tables = store.tables().clone();
    let identity = tpf_wire::Identity {
        pipeline_id: PIPELINE.into(),
        contract_version: "sha256:v1".into(),
        release_version: "sha256:v1".into(),
    };
    let mut c = Coordinator::new(
        store,
        PipelineDef::restaurant(),
        ScriptedWorker::new(identity.clone()),
    );
    c.register_release(&local_release(TENANT, &identity, T0 - 60_000))
        .unwrap();
    c.activate_release(TENANT, PIPELINE, "sha256:v1", T0 - 60_000)
        .unwrap();
    let submitted = c
        .submit(
            &SubmitRequest {
                tenant_id: TENANT.into(),
                pipeline_id: PIPELINE.into(),
                execution_key: Some("order-1".into()),
                input_payload: json!({"orderId": "order-1"}),
            },
            T0,
        )
        .unwrap();
    let id = submitted.execution_id.clone();
    assert_eq!(submitted.record.version, 0);
    let parked = c.process_work_item(TENANT, &id, T0).unwrap();
    assert_eq!(parked.record.status, ExecutionStatus::WaitingExternal);
    assert_eq!(parked.record.version, 2);
    assert_eq!(parked.record.current_step_index, 2);
    let pending = c.await_interactions(TENANT, &id, T0).unwrap();
    assert_eq!(pending.len(), 1);
    let done = c
        .complete_await(
            &AwaitCompletion {
                tenant_id: TENANT.into(),
                interaction_id: Some(pending[0].interaction_id.clone()),
                correlation_id: None,
                response_payload: json!({"decision": "accepted"}),
                actor: Some("chef".into()),
            },
            T0 + 60_000,
        )
        .unwrap();
    assert!(done.released);
    let queued = c.status(TENANT, &id, T0 + 60_000).unwrap();
    assert_eq!(
        (queued.status, queued.version, queued.current_step_index),
        (ExecutionStatus::Queued, 3, 3)
    );
    let finished = c.process_work_item(TENANT, &id, T0 + 61_000).unwrap();
    assert_eq!(finished.record.status, ExecutionStatus::Succeeded);
    assert_eq!(finished.record.version, 5);
    let versions: Vec<(i64, String)> = c
        .log()
        .transitions()
        .iter()
        .filter(|t| t.execution_id == id)
        .map(|t| (t.version, t.status.to_string()))
        .collect();
    assert_eq!(
        versions,
        vec![
            (0, "QUEUED".into()),
            (1, "RUNNING".into()),
            (2, "WAITING_EXTERNAL".into()),
            (3, "QUEUED".into()),
            (4, "RUNNING".into()),
            (5, "SUCCEEDED".into()),
        ]
    );

    // The raw row, as TPF would read it.
    let raw = rt
        .block_on(
            client
                .get_item()
                .table_name(&tables.execution)
                .key(
                    "tenant_id",
                    aws_sdk_dynamodb::types::AttributeValue::S(TENANT.into()),
                )
                .key(
                    "execution_id",
                    aws_sdk_dynamodb::types::AttributeValue::S(id.clone()),
                )
                .send(),
        )
        .unwrap();
    let item = from_sdk(raw.item().expect("row"));
    assert_eq!(item.get("status"), Some(&AttrValue::S("SUCCEEDED".into())));
    assert_eq!(item.get("version"), Some(&AttrValue::N("5".into())));
    assert_eq!(
        item.get("last_transition_key"),
        Some(&AttrValue::S(format!("{id}:3:0")))
    );
    // The client's key scoped by the pinned release, as TPF stores it.
    let execution_key =
        tpf_wire::ids::scoped_root_execution_key(PIPELINE, "sha256:v1", "order-1").expect("key");
    assert_eq!(
        item.get("execution_key"),
        Some(&AttrValue::S(execution_key.clone()))
    );
    assert!(item.contains_key("result_payload_json"));
    assert!(!item.contains_key("lease_owner"), "REMOVEd, not NULL");
    assert!(!item.contains_key("await_unit_id"));
    let key_row = rt
        .block_on(
            client
                .get_item()
                .table_name(&tables.execution_key)
                .key(
                    "tenant_execution_key",
                    aws_sdk_dynamodb::types::AttributeValue::S(
                        tpf_wire::ids::scoped_execution_key(TENANT, &execution_key),
                    ),
                )
                .send(),
        )
        .unwrap();
    assert!(key_row.item().is_some(), "scoped key row");
}

#[test]
fn tables_create_is_idempotent_and_enables_streams() {
    let rt = runtime();
    let client = client(&rt);
    let names = TableNames::with_prefix(&format!("idem{}_", std::process::id()));
    let first = rt.block_on(create_all(&client, &names)).unwrap();
    assert_eq!(first.len(), 9);
    assert!(first.iter().all(|t| t.created));
    let second = rt.block_on(create_all(&client, &names)).unwrap();
    assert!(
        second.iter().all(|t| !t.created),
        "second run creates nothing"
    );
    // TPF's template encrypts the binding table with the AWS managed KMS key.
    let binding = described(&rt, &client, &names.callback_binding);
    let sse = binding.sse_description();
    assert_eq!(
        sse.and_then(|d| d.sse_type()),
        Some(&aws_sdk_dynamodb::types::SseType::Kms),
        "{sse:?}"
    );
    // TPF's template streams the interaction and binding tables (the gateway's wake-up reads
    // both), and no other.
    for (table, streamed) in [
        (&names.execution, false),
        (&names.await_interaction, true),
        (&names.callback_binding, true),
        (&names.execution_key, false),
        (&names.execution_payload, false),
        (&names.await_admission, false),
    ] {
        let spec = described(&rt, &client, table)
            .stream_specification()
            .cloned();
        let spec = spec.as_ref();
        assert_eq!(
            spec.map(|s| s.stream_enabled()).unwrap_or(false),
            streamed,
            "{table}"
        );
        if streamed {
            assert_eq!(
                spec.and_then(|s| s.stream_view_type()),
                Some(&aws_sdk_dynamodb::types::StreamViewType::NewAndOldImages)
            );
        }
    }
    let indexes: Vec<String> = described(&rt, &client, &names.await_interaction)
        .global_secondary_indexes()
        .iter()
        .filter_map(|g| g.index_name().map(str::to_owned))
        .collect();
    assert_eq!(indexes.len(), 8, "{indexes:?}");
    for index in [
        "await-interaction-continuation-work",
        "await-interaction-by-execution",
    ] {
        assert!(indexes.iter().any(|i| i == index), "{index}: {indexes:?}");
    }
    // Today's keys and their types: the continuation index sorts by a number, admission slots
    // are numbered, payload parts are named.
    let types = |table: &str| -> Vec<(String, String)> {
        described(&rt, &client, table)
            .attribute_definitions()
            .iter()
            .map(|a| {
                (
                    a.attribute_name().to_owned(),
                    a.attribute_type().as_str().to_owned(),
                )
            })
            .collect()
    };
    let has = |table: &str, name: &str, kind: &str| {
        let t = types(table);
        assert!(
            t.contains(&(name.to_owned(), kind.to_owned())),
            "{table}: {name} {kind} in {t:?}"
        );
    };
    has(
        &names.await_interaction,
        "query_continuation_due_epoch_ms",
        "N",
    );
    has(&names.await_interaction, "query_execution_sort", "S");
    has(&names.execution_payload, "payload_id", "S");
    has(&names.execution_payload, "payload_part", "S");
    has(&names.await_admission, "scope_key", "S");
    has(&names.await_admission, "slot", "N");
    let ttl = rt
        .block_on(
            client
                .describe_time_to_live()
                .table_name(&names.await_admission)
                .send(),
        )
        .unwrap();
    assert_eq!(
        ttl.time_to_live_description()
            .and_then(|d| d.attribute_name()),
        Some("expires_at")
    );
}

#[test]
fn service_errors_are_store_errors_not_failed_conditions() {
    let rt = runtime();
    let client = client(&rt);
    let store = DynamoStore::new(
        client,
        TableNames::with_prefix("no_such_tables_"),
        rt.handle().clone(),
    );
    use tpf_model::ExecutionStore;
    let err = store
        .claim_lease("t", "e", "w", T0, 1)
        .expect_err("missing table is not a lost race");
    assert!(err.to_string().contains("UpdateItem"), "{err}");
    // The SDK's error travels with it, typed, for whoever reports it.
    let cause = std::error::Error::source(&err).expect("the SDK error as the cause");
    assert!(
        cause
            .downcast_ref::<aws_sdk_dynamodb::error::SdkError<
                aws_sdk_dynamodb::operation::update_item::UpdateItemError,
            >>()
            .is_some_and(|e| e
                .as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception())),
        "{cause:?}"
    );
    assert!(store.get_execution("t", "e", T0).is_err());
    assert!(store
        .create_or_get_execution(&conformance::create_command("t", "k", T0))
        .is_err());
}

/// DescribeTable's description of `table`.
fn described(
    rt: &Runtime,
    client: &aws_sdk_dynamodb::Client,
    table: &str,
) -> aws_sdk_dynamodb::types::TableDescription {
    rt.block_on(client.describe_table().table_name(table).send())
        .unwrap()
        .table()
        .cloned()
        .expect("a table description")
}

/// A bare table: these keys, on-demand, no stream, no TTL, no index.
fn bare_table(
    rt: &Runtime,
    client: &aws_sdk_dynamodb::Client,
    name: &str,
    hash: &str,
    range: &str,
) {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
    };
    let mut request = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest);
    for (attr, kind) in [(hash, KeyType::Hash), (range, KeyType::Range)] {
        request = request
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(attr)
                    .key_type(kind)
                    .build()
                    .unwrap(),
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(attr)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .unwrap(),
            );
    }
    rt.block_on(request.send()).expect("bare table");
}

/// `tables create` on tables someone else created: it says exactly what each lacks (exit 1),
/// `--fix` adds the stream, TTL and indexes, and what cannot change in place (keys) stays
/// reported.
#[test]
fn tables_create_reports_what_existing_tables_lack_and_fix_adds_it() {
    let rt = runtime();
    let client = client(&rt);
    let prefix = format!("gap{}_", std::process::id());
    let names = TableNames::with_prefix(&prefix);
    bare_table(&rt, &client, &names.execution, "tenant_id", "execution_id");
    bare_table(
        &rt,
        &client,
        &names.await_interaction,
        "tenant_id",
        "interaction_id",
    );

    let outcomes = rt.block_on(create_all(&client, &names)).unwrap();
    let execution = outcomes.iter().find(|o| o.name == names.execution).unwrap();
    assert!(!execution.created);
    let gaps: Vec<&str> = execution.gaps.iter().map(|g| g.what.as_str()).collect();
    // TPF's template streams no execution table: only its TTL is missing.
    assert_eq!(gaps, ["TTL on ttl_epoch_s is off"]);
    let interaction = outcomes
        .iter()
        .find(|o| o.name == names.await_interaction)
        .unwrap();
    assert_eq!(
        interaction
            .gaps
            .iter()
            .filter(|g| g.what.starts_with("index ") && g.fixable)
            .count(),
        8,
        "{:?}",
        interaction.gaps
    );
    let continuation = interaction
        .gaps
        .iter()
        .find(|g| g.what.contains("await-interaction-continuation-work"))
        .expect("today's continuation index is named");
    assert_eq!(
        continuation.what,
        "index await-interaction-continuation-work (query_continuation_key S, query_continuation_due_epoch_ms N) is missing"
    );
    assert!(
        continuation.hint.contains("tables create --fix"),
        "{}",
        continuation.hint
    );
    assert!(
        interaction
            .gaps
            .iter()
            .any(|g| g.what == "stream NEW_AND_OLD_IMAGES is off"),
        "{:?}",
        interaction.gaps
    );
    assert!(outcomes
        .iter()
        .filter(|o| o.created)
        .all(|o| o.gaps.is_empty()));

    let endpoint = support::moto_endpoint();
    let tables = |extra: &[&str]| {
        let mut c = support::cli();
        c.args([
            "tables",
            "create",
            "--prefix",
            &prefix,
            "--endpoint-url",
            &endpoint,
        ]);
        c.args(extra);
        c.output().expect("run tpf-sfn")
    };
    let o = tables(&[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "differs {}\n  missing: TTL on ttl_epoch_s is off",
            names.execution
        )),
        "{out}"
    );
    assert!(out.contains("tables create --fix"), "{out}");

    let o = tables(&["--fix"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("  fixed:   stream NEW_AND_OLD_IMAGES is off"),
        "{out}"
    );
    let stream = described(&rt, &client, &names.await_interaction)
        .stream_specification()
        .cloned();
    assert!(stream.is_some_and(|s| s.stream_enabled()));

    let again = rt.block_on(create_all(&client, &names)).unwrap();
    assert!(
        again.iter().all(|o| o.gaps.is_empty()),
        "{:?}",
        again.iter().map(|o| &o.gaps).collect::<Vec<_>>()
    );

    // Keys cannot change in place: reported, and --fix leaves the table alone.
    let other = TableNames::with_prefix(&format!("keys{}_", std::process::id()));
    bare_table(&rt, &client, &other.await_unit, "tenant_id", "wrong_key");
    let outcomes = rt
        .block_on(tpf_sfn::aws::tables::create_all_with(&client, &other, true))
        .unwrap();
    let unit = outcomes
        .iter()
        .find(|o| o.name == other.await_unit)
        .unwrap();
    let keys = unit.open_gaps().next().expect("a key gap");
    assert_eq!(
        keys.what,
        "keys are (tenant_id, wrong_key), TPF's are (tenant_id S, unit_id S)"
    );
    assert!(!keys.fixable && !keys.fixed);

    // A binding table made without TPF's KMS encryption: the gap is named with the command
    // that closes it, and --fix, which changes nothing it cannot check, leaves it open.
    let bare_binding = TableNames::with_prefix(&format!("sse{}_", std::process::id()));
    bare_table(&rt, &client, &bare_binding.callback_binding, "pk", "sk");
    let outcomes = rt
        .block_on(tpf_sfn::aws::tables::create_all_with(
            &client,
            &bare_binding,
            true,
        ))
        .unwrap();
    let binding = outcomes
        .iter()
        .find(|o| o.name == bare_binding.callback_binding)
        .unwrap();
    let open: Vec<&str> = binding.open_gaps().map(|g| g.what.as_str()).collect();
    assert_eq!(
        open,
        ["server-side encryption with a KMS key is off"],
        "{:?}",
        binding.gaps
    );
    let sse = binding.open_gaps().next().unwrap();
    assert!(!sse.fixable);
    assert!(
        sse.hint
            .contains("--sse-specification Enabled=true,SSEType=KMS"),
        "{}",
        sse.hint
    );
}

/// Today's TPF writes `redrive_intent` and `failed_step_index` on every new execution row, and a
/// re-drive writes `redrive_intent`; the store does the same, and keeps the attributes it does
/// not interpret (circuit deferral, payload references, the initial input) through its own
/// writes and reads of a row TPF wrote.
#[test]
fn execution_rows_carry_todays_attributes_through_the_stores_writes() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use tpf_model::ExecutionStore;
    use tpf_sfn::aws::dynamo_item::to_sdk;
    use tpf_wire::records::{execution_attr, Item};

    let rt = runtime();
    let client = client(&rt);
    let store = fresh_store(&rt, &client);
    let table = store.tables().execution.clone();
    let raw = |id: &str| -> Item {
        let got = rt
            .block_on(
                client
                    .get_item()
                    .table_name(&table)
                    .key("tenant_id", AttributeValue::S("t".into()))
                    .key("execution_id", AttributeValue::S(id.into()))
                    .consistent_read(true)
                    .send(),
            )
            .unwrap();
        from_sdk(got.item().expect("row"))
    };
    let created = store
        .create_or_get_execution(&conformance::create_command("t", "k", T0))
        .unwrap()
        .record;
    let id = created.execution_id.clone();
    let item = raw(&id);
    assert_eq!(
        item.get("redrive_intent"),
        Some(&AttrValue::S("REPLAY".into()))
    );
    assert_eq!(
        item.get("failed_step_index"),
        Some(&AttrValue::N("-1".into()))
    );

    // The row as TPF writes it with every other new attribute, but without a re-drive intent
    // (as August's TPF left it).
    let mut row = item.clone();
    for name in execution_attr::CARRIED {
        let value = if name.contains("count") || name.ends_with("epoch_ms") {
            AttrValue::N("7".into())
        } else {
            AttrValue::S(format!("value of {name}"))
        };
        row.insert((*name).to_owned(), value);
    }
    row.remove("redrive_intent");
    rt.block_on(
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(to_sdk(&row)))
            .send(),
    )
    .unwrap();
    let read = store.get_execution("t", &id, T0).unwrap().unwrap();
    assert_eq!(read.carried.len(), execution_attr::CARRIED.len());
    assert_eq!(read.redrive_intent, "REPLAY", "TPF's default when absent");

    let claimed = store
        .claim_lease("t", &id, "w", T0, 30_000)
        .unwrap()
        .unwrap();
    let failed = store
        .mark_terminal_failure(
            "t",
            &id,
            claimed.version,
            ExecutionStatus::Failed,
            "tk",
            "E",
            "m",
            T0 + 1,
        )
        .unwrap()
        .unwrap();
    assert!(!raw(&id).contains_key("redrive_intent"));
    let redriven = store
        .redrive_terminal_execution("t", &id, failed.version, true, "redrive", T0 + 2)
        .unwrap()
        .unwrap();
    let after = raw(&id);
    assert_eq!(
        after.get("redrive_intent"),
        Some(&AttrValue::S("REPLAY".into())),
        "a re-drive writes its intent"
    );
    for name in execution_attr::CARRIED {
        assert_eq!(after.get(*name), row.get(*name), "{name}");
    }
    assert_eq!(redriven.carried, read.carried);
    assert_eq!(redriven.failed_step_index, -1);
}
