//! Relay throughput on moto: action messages through SQS → `Relay` → the reference action host
//! (in process, memory store) over HTTP → SendTaskSuccess → DeleteMessage.
//!
//! `cargo bench -p tpf-sfn --bench relay` (starts moto with scripts/moto.sh unless
//! TPF_SFN_MOTO_ENDPOINT names one). Each message is a real process-work-item for a submitted
//! restaurant execution: the host runs its first segment and parks it at the await. The task
//! tokens are not moto's, so every answer comes back `InvalidToken` ("already done"), which
//! costs moto the same lookup a live token does.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tpf_model::coordinator::local_release;
use tpf_model::{ActionHost, Coordinator, InMemoryStore};
use tpf_sfn::host::pipeline;
use tpf_sfn::host::{system_clock, HostState};
use tpf_sfn::relay::http::HttpActionHost;
use tpf_sfn::relay::Relay;

const TOKEN: &str = "bench-token";
const TENANT: &str = "bench";
const MESSAGES: usize = 200;
const ROUNDS: usize = 3;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(bench());
}

async fn bench() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/contracts/restaurant-approval.pipeline-contract.json"
    );
    let bytes = std::fs::read(path).expect("contract");
    let hosted = pipeline::load(path, &bytes, &[], None, 30 * 60 * 1000).expect("pipeline");
    let identity = hosted.identity.clone();
    let mut coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let now = system_clock();
    coordinator
        .register_release(&local_release(TENANT, &identity, now))
        .expect("register");
    coordinator
        .activate_release(
            TENANT,
            &identity.pipeline_id,
            &identity.release_version,
            now,
        )
        .expect("activate");
    let addr = support::spawn_host(Arc::new(HostState::new(
        ActionHost::new(coordinator),
        TOKEN.to_owned(),
        system_clock,
    )))
    .await;

    let config = support::moto_config().await;
    let sqs = aws_sdk_sqs::Client::new(&config);
    let sfn = aws_sdk_sfn::Client::new(&config);
    let queue_url = sqs
        .create_queue()
        .queue_name(support::unique("relay-bench"))
        .send()
        .await
        .expect("queue")
        .queue_url()
        .expect("url")
        .to_owned();
    let host = HttpActionHost::new(
        &format!("http://{addr}"),
        Some(TOKEN.to_owned()),
        Duration::from_secs(30),
    )
    .expect("action url");
    let mut relay = Relay::new(sqs.clone(), sfn, queue_url.clone(), host);
    relay.wait_seconds = 0;

    println!("relay throughput on moto ({MESSAGES} messages per round, action host in process)");
    for concurrency in [1, 10] {
        relay.concurrency = concurrency;
        let mut rates = Vec::new();
        for round in 0..ROUNDS {
            enqueue(
                addr,
                &sqs,
                &queue_url,
                &identity,
                &format!("c{concurrency}r{round}"),
            )
            .await;
            let started = Instant::now();
            let mut done = 0;
            while done < MESSAGES {
                let pass = relay.poll_once().await.expect("relay pass");
                assert!(pass.retained.is_empty(), "{:?}", pass.retained);
                done += pass.received;
            }
            let elapsed = started.elapsed();
            rates.push(MESSAGES as f64 / elapsed.as_secs_f64());
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "  concurrency {concurrency:>2}: median {:.0} msg/s (rounds: {})",
            rates[ROUNDS / 2],
            rates
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Submits `MESSAGES` executions and queues one process-work-item message for each.
async fn enqueue(
    addr: std::net::SocketAddr,
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    identity: &tpf_wire::Identity,
    tag: &str,
) {
    let mut bodies = Vec::with_capacity(MESSAGES);
    for i in 0..MESSAGES {
        let key = format!("{tag}-{i}");
        let r = support::http::submit(addr, TOKEN, TENANT, &identity.pipeline_id, &key).await;
        let execution = r.body["executionId"].as_str().expect("executionId");
        bodies.push(
            json!({
                "action": "process-work-item", "tenantId": TENANT, "executionId": execution,
                "taskToken": format!("bench-{key}"),
                "request": {
                    "pipelineId": identity.pipeline_id,
                    "contractVersion": identity.contract_version,
                    "releaseVersion": identity.release_version,
                    "idempotencyKey": format!("{execution}:g0:i0"),
                }
            })
            .to_string(),
        );
    }
    for (n, chunk) in bodies.chunks(10).enumerate() {
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, body)| {
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("m{n}-{i}"))
                    .message_body(body)
                    .build()
                    .expect("entry")
            })
            .collect::<Vec<_>>();
        sqs.send_message_batch()
            .queue_url(queue_url)
            .set_entries(Some(entries))
            .send()
            .await
            .expect("send batch");
    }
}
