//! The wake path as Lambda runs it, on moto: event source mappings that poll moto's streams and
//! queue the way Lambda's do, and invoke the bridge and relay handlers (`tpf-sfn-lambda`) in
//! this process with the payloads Lambda delivers (`aws_lambda_events` shapes, built from the
//! records moto returned and deserialised the way `lambda_runtime` does).
//!
//! What the mappings keep of Lambda's behaviour, because the handlers rely on it:
//! - streams: per-shard order; a batch's reported failure resumes the shard at the lowest
//!   failed sequence number, so every later record of the batch comes back too; positions
//!   survive the function being down (a "killed" bridge resumes where it stopped);
//! - queue: messages the response does not name are deleted, the named ones stay in flight and
//!   come back after the visibility timeout.
//!
//! Filters are not applied: the handlers must cope with every record a stream carries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use serde_json::{json, Map, Value};
use tpf_sfn::bridge::RecordHandler;
use tpf_sfn::relay::http::ActionHost;
use tpf_sfn::relay::TaskRelay;

use super::AbortOnDrop;
use crate::support::streams::lambda_record;

/// What the mappings delivered, for assertions.
#[derive(Debug, Default, Clone)]
pub struct Deliveries {
    pub invocations: usize,
    /// Records or messages handed to a handler, redeliveries included.
    pub delivered: usize,
    /// Items a response reported failed.
    pub reported_failed: usize,
    /// Per stream sequence number or message id: how often it was delivered.
    pub per_item: HashMap<String, usize>,
}

impl Deliveries {
    fn count(&mut self, item: &str) {
        self.delivered += 1;
        *self.per_item.entry(item.to_owned()).or_default() += 1;
    }

    /// Items delivered more than once.
    pub fn redelivered(&self) -> usize {
        self.per_item.values().filter(|n| **n > 1).count()
    }
}

pub type Shared = Arc<Mutex<Deliveries>>;

/// Positions of the stream mappings, `stream#shard` → last sequence number the function took.
pub type Positions = Arc<Mutex<HashMap<String, String>>>;

/// The stream mapping of one table: invokes `handler` with batches of up to 100 records.
pub fn stream_mapping(
    streams: aws_sdk_dynamodbstreams::Client,
    ddb: aws_sdk_dynamodb::Client,
    table: String,
    handler: Arc<RecordHandler>,
    positions: Positions,
    deliveries: Shared,
) -> AbortOnDrop {
    AbortOnDrop(tokio::spawn(async move {
        let stream_arn = ddb
            .describe_table()
            .table_name(&table)
            .send()
            .await
            .expect("describe table")
            .table()
            .and_then(|t| t.latest_stream_arn())
            .expect("table has a stream")
            .to_owned();
        loop {
            let shards: Vec<String> = streams
                .describe_stream()
                .stream_arn(&stream_arn)
                .send()
                .await
                .expect("describe stream")
                .stream_description()
                .map(|d| {
                    d.shards()
                        .iter()
                        .filter_map(|s| s.shard_id().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            for shard in shards {
                poll_shard(
                    &streams,
                    &stream_arn,
                    &shard,
                    &handler,
                    &positions,
                    &deliveries,
                )
                .await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }))
}

async fn poll_shard(
    streams: &aws_sdk_dynamodbstreams::Client,
    stream_arn: &str,
    shard: &str,
    handler: &RecordHandler,
    positions: &Positions,
    deliveries: &Shared,
) {
    let key = format!("{stream_arn}#{shard}");
    let after = positions.lock().expect("positions").get(&key).cloned();
    let request = streams
        .get_shard_iterator()
        .stream_arn(stream_arn)
        .shard_id(shard);
    let request = match &after {
        Some(seq) => request
            .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
            .sequence_number(seq),
        None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
    };
    let Some(iterator) = request
        .send()
        .await
        .expect("shard iterator")
        .shard_iterator()
        .map(str::to_owned)
    else {
        return;
    };
    let out = streams
        .get_records()
        .shard_iterator(iterator)
        .limit(100)
        .send()
        .await
        .expect("get records");
    let records = out.records();
    if records.is_empty() {
        return;
    }
    let payload = json!({"Records": records.iter().map(|r| lambda_record(r, stream_arn)).collect::<Vec<_>>()});
    let event: StreamEvent = serde_json::from_value(payload).expect("a Lambda DynamoDB event");
    let sequence = |r: &Record| {
        r.dynamodb()
            .and_then(|d| d.sequence_number())
            .unwrap_or_default()
            .to_owned()
    };
    {
        let mut d = deliveries.lock().expect("deliveries");
        d.invocations += 1;
        for r in records {
            d.count(&sequence(r));
        }
    }
    let batch = tpf_sfn_lambda::bridge::handle(handler, &event)
        .await
        .expect("records of the bridge's own streams");
    let failed: Vec<String> = batch
        .response
        .batch_item_failures
        .iter()
        .filter_map(|f| f.item_identifier.clone())
        .collect();
    deliveries.lock().expect("deliveries").reported_failed += failed.len();
    // Resume after the last record before the lowest failed one (sequence numbers of a shard
    // grow with the position, so the batch's order is theirs).
    let resume = match failed
        .iter()
        .filter_map(|f| records.iter().position(|r| &sequence(r) == f))
        .min()
    {
        None => records.last().map(sequence),
        Some(0) => after,
        Some(i) => Some(sequence(&records[i - 1])),
    };
    let mut p = positions.lock().expect("positions");
    match resume {
        Some(seq) => p.insert(key, seq),
        None => p.remove(&key),
    };
}

/// The queue's mapping: invokes the relay handler with batches of up to ten messages, deletes
/// what the response does not name.
pub fn queue_mapping<A>(
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    relay: TaskRelay<A>,
    deliveries: Shared,
) -> AbortOnDrop
where
    A: ActionHost + Send + Sync + 'static,
{
    AbortOnDrop(tokio::spawn(async move {
        let queue_arn = sqs
            .get_queue_attributes()
            .queue_url(&queue_url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
            .send()
            .await
            .expect("queue attributes")
            .attributes()
            .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
            .cloned()
            .unwrap_or_default();
        loop {
            let received = sqs
                .receive_message()
                .queue_url(&queue_url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
                .send()
                .await
                .expect("receive");
            let messages = received.messages();
            if messages.is_empty() {
                continue;
            }
            let records: Vec<Value> = messages
                .iter()
                .map(|m| {
                    let attributes: Map<String, Value> = m
                        .attributes()
                        .map(|a| {
                            a.iter()
                                .map(|(k, v)| (k.as_str().to_owned(), json!(v)))
                                .collect()
                        })
                        .unwrap_or_default();
                    json!({
                        "messageId": m.message_id(),
                        "receiptHandle": m.receipt_handle(),
                        "body": m.body(),
                        "attributes": attributes,
                        "messageAttributes": {},
                        "md5OfBody": m.md5_of_body(),
                        "eventSource": "aws:sqs",
                        "eventSourceARN": queue_arn,
                        "awsRegion": "us-east-1"
                    })
                })
                .collect();
            let event: SqsEvent =
                serde_json::from_value(json!({ "Records": records })).expect("a Lambda SQS event");
            {
                let mut d = deliveries.lock().expect("deliveries");
                d.invocations += 1;
                for m in messages {
                    d.count(m.message_id().unwrap_or_default());
                }
            }
            let batch = tpf_sfn_lambda::relay::handle(&relay, &event).await;
            let failed: Vec<&str> = batch
                .response
                .batch_item_failures
                .iter()
                .map(|f| f.item_identifier.as_str())
                .collect();
            deliveries.lock().expect("deliveries").reported_failed += failed.len();
            for m in messages {
                if failed.contains(&m.message_id().unwrap_or_default()) {
                    continue;
                }
                if let Some(receipt) = m.receipt_handle() {
                    sqs.delete_message()
                        .queue_url(&queue_url)
                        .receipt_handle(receipt)
                        .send()
                        .await
                        .expect("delete");
                }
            }
        }
    }))
}
