//! The gateway host's two event sources run by a process, for the local loop (`tpf-sfn dev`)
//! and for tests on an emulator: what Lambda's event source mappings and EventBridge do on AWS.
//!
//! - [`StreamMapping`]: reads the streams of TPF's await-interaction table and of the
//!   callback-binding table shard by shard and hands each record's new image to the wake-up
//!   function's own per-record work ([`Wakeup::on_record`]). A retried record stops its shard
//!   and is read again on the next pass, with every record after it, as a mapping resumes at
//!   the lowest batch item failure; after [`MAX_RETRIES`] retries it is passed over, as the
//!   mapping's retry bound sends it to its on-failure destination (TPF's template: 5 retries),
//!   so one record cannot hold its shard forever. Positions live in the process: after a restart the streams
//!   are read from their oldest record again, which the wake-up answers the same way (a
//!   delivered await has its DELIVERY row, a bound one its BINDING).
//! - [`StatusChanges`]: lists the release drivers' executions and hands each one that ended to
//!   the reconciler as EventBridge's `Step Functions Execution Status Change` event would, or
//!   for durable driver functions, its `Durable Execution Status Change` event.

use std::collections::{HashMap, HashSet};

use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use serde_json::json;

use super::invoke::Invoker;
use super::reconciler::{Reconciled, Reconciler};
use super::wakeup::{Wakeup, Woke};
use crate::aws::errors;
use crate::aws::item::from_stream_image;
use crate::error::Error;
use tpf_sfn_wakeup::reconcile::event;
use tpf_sfn_wakeup::wake::Disposition;

/// `GATEWAY_LOCAL_…`: a failed read of a stream or of the drivers' executions.
const SCOPE: &str = "GATEWAY_LOCAL";

/// Most records one GetRecords returns to a mapping (Lambda's batch size bound).
const BATCH: i32 = 100;

/// Retries of one record before it is passed over (TPF's template's `MaximumRetryAttempts`).
pub const MAX_RETRIES: u32 = 5;

/// What one pass over the streams did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StreamPass {
    pub records: usize,
    pub bound: usize,
    pub delivered: usize,
    pub replaced: usize,
    /// Records left to be read again, each with why.
    pub retried: Vec<String>,
    /// Records passed over after their last retry, each with why.
    pub passed_over: Vec<String>,
}

/// The wake-up's stream mappings, polled.
pub struct StreamMapping {
    ddb: aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    tables: Vec<String>,
    /// `stream#shard` → the last sequence number the wake-up acknowledged.
    positions: HashMap<String, String>,
    /// `stream#shard` → the record being retried and its retries so far.
    retries: HashMap<String, (String, u32)>,
}

impl StreamMapping {
    /// Mappings on `tables`' streams (TPF's await-interaction table and the callback-binding
    /// table).
    pub fn new(config: &aws_config::SdkConfig, tables: Vec<String>) -> Self {
        Self {
            ddb: aws_sdk_dynamodb::Client::new(config),
            streams: aws_sdk_dynamodbstreams::Client::new(config),
            tables,
            positions: HashMap::new(),
            retries: HashMap::new(),
        }
    }

    /// Reads every shard of every stream to its current end (or to its first retried record).
    pub async fn poll_once<I: Invoker>(&mut self, wakeup: &Wakeup<I>) -> Result<StreamPass, Error> {
        let mut pass = StreamPass::default();
        for table in self.tables.clone() {
            let arn = self
                .ddb
                .describe_table()
                .table_name(&table)
                .send()
                .await
                .map_err(|e| errors::from_sdk(SCOPE, "DescribeTable", e, |_| None))?
                .table()
                .and_then(|t| t.latest_stream_arn())
                .map(str::to_owned)
                .ok_or_else(|| {
                    Error::new(
                        "GATEWAY_LOCAL_NO_STREAM",
                        format!("table {table} has no stream"),
                    )
                    .with_hint("create the tables with `tpf-sfn tables create`")
                })?;
            for shard in crate::drivers::streams::shards(&self.streams, SCOPE, &arn).await? {
                self.read_shard(wakeup, &arn, &shard, &mut pass).await?;
            }
        }
        Ok(pass)
    }

    async fn read_shard<I: Invoker>(
        &mut self,
        wakeup: &Wakeup<I>,
        arn: &str,
        shard: &str,
        pass: &mut StreamPass,
    ) -> Result<(), Error> {
        let key = format!("{arn}#{shard}");
        let request = self
            .streams
            .get_shard_iterator()
            .stream_arn(arn)
            .shard_id(shard);
        let request = match self.positions.get(&key) {
            Some(seq) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq),
            None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        let mut iterator = request
            .send()
            .await
            .map_err(|e| errors::from_sdk(SCOPE, "GetShardIterator", e, |_| None))?
            .shard_iterator()
            .map(str::to_owned);
        while let Some(current) = iterator.take() {
            let out = self
                .streams
                .get_records()
                .shard_iterator(current)
                .limit(BATCH)
                .send()
                .await
                .map_err(|e| errors::from_sdk(SCOPE, "GetRecords", e, |_| None))?;
            if out.records().is_empty() {
                return Ok(());
            }
            for record in out.records() {
                let change = record.dynamodb();
                let image = change.and_then(|d| d.new_image()).map(from_stream_image);
                let sequence = change
                    .and_then(|d| d.sequence_number())
                    .unwrap_or_default()
                    .to_owned();
                pass.records += 1;
                let why = match wakeup.on_record(image.as_ref()).await {
                    Ok((Disposition::Acknowledge, woke)) => {
                        match woke {
                            Woke::Acknowledged => {}
                            Woke::Bound => pass.bound += 1,
                            Woke::Delivered(_) => pass.delivered += 1,
                            Woke::Replaced(_) => pass.replaced += 1,
                        }
                        self.positions.insert(key.clone(), sequence);
                        continue;
                    }
                    Ok((Disposition::Retry(reason), _)) => format!("{reason:?}"),
                    Err(e) => e.report().to_string(),
                };
                let retries = match self.retries.get(&key) {
                    Some((seq, n)) if *seq == sequence => n + 1,
                    _ => 1,
                };
                if retries > MAX_RETRIES {
                    pass.passed_over.push(format!("{sequence}: {why}"));
                    self.retries.remove(&key);
                    self.positions.insert(key.clone(), sequence);
                    continue;
                }
                // The shard waits for this record, as a mapping's retries do.
                self.retries
                    .insert(key.clone(), (sequence.clone(), retries));
                pass.retried.push(format!("{sequence}: {why}"));
                return Ok(());
            }
            iterator = out.next_shard_iterator().map(str::to_owned);
        }
        Ok(())
    }
}

/// Each ended driver execution handed to the reconciler, with what it came to.
pub type Handled = Vec<(String, Result<Reconciled, Error>)>;

/// The drivers' status changes, polled: each execution of the watched machines (`FAILED`,
/// `TIMED_OUT`, `ABORTED`) or durable driver functions (`FAILED`, `TIMED_OUT`, `STOPPED`) that
/// ended, once.
pub struct StatusChanges {
    drivers: Drivers,
    seen: HashSet<String>,
}

/// Where the watched drivers run.
enum Drivers {
    /// Step Functions state machines, by ARN.
    Machines {
        sfn: aws_sdk_sfn::Client,
        machines: Vec<String>,
    },
    /// Lambda durable functions, by name or ARN.
    Functions {
        lambda: aws_sdk_lambda::Client,
        functions: Vec<String>,
    },
}

/// One ended execution as its status-change event: the execution, the event's source, detail
/// type and detail.
type Change = (
    String,
    &'static str,
    &'static str,
    serde_json::Map<String, serde_json::Value>,
);

/// The statuses the reconciler acts on; a SUCCEEDED driver needs nothing.
const ENDED: [aws_sdk_sfn::types::ExecutionStatus; 3] = [
    aws_sdk_sfn::types::ExecutionStatus::Failed,
    aws_sdk_sfn::types::ExecutionStatus::TimedOut,
    aws_sdk_sfn::types::ExecutionStatus::Aborted,
];

impl StatusChanges {
    /// Watches the driver machines `machines` (state machine ARNs).
    pub fn new(config: &aws_config::SdkConfig, machines: Vec<String>) -> Self {
        Self {
            drivers: Drivers::Machines {
                sfn: aws_sdk_sfn::Client::new(config),
                machines,
            },
            seen: HashSet::new(),
        }
    }

    /// Watches the durable driver functions `functions` (names or ARNs) through `lambda`.
    pub fn durable(lambda: aws_sdk_lambda::Client, functions: Vec<String>) -> Self {
        Self {
            drivers: Drivers::Functions { lambda, functions },
            seen: HashSet::new(),
        }
    }

    /// Hands every newly ended execution to `reconciler`; an event the reconciler fails is
    /// handed again on the next pass (EventBridge's asynchronous invoke retries it).
    pub async fn poll_once<I: Invoker>(
        &mut self,
        reconciler: &Reconciler<I>,
    ) -> Result<Handled, Error> {
        let ended = match &self.drivers {
            Drivers::Machines { sfn, machines } => ended_machine_executions(sfn, machines).await?,
            Drivers::Functions { lambda, functions } => {
                ended_durable_executions(lambda, functions).await?
            }
        };
        let mut out = Vec::new();
        for (arn, source, detail_type, detail) in ended {
            if self.seen.contains(&arn) {
                continue;
            }
            let mut change = serde_json::Map::new();
            change.insert("source".into(), json!(source));
            change.insert(event::DETAIL_TYPE.into(), json!(detail_type));
            change.insert(event::DETAIL.into(), detail.into());
            let result = reconciler
                .on_event(&serde_json::Value::Object(change))
                .await;
            if result.is_ok() {
                self.seen.insert(arn.clone());
            }
            out.push((arn, result));
        }
        Ok(out)
    }
}

/// The machines' ended executions, as `Step Functions Execution Status Change` events.
async fn ended_machine_executions(
    sfn: &aws_sdk_sfn::Client,
    machines: &[String],
) -> Result<Vec<Change>, Error> {
    let mut out = Vec::new();
    for machine in machines {
        for status in ENDED {
            let mut next: Option<String> = None;
            loop {
                let page = sfn
                    .list_executions()
                    .state_machine_arn(machine)
                    .status_filter(status.clone())
                    .set_next_token(next.take())
                    .send()
                    .await
                    .map_err(|e| errors::from_sdk(SCOPE, "ListExecutions", e, |_| None))?;
                for e in page.executions() {
                    let arn = e.execution_arn();
                    let mut detail = serde_json::Map::new();
                    detail.insert(event::SFN_ARN.into(), json!(arn));
                    detail.insert("stateMachineArn".into(), json!(machine));
                    detail.insert(event::SFN_STATUS.into(), json!(status.as_str()));
                    out.push((arn.to_owned(), "aws.states", event::SFN_DETAIL_TYPE, detail));
                }
                match page.next_token() {
                    Some(t) => next = Some(t.to_owned()),
                    None => break,
                }
            }
        }
    }
    Ok(out)
}

/// The durable functions' ended executions, as `Durable Execution Status Change` events.
async fn ended_durable_executions(
    lambda: &aws_sdk_lambda::Client,
    functions: &[String],
) -> Result<Vec<Change>, Error> {
    use aws_sdk_lambda::types::ExecutionStatus;
    let mut out = Vec::new();
    for function in functions {
        let mut marker: Option<String> = None;
        loop {
            let page = lambda
                .list_durable_executions_by_function()
                .function_name(function)
                .set_marker(marker.take())
                .send()
                .await
                .map_err(|e| {
                    errors::from_sdk(SCOPE, "ListDurableExecutionsByFunction", e, |_| None)
                })?;
            for e in page.durable_executions() {
                let status = e.status();
                if !matches!(
                    status,
                    ExecutionStatus::Failed | ExecutionStatus::TimedOut | ExecutionStatus::Stopped
                ) {
                    continue;
                }
                let arn = e.durable_execution_arn();
                let mut detail = serde_json::Map::new();
                detail.insert(event::DURABLE_ARN.into(), json!(arn));
                detail.insert("status".into(), json!(status.as_str()));
                out.push((
                    arn.to_owned(),
                    "aws.lambda",
                    event::DURABLE_DETAIL_TYPE,
                    detail,
                ));
            }
            match page.next_marker() {
                Some(m) => marker = Some(m.to_owned()),
                None => break,
            }
        }
    }
    Ok(out)
}
