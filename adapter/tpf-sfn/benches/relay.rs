//! Relay throughput on moto: the gateway binding's queue transport through SQS → `Relay` →
//! `serve`'s gateway route (in process, memory store) over HTTP → SendTaskSuccess →
//! DeleteMessage.
//!
//! `cargo bench -p tpf-sfn --bench relay` (starts moto with scripts/moto.sh unless
//! TPF_SFN_MOTO_ENDPOINT names one). Each message is a gateway SUBMIT of a new restaurant
//! execution: TPF's work function runs its first segment in process and parks it at the await.
//! The task tokens are not moto's, so every answer comes back `InvalidToken` ("already done"),
//! which costs moto the same lookup a live token does.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use tpf_sfn::relay::gateway::GatewayRelay;
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
    let addr = support::spawn_host(support::host::activated(TENANT, TOKEN)).await;

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
    let mut relay =
        Relay::with_handler(sqs.clone(), queue_url.clone(), GatewayRelay::new(sfn, host));
    relay.wait_seconds = 0;

    println!("relay throughput on moto ({MESSAGES} messages per round, gateway host in process)");
    for concurrency in [1, 10] {
        relay.concurrency = concurrency;
        let mut rates = Vec::new();
        for round in 0..ROUNDS {
            enqueue(&sqs, &queue_url, &format!("c{concurrency}r{round}")).await;
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

/// Queues `MESSAGES` gateway SUBMITs, each of a new execution.
async fn enqueue(sqs: &aws_sdk_sqs::Client, queue_url: &str, tag: &str) {
    let bodies: Vec<String> = (0..MESSAGES)
        .map(|i| {
            let key = format!("{tag}-{i}");
            json!({
                "gatewayRequest": support::host::gateway_submit(TENANT, &key),
                "taskToken": format!("bench-{key}"),
                "park": false,
            })
            .to_string()
        })
        .collect();
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
