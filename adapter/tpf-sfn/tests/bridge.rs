//! The wakeup bridge on moto: stream records of a new TPF execution start its pinned release's
//! driver once, checkpoints hold across passes, a replay counts as already done, and a token
//! registered for a record that is not parked is woken (here: an unknown token, already done).

use crate::support;

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::AttributeValue;
use tokio::runtime::Runtime;
use tpf_model::store::conformance::{create_command, NOW};
use tpf_model::ExecutionStore;
use tpf_sfn::aws::dynamo_store::DynamoStore;
use tpf_sfn::aws::tables::{create_all, TableNames};
use tpf_sfn::bridge::{Bridge, Machines};
use tpf_sfn_compiler::lowering::names::resource_name;

const PIPELINE: &str = "org.pipelineframework.restaurantapproval";

#[test]
fn stream_records_start_the_pinned_driver_once_and_wake_tokens() {
    let rt = Runtime::new().expect("runtime");
    let config = rt.block_on(support::moto_config());
    let ddb = aws_sdk_dynamodb::Client::new(&config);
    let sfn = aws_sdk_sfn::Client::new(&config);
    let names = TableNames::with_prefix(&format!("bridge{}_", std::process::id()));
    rt.block_on(create_all(&ddb, &names)).expect("tables");

    let release = format!("sha256:bridge{}", std::process::id());
    let name = resource_name("tpf", PIPELINE, &release, "driver");
    let machine_arn = rt
        .block_on(
            sfn.create_state_machine()
                .name(&name)
                .definition(r#"{"StartAt":"W","States":{"W":{"Type":"Pass","End":true}}}"#)
                .role_arn("arn:aws:iam::123456789012:role/tpf-sfn-test")
                .send(),
        )
        .expect("machine")
        .state_machine_arn()
        .to_owned();
    let arn_prefix = machine_arn
        .strip_suffix(&name)
        .expect("arn ends with the name")
        .to_owned();

    let store = DynamoStore::new(ddb.clone(), names.clone(), rt.handle().clone());
    let mut cmd = create_command("restaurant-demo", "order-1", NOW);
    cmd.pipeline_id = PIPELINE.into();
    cmd.release_version = release.clone();
    let record = store.create_or_get_execution(&cmd).expect("create").record;

    let bridge = Bridge::new(
        &config,
        names.clone(),
        Machines {
            arn_prefix,
            name_prefix: "tpf".into(),
        },
    );
    let first = rt.block_on(bridge.poll_once()).expect("pass");
    assert_eq!(first.started, 1, "{first:?}");
    let executions = rt
        .block_on(sfn.list_executions().state_machine_arn(&machine_arn).send())
        .expect("list");
    let started: Vec<&str> = executions.executions().iter().map(|e| e.name()).collect();
    assert_eq!(
        started,
        vec![record.execution_id.as_str()],
        "lineage = execution id"
    );

    let second = rt.block_on(bridge.poll_once()).expect("pass");
    assert_eq!(
        (second.started, second.already_done),
        (0, 0),
        "checkpointed: {second:?}"
    );

    // Each checkpoint write comes back on the wakeup table's stream once; a running bridge
    // reads past it and does not read it again.
    let idle = rt.block_on(bridge.poll_once()).expect("pass");
    assert_eq!((idle.records, idle.echoes), (0, 0), "{idle:?}");

    // A restart that lost the checkpoints replays everything: harmless.
    let rows = rt
        .block_on(ddb.scan().table_name(&names.wakeup).send())
        .expect("scan");
    for row in rows.items() {
        rt.block_on(
            ddb.delete_item()
                .table_name(&names.wakeup)
                .key("pk", row["pk"].clone())
                .key("sk", row["sk"].clone())
                .send(),
        )
        .expect("delete");
    }
    let bridge = Bridge::new(
        &config,
        names.clone(),
        Machines {
            arn_prefix: machine_arn
                .strip_suffix(&name)
                .expect("arn ends with the name")
                .to_owned(),
            name_prefix: "tpf".into(),
        },
    );
    let replay = rt.block_on(bridge.poll_once()).expect("replay");
    assert_eq!(replay.started, 0, "{replay:?}");
    assert!(replay.already_done >= 1, "{replay:?}");

    // A driver registers a token while TPF's record is not parked on that unit: wake it.
    rt.block_on(
        ddb.put_item()
            .table_name(&names.wakeup)
            .item(
                "pk",
                AttributeValue::S(format!("restaurant-demo#{}", record.execution_id)),
            )
            .item("sk", AttributeValue::S("wakeup".into()))
            .item("task_token", AttributeValue::S("not-a-real-token".into()))
            .item("unit_id", AttributeValue::S("u".into()))
            // A Step Functions driver's token row: the ARN is what routes the wake to
            // SendTaskSuccess (a durable execution's would go to its callback).
            .item(
                "execution_arn",
                AttributeValue::S("arn:aws:states:us-east-1:123456789012:execution:m:e".into()),
            )
            .item(
                "expires_at",
                AttributeValue::N((NOW / 1000 + 60).to_string()),
            )
            .send(),
    )
    .expect("token");
    let woke = rt.block_on(bridge.poll_once()).expect("wake pass");
    assert_eq!(woke.woken + woke.already_done, 1, "{woke:?}");
    assert_eq!(woke.started, 0);

    // Park on a unit, register that unit's token (no action: still parked), then admit the
    // completion: the record leaving WAITING_EXTERNAL wakes exactly that token.
    let id = record.execution_id.as_str();
    let claimed = store
        .claim_lease("restaurant-demo", id, "w", NOW, 30_000)
        .expect("claim")
        .expect("claimable");
    store
        .mark_waiting_external("restaurant-demo", id, claimed.version, "k", "u2", 2, NOW)
        .expect("park")
        .expect("parked");
    rt.block_on(
        ddb.put_item()
            .table_name(&names.wakeup)
            .item("pk", AttributeValue::S(format!("restaurant-demo#{id}")))
            .item("sk", AttributeValue::S("wakeup".into()))
            .item("task_token", AttributeValue::S("tok-2".into()))
            .item("unit_id", AttributeValue::S("u2".into()))
            .send(),
    )
    .expect("token");
    let parked = rt.block_on(bridge.poll_once()).expect("parked pass");
    assert_eq!(
        parked.woken + parked.already_done + parked.started,
        0,
        "{parked:?}"
    );
    store
        .mark_await_completed("restaurant-demo", id, "u2", 3, NOW + 1)
        .expect("complete")
        .expect("released");
    let released = rt.block_on(bridge.poll_once()).expect("released pass");
    assert_eq!(released.woken + released.already_done, 1, "{released:?}");
    assert_eq!(released.started, 0);

    // A terminal failure re-driven by an operator starts a new lineage on the same machine.
    let claimed = store
        .claim_lease("restaurant-demo", id, "w", NOW + 2, 30_000)
        .expect("claim")
        .expect("claimable");
    let failed = store
        .mark_terminal_failure(
            "restaurant-demo",
            id,
            claimed.version,
            tpf_wire::records::ExecutionStatus::Failed,
            "k",
            "E",
            "m",
            NOW + 3,
        )
        .expect("fail")
        .expect("failed");
    let redriven = store
        .redrive_terminal_execution("restaurant-demo", id, failed.version, true, "r", NOW + 4)
        .expect("redrive")
        .expect("redriven");
    let pass = rt.block_on(bridge.poll_once()).expect("redrive pass");
    assert_eq!(pass.started, 1, "{pass:?}");
    let names: Vec<String> = rt
        .block_on(sfn.list_executions().state_machine_arn(&machine_arn).send())
        .expect("list")
        .executions()
        .iter()
        .map(|e| e.name().to_owned())
        .collect();
    assert!(
        names.contains(&format!("{id}-r{}", redriven.version)),
        "{names:?}"
    );

    // A release whose driver is not deployed is reported and skipped, not a stuck shard.
    let mut orphan = create_command("restaurant-demo", "order-2", NOW);
    orphan.pipeline_id = PIPELINE.into();
    orphan.release_version = "sha256:not-deployed".into();
    store.create_or_get_execution(&orphan).expect("create");
    let pass = rt.block_on(bridge.poll_once()).expect("orphan pass");
    assert_eq!(pass.refused.len(), 1, "{pass:?}");
    let after = rt.block_on(bridge.poll_once()).expect("next pass");
    assert!(
        after.refused.is_empty(),
        "checkpoint moved past it: {after:?}"
    );
}

/// A loopback proxy in front of `upstream` (moto) that keeps every request it forwards, so a
/// test can count the operations the bridge asked for (`x-amz-target` names each one).
fn recording_proxy(upstream: &str) -> (String, Arc<Mutex<String>>) {
    use std::io::{Read, Write};
    let upstream = upstream
        .strip_prefix("http://")
        .expect("moto is plain http")
        .trim_end_matches('/')
        .to_owned();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
    let log = Arc::new(Mutex::new(String::new()));
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                continue;
            };
            let (mut from_server, mut to_client) = (
                server.try_clone().expect("clone"),
                client.try_clone().expect("clone"),
            );
            std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
            let (mut client, mut server, log) = (client, server, Arc::clone(&kept));
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = client.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    log.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = server.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (endpoint, log)
}

/// A steady poll asks the streams for records and nothing else: after the first pass the
/// bridge describes neither stream again and opens no new shard iterator, and a new record is
/// still read through the iterator the last batch handed back. (An emulator that keeps every
/// iterator it issues grew by two per shard and pass before; now by one.)
#[test]
fn a_steady_poll_reads_on_through_the_iterators_it_was_handed() {
    let rt = Runtime::new().expect("runtime");
    let config = rt.block_on(support::moto_config());
    let ddb = aws_sdk_dynamodb::Client::new(&config);
    let names = TableNames::with_prefix(&format!("steady{}_", std::process::id()));
    rt.block_on(create_all(&ddb, &names)).expect("tables");
    let (endpoint, log) = recording_proxy(&support::moto_endpoint());
    let proxied = config.to_builder().endpoint_url(endpoint).build();
    let bridge = Bridge::new(
        &proxied,
        names.clone(),
        Machines {
            arn_prefix: "arn:aws:states:us-east-1:123456789012:stateMachine:".into(),
            name_prefix: "tpf".into(),
        },
    );
    let count = |operation: &str| log.lock().unwrap().matches(operation).count();
    let (describe_table, describe_stream, open, read) = (
        "DynamoDB_20120810.DescribeTable",
        "DynamoDBStreams_20120810.DescribeStream",
        "DynamoDBStreams_20120810.GetShardIterator",
        "DynamoDBStreams_20120810.GetRecords",
    );

    rt.block_on(bridge.poll_once()).expect("first pass");
    // Two streams of one shard each on moto: each described, each shard opened once.
    assert_eq!(count(describe_table), 2);
    assert_eq!(count(describe_stream), 2);
    assert_eq!(count(open), 2);
    let reads = count(read);
    for _ in 0..3 {
        rt.block_on(bridge.poll_once()).expect("idle pass");
    }
    assert_eq!(
        count(read),
        reads + 3 * 2,
        "one read per shard and idle pass"
    );

    // A new execution whose driver is not deployed: read, reported and skipped.
    let store = DynamoStore::new(ddb.clone(), names.clone(), rt.handle().clone());
    let mut cmd = create_command("restaurant-demo", "steady-1", NOW);
    cmd.pipeline_id = PIPELINE.into();
    cmd.release_version = "sha256:not-deployed".into();
    store.create_or_get_execution(&cmd).expect("create");
    let pass = rt.block_on(bridge.poll_once()).expect("pass with a record");
    assert_eq!(pass.refused.len(), 1, "{pass:?}");
    assert!(pass.records >= 1, "{pass:?}");

    assert_eq!(count(describe_table), 2, "described again");
    assert_eq!(count(describe_stream), 2, "described again");
    assert_eq!(count(open), 2, "a new iterator for a shard already open");
}
