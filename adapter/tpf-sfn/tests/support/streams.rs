//! DynamoDB stream records as Lambda's event source mapping hands them to a function: the
//! Streams API's record in the `aws_lambda_events` DynamoDB event's JSON shape. Shared by the
//! tests that run the stream handlers in process on moto's streams.

use std::collections::HashMap;

use aws_sdk_dynamodbstreams::types::{AttributeValue, Record};
use serde_json::{json, Map, Value};

/// DynamoDB JSON of one attribute value, as the Streams API and Lambda events carry it.
fn attribute(v: &AttributeValue) -> Value {
    match v {
        AttributeValue::S(s) => json!({"S": s}),
        AttributeValue::N(n) => json!({"N": n}),
        AttributeValue::Bool(b) => json!({"BOOL": b}),
        AttributeValue::Null(b) => json!({"NULL": b}),
        AttributeValue::Ss(v) => json!({"SS": v}),
        AttributeValue::Ns(v) => json!({"NS": v}),
        AttributeValue::L(v) => json!({"L": v.iter().map(attribute).collect::<Vec<_>>()}),
        AttributeValue::M(m) => json!({"M": image(m)}),
        other => panic!("TPF's tables and the wakeup table hold no {other:?}"),
    }
}

fn image(m: &HashMap<String, AttributeValue>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.clone(), attribute(v))).collect())
}

/// One stream record as Lambda's event carries it: the Streams API record plus its source.
pub fn lambda_record(record: &Record, stream_arn: &str) -> Value {
    let mut dynamodb = Map::new();
    if let Some(d) = record.dynamodb() {
        if let Some(t) = d.approximate_creation_date_time() {
            dynamodb.insert("ApproximateCreationDateTime".into(), json!(t.secs() as f64));
        }
        if let Some(k) = d.keys() {
            dynamodb.insert("Keys".into(), image(k));
        }
        if let Some(n) = d.new_image() {
            dynamodb.insert("NewImage".into(), image(n));
        }
        if let Some(o) = d.old_image() {
            dynamodb.insert("OldImage".into(), image(o));
        }
        dynamodb.insert("SequenceNumber".into(), json!(d.sequence_number()));
        dynamodb.insert("SizeBytes".into(), json!(d.size_bytes().unwrap_or(0)));
        dynamodb.insert(
            "StreamViewType".into(),
            json!(d.stream_view_type().map(|v| v.as_str())),
        );
    }
    json!({
        "eventID": record.event_id(),
        "eventName": record.event_name().map(|e| e.as_str()),
        "eventVersion": record.event_version(),
        "eventSource": "aws:dynamodb",
        "awsRegion": record.aws_region(),
        "dynamodb": dynamodb,
        "eventSourceARN": stream_arn
    })
}
