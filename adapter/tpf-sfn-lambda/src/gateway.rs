//! The gateway host's three functions (`docs/runtime.md`, "The gateway host"):
//!
//! - the wake-up ([`wakeup_batch`]): DynamoDB Streams batches of TPF's await-interaction table
//!   and of the callback-binding table, each record through
//!   `tpf_sfn_wakepath::gateway::wakeup::Wakeup`, every retried record reported as a batch item
//!   failure;
//! - the reconciler ([`reconcile`]): an EventBridge status-change event of a driver execution;
//! - the starter ([`start`]): TPF's `AwsDurableExecutionInput` in, TPF's
//!   `AwsDurableStartResponse` out.

use std::collections::HashMap;
use std::time::Duration;

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use serde_dynamo::AttributeValue as LambdaValue;
use serde_json::Value;
use tpf_sfn_wakepath::error::Error;
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::{Gateway, HttpInvoker, Invoker, LambdaInvoker};
use tpf_sfn_wakepath::gateway::provider::Providers;
use tpf_sfn_wakepath::gateway::reads::AwsHost;
use tpf_sfn_wakepath::gateway::reconciler::{Reconciled, Reconciler};
use tpf_sfn_wakepath::gateway::starter::Starter;
use tpf_sfn_wakepath::gateway::wakeup::{system_now_ms, Wakeup, Woke};
use tpf_sfn_wakeup::wake::Disposition;
use tpf_wire::gateway::start::{ExecutionInput, StartResponse};
use tpf_wire::records::{AttrValue, Item};

use crate::config::{Drivers, GatewayHost, GatewaySetting};

/// How long one call to `serve`'s local gateway may take.
const LOCAL_GATEWAY_TIMEOUT: Duration = Duration::from_secs(30);

/// The host's pieces from its settings and the SDK's configuration.
pub fn pieces(
    settings: &GatewayHost,
    config: &aws_config::SdkConfig,
) -> Result<(AwsHost<Gateway>, Starter), Error> {
    let lambda = aws_sdk_lambda::Client::new(config);
    let sfn = aws_sdk_sfn::Client::new(config);
    let gateway = match &settings.gateway {
        GatewaySetting::Function(arn) => Gateway::Lambda(LambdaInvoker::new(lambda.clone(), arn)?),
        GatewaySetting::Url(url) => Gateway::Http(HttpInvoker::new(url, LOCAL_GATEWAY_TIMEOUT)?),
    };
    let host = AwsHost {
        gateway,
        bindings: BindingTable::new(
            aws_sdk_dynamodb::Client::new(config),
            &settings.binding_table,
        ),
        providers: Providers {
            sfn: sfn.clone(),
            lambda: lambda.clone(),
        },
    };
    Ok((host, starter(&settings.drivers, config)))
}

/// The starter alone (TPF's ingress function reads nothing else).
pub fn starter(drivers: &Drivers, config: &aws_config::SdkConfig) -> Starter {
    Starter {
        sfn: aws_sdk_sfn::Client::new(config),
        lambda: aws_sdk_lambda::Client::new(config),
        machines: drivers.machines.clone(),
        durable: drivers.durable.clone(),
    }
}

/// What one wake-up invocation did, for its log line.
#[derive(Debug, Default)]
pub struct WakeBatch {
    pub response: DynamoDbEventResponse,
    pub acknowledged: usize,
    pub bound: usize,
    pub delivered: usize,
    pub replaced: usize,
    /// Each retried record: its sequence number and why.
    pub retried: Vec<String>,
}

/// Handles one stream batch. Every record is decided (TPF's processor goes through the whole
/// batch); each one retried, by the decision or by an error, is a batch item failure, so
/// Lambda delivers it again (with `BisectBatchOnFunctionError` the failed half shrinks until
/// the failing record is alone, then the mapping's retries and age send it to the on-failure
/// queue).
pub async fn wakeup_batch<I: Invoker>(wakeup: &Wakeup<I>, event: &Event) -> WakeBatch {
    let mut batch = WakeBatch::default();
    for record in &event.records {
        let image = new_image(record);
        let why = match wakeup.on_record(image.as_ref()).await {
            Ok((Disposition::Acknowledge, woke)) => {
                match woke {
                    Woke::Acknowledged => batch.acknowledged += 1,
                    Woke::Bound => batch.bound += 1,
                    Woke::Delivered(_) => batch.delivered += 1,
                    Woke::Replaced(_) => batch.replaced += 1,
                }
                continue;
            }
            Ok((Disposition::Retry(reason), _)) => format!("{reason:?}"),
            Err(e) => e.report().to_string(),
        };
        let sequence = record.change.sequence_number.clone();
        batch.retried.push(format!(
            "{}: {why}",
            sequence.as_deref().unwrap_or("(no sequence number)")
        ));
        // The event types are non-exhaustive: built from their default.
        let mut failed = DynamoDbBatchItemFailure::default();
        failed.item_identifier = sequence;
        batch.response.batch_item_failures.push(failed);
    }
    batch
}

/// The record's new image as TPF's rows are read (`None` when it has none: a removal).
fn new_image(record: &EventRecord) -> Option<Item> {
    let map: &HashMap<String, LambdaValue> = record.change.new_image.as_ref();
    (!map.is_empty()).then(|| {
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), value(v)?)))
            .collect()
    })
}

/// The attribute types TPF's rows use; any other (a map, a list, binary) is left out, and a
/// row missing what it needs is malformed, as TPF's reader finds it.
fn value(v: &LambdaValue) -> Option<AttrValue> {
    Some(match v {
        LambdaValue::S(s) => AttrValue::S(s.clone()),
        LambdaValue::N(n) => AttrValue::N(n.clone()),
        LambdaValue::Bool(b) => AttrValue::Bool(*b),
        LambdaValue::Ss(set) => AttrValue::Ss(set.iter().cloned().collect()),
        LambdaValue::Null(_) => AttrValue::Null,
        _ => return None,
    })
}

/// One status-change event; an `Err` fails the invocation so EventBridge's asynchronous invoke
/// retries it.
pub async fn reconcile<I: Invoker>(
    reconciler: &Reconciler<I>,
    event: &Value,
) -> Result<Reconciled, Error> {
    reconciler.on_event(event).await
}

/// TPF's ingress: the input as TPF's starter payload reads it, then the start.
pub async fn start(starter: &Starter, payload: &Value) -> Result<StartResponse, Error> {
    let input = ExecutionInput::read_value(payload, tpf_wire::gateway::Mapper::Durable).map_err(|e| {
        Error::new(
            "GATEWAY_HOST_START_INPUT",
            "the starter's input is not TPF's AwsDurableExecutionInput",
        )
        .with_source(e)
        .with_hint("send {tenantId, idempotencyKey, pipelineId, contractVersion, releaseVersion, inputJson, resumeExecutionId, generation}")
    })?;
    starter.start(&input).await
}

/// The wake-up's settings built into its worker.
pub fn wakeup(host: AwsHost<Gateway>, starter: Starter) -> Wakeup<Gateway> {
    Wakeup {
        host,
        starter,
        now_ms: system_now_ms,
    }
}
