//! The bridge handler: a batch of DynamoDB Streams records in, the sequence number to resume
//! from out.
//!
//! Lambda resumes a stream shard at the lowest sequence number a handler reports failed and
//! delivers every later record again. So the handler stops at the first record that fails:
//! acting on later changes of the same execution before the failed one would reorder them, and
//! they come back anyway. A record handled before the failure is not redelivered; one that
//! failed half-way (a re-drive's start done, its wake not) is replayed whole, which is harmless
//! because "already done" answers count as done.

use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use aws_sdk_dynamodbstreams::types::AttributeValue;
use serde_dynamo::AttributeValue as LambdaValue;
use tpf_sfn_wakepath::bridge::images::Image;
use tpf_sfn_wakepath::bridge::{Change, PassReport, RecordHandler};
use tpf_sfn_wakepath::error::Error;

/// What one invocation did.
#[derive(Debug, Default)]
pub struct Batch {
    pub response: DynamoDbEventResponse,
    pub report: PassReport,
    /// Why the reported record failed.
    pub failure: Option<String>,
}

/// Handles one batch. `Err` only for a record from a stream this function is not configured
/// for: a deployment error, so the whole batch fails and the function's error alarm fires.
pub async fn handle(records: &RecordHandler, event: &Event) -> Result<Batch, Error> {
    let mut batch = Batch::default();
    for record in &event.records {
        let arn = record.event_source_arn.as_deref().unwrap_or_default();
        let source = records.source_of(arn).ok_or_else(|| {
            Error::new(
                "BRIDGE_UNKNOWN_STREAM",
                format!(
                    "a record from `{arn}`, which is neither the execution table's nor the \
                     wakeup table's stream"
                ),
            )
            .with_hint("check TPF_SFN_EXECUTION_TABLE and TPF_SFN_WAKEUP_TABLE")
        })?;
        let (old, new) = images(record);
        let change = Change {
            remove: record.event_name == "REMOVE",
            old: old.as_ref(),
            new: new.as_ref(),
        };
        if let Err(e) = records.handle(source, change, &mut batch.report).await {
            // The event types are non-exhaustive: built from their default.
            let mut failed = DynamoDbBatchItemFailure::default();
            failed.item_identifier = record.change.sequence_number.clone();
            batch.response.batch_item_failures.push(failed);
            batch.failure = Some(e.report().to_string());
            break;
        }
        batch.report.records += 1;
    }
    Ok(batch)
}

/// The record's old and new images in the shape the shared record work reads; an absent image
/// arrives as an empty item.
fn images(record: &EventRecord) -> (Option<Image>, Option<Image>) {
    let convert = |item: &serde_dynamo::Item| {
        let map: &HashMap<String, LambdaValue> = item.as_ref();
        (!map.is_empty()).then(|| {
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), value(v)?)))
                .collect::<Image>()
        })
    };
    (
        convert(&record.change.old_image),
        convert(&record.change.new_image),
    )
}

/// Scalars only: the bridge's decision reads strings and numbers of TPF's records and the
/// wakeup rows, nothing else.
fn value(v: &LambdaValue) -> Option<AttributeValue> {
    Some(match v {
        LambdaValue::S(s) => AttributeValue::S(s.clone()),
        LambdaValue::N(n) => AttributeValue::N(n.clone()),
        LambdaValue::Bool(b) => AttributeValue::Bool(*b),
        LambdaValue::Null(b) => AttributeValue::Null(*b),
        _ => return None,
    })
}
