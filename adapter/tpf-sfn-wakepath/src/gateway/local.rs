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
use std::time::{Duration, Instant};

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

/// How long a stream's description (its ARN and shards) is used before it is described again,
/// to find the shards that split off since; a shard that closed has it described at once.
pub const DESCRIBE_EVERY: Duration = Duration::from_secs(60);

/// How long a kept iterator is used: well inside the 15 minutes after which DynamoDB Streams
/// refuses it (`ExpiredIteratorException`). The iterator a read hands back is a new one, so a
/// polled shard's never ages; this covers a long pause (a suspended machine).
const ITERATOR_REUSE: Duration = Duration::from_secs(5 * 60);

/// The wake-up's stream mappings, polled.
///
/// A steady pass asks the streams for records and nothing else: each stream's description is
/// kept for [`DESCRIBE_EVERY`] and every shard is continued with the iterator its last read
/// handed back, as a mapping does, rather than describing both streams and opening a new
/// iterator per shard every pass. Besides the calls saved (DescribeStream has a low rate
/// limit on AWS), an emulator that keeps every iterator it issues for the life of its process
/// (moto does) grows by one per read instead of two, and by none for a drained closed shard.
pub struct StreamMapping {
    ddb: aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    tables: Vec<String>,
    /// Per table: its stream's ARN and shards, and when they were described.
    described: HashMap<String, (String, Vec<String>, Instant)>,
    /// `stream#shard` → the iterator the last read handed back, and when.
    iterators: HashMap<String, (String, Instant)>,
    /// Closed shards read to their end: nothing more can come from them.
    drained: HashSet<String>,
    /// `stream#shard` → the last sequence number the wake-up acknowledged.
    positions: HashMap<String, String>,
    /// `stream#shard` → the record being retried and its retries so far.
    retries: HashMap<String, (String, u32)>,
}

/// Where a shard's next read starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Start {
    /// With the iterator its last read handed back.
    Continue(String),
    /// With a new iterator just after this sequence number (the last acknowledged).
    After(String),
    /// With a new iterator at its oldest record (nothing acknowledged yet).
    TrimHorizon,
    /// Not at all: the shard closed and was read to its end.
    Drained,
}

impl Start {
    /// The decision: a drained shard is not read; a kept iterator young enough is continued;
    /// otherwise (none kept, a retried record to read again, an old one) a new iterator starts
    /// just after the last acknowledged record, so nothing is skipped or read twice.
    /// `kept` is the kept iterator and its age.
    fn of(drained: bool, kept: Option<(String, Duration)>, position: Option<&String>) -> Self {
        match kept {
            _ if drained => Start::Drained,
            Some((iterator, age)) if age < ITERATOR_REUSE => Start::Continue(iterator),
            _ => Start::reopen(position),
        }
    }

    /// A new iterator from the last acknowledged record: after an expired one, or where none
    /// is kept.
    fn reopen(position: Option<&String>) -> Self {
        match position {
            Some(seq) => Start::After(seq.clone()),
            None => Start::TrimHorizon,
        }
    }
}

impl StreamMapping {
    /// Mappings on `tables`' streams (TPF's await-interaction table and the callback-binding
    /// table).
    pub fn new(config: &aws_config::SdkConfig, tables: Vec<String>) -> Self {
        Self {
            ddb: aws_sdk_dynamodb::Client::new(config),
            streams: aws_sdk_dynamodbstreams::Client::new(config),
            tables,
            described: HashMap::new(),
            iterators: HashMap::new(),
            drained: HashSet::new(),
            positions: HashMap::new(),
            retries: HashMap::new(),
        }
    }

    /// Reads every shard of every stream to its current end (or to its first retried record).
    pub async fn poll_once<I: Invoker>(&mut self, wakeup: &Wakeup<I>) -> Result<StreamPass, Error> {
        let mut pass = StreamPass::default();
        for table in self.tables.clone() {
            let (arn, shards) = self.described(&table).await?;
            for shard in shards {
                let key = format!("{arn}#{shard}");
                if let Err(e) = self.read_shard(wakeup, &arn, &key, &shard, &mut pass).await {
                    // The stream may be gone (a table created again): the next pass describes
                    // it again rather than reading a stale description for a minute.
                    self.described.remove(&table);
                    return Err(e);
                }
            }
        }
        Ok(pass)
    }

    /// `table`'s stream ARN and shards, described again once [`DESCRIBE_EVERY`] has passed or
    /// a shard of it closed.
    async fn described(&mut self, table: &str) -> Result<(String, Vec<String>), Error> {
        if let Some((arn, shards, at)) = self.described.get(table) {
            if at.elapsed() < DESCRIBE_EVERY {
                return Ok((arn.clone(), shards.clone()));
            }
        }
        let arn = self
            .ddb
            .describe_table()
            .table_name(table)
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
        let shards = crate::drivers::streams::shards(&self.streams, SCOPE, &arn).await?;
        // Shards no longer listed are gone (trimmed after 24 hours on AWS): forget them.
        let listed: HashSet<String> = shards.iter().map(|s| format!("{arn}#{s}")).collect();
        let prefix = format!("{arn}#");
        let kept = |key: &String| !key.starts_with(&prefix) || listed.contains(key);
        self.iterators.retain(|key, _| kept(key));
        self.drained.retain(kept);
        self.positions.retain(|key, _| kept(key));
        self.retries.retain(|key, _| kept(key));
        self.described.insert(
            table.to_owned(),
            (arn.clone(), shards.clone(), Instant::now()),
        );
        Ok((arn, shards))
    }

    /// A new iterator on `shard` where `start` says.
    async fn open(&self, arn: &str, shard: &str, start: &Start) -> Result<Option<String>, Error> {
        let request = self
            .streams
            .get_shard_iterator()
            .stream_arn(arn)
            .shard_id(shard);
        let request = match start {
            Start::After(seq) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq),
            _ => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        Ok(request
            .send()
            .await
            .map_err(|e| errors::from_sdk(SCOPE, "GetShardIterator", e, |_| None))?
            .shard_iterator()
            .map(str::to_owned))
    }

    async fn read_shard<I: Invoker>(
        &mut self,
        wakeup: &Wakeup<I>,
        arn: &str,
        key: &str,
        shard: &str,
        pass: &mut StreamPass,
    ) -> Result<(), Error> {
        // Taken out: it is put back only when this read ends well, so after a failed read or
        // a retried record the next pass starts just after the last acknowledged record.
        let kept = (self.iterators.remove(key)).map(|(it, at)| (it, at.elapsed()));
        let mut iterator =
            match Start::of(self.drained.contains(key), kept, self.positions.get(key)) {
                Start::Drained => return Ok(()),
                Start::Continue(iterator) => Some(iterator),
                start => self.open(arn, shard, &start).await?,
            };
        let mut reopened = false;
        while let Some(current) = iterator.take() {
            let out = match self
                .streams
                .get_records()
                .shard_iterator(current)
                .limit(BATCH)
                .send()
                .await
            {
                Ok(out) => out,
                // Unused for 15 minutes: a new one from the last acknowledged record, once.
                Err(e)
                    if !reopened
                        && e.as_service_error()
                            .is_some_and(|e| e.is_expired_iterator_exception()) =>
                {
                    reopened = true;
                    iterator = self
                        .open(arn, shard, &Start::reopen(self.positions.get(key)))
                        .await?;
                    continue;
                }
                Err(e) => return Err(errors::from_sdk(SCOPE, "GetRecords", e, |_| None)),
            };
            let next = out.next_shard_iterator().map(str::to_owned);
            if out.records().is_empty() {
                self.keep(arn, key, next);
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
                        self.positions.insert(key.to_owned(), sequence);
                        continue;
                    }
                    Ok((Disposition::Retry(reason), _)) => format!("{reason:?}"),
                    Err(e) => e.report().to_string(),
                };
                let retries = match self.retries.get(key) {
                    Some((seq, n)) if *seq == sequence => n + 1,
                    _ => 1,
                };
                if retries > MAX_RETRIES {
                    pass.passed_over.push(format!("{sequence}: {why}"));
                    self.retries.remove(key);
                    self.positions.insert(key.to_owned(), sequence);
                    continue;
                }
                // The shard waits for this record, as a mapping's retries do: no iterator is
                // kept, so the next pass opens one just after the last acknowledged record.
                self.retries
                    .insert(key.to_owned(), (sequence.clone(), retries));
                pass.retried.push(format!("{sequence}: {why}"));
                return Ok(());
            }
            iterator = next;
            if iterator.is_none() {
                self.keep(arn, key, None);
            }
        }
        Ok(())
    }

    /// Keeps the iterator a read handed back for the next pass; none means the shard closed
    /// and is read to its end, so its stream is described again to find its children.
    fn keep(&mut self, arn: &str, key: &str, next: Option<String>) {
        match next {
            Some(next) => {
                self.iterators
                    .insert(key.to_owned(), (next, Instant::now()));
            }
            None => {
                self.drained.insert(key.to_owned());
                self.described
                    .retain(|_, (described, _, _)| described != arn);
            }
        }
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

/// The durable statuses the reconciler acts on; a SUCCEEDED driver needs nothing.
const DURABLE_ENDED: [aws_sdk_lambda::types::ExecutionStatus; 3] = [
    aws_sdk_lambda::types::ExecutionStatus::Failed,
    aws_sdk_lambda::types::ExecutionStatus::TimedOut,
    aws_sdk_lambda::types::ExecutionStatus::Stopped,
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
    let mut out = Vec::new();
    for function in functions {
        let mut marker: Option<String> = None;
        loop {
            // Only the ended ones the reconciler acts on, so a pass does not page through
            // every running and succeeded execution of a long run. (AWS's durable execution
            // emulator reads one `StatusFilter` instead and lists them all: the status is
            // checked again below.)
            let page = lambda
                .list_durable_executions_by_function()
                .function_name(function)
                .set_statuses(Some(DURABLE_ENDED.to_vec()))
                .set_marker(marker.take())
                .send()
                .await
                .map_err(|e| {
                    errors::from_sdk(SCOPE, "ListDurableExecutionsByFunction", e, |_| None)
                })?;
            for e in page.durable_executions() {
                let status = e.status();
                if !DURABLE_ENDED.contains(status) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(s: &str) -> String {
        s.to_owned()
    }

    #[test]
    fn a_shard_continues_with_the_iterator_it_was_handed() {
        let kept = Some((seq("it-2"), Duration::from_secs(2)));
        assert_eq!(
            Start::of(false, kept, Some(&seq("7"))),
            Start::Continue(seq("it-2"))
        );
    }

    #[test]
    fn without_a_kept_iterator_a_shard_reopens_just_after_its_last_acknowledged_record() {
        // The first read, a retried record's shard, a read that failed: no iterator kept.
        assert_eq!(Start::of(false, None, None), Start::TrimHorizon);
        assert_eq!(
            Start::of(false, None, Some(&seq("7"))),
            Start::After(seq("7"))
        );
    }

    #[test]
    fn an_expired_iterator_reopens_from_the_last_acknowledged_record() {
        // What GetRecords' ExpiredIteratorException leads to: the records after the last one
        // acknowledged, none skipped and none read twice; from the oldest if none was.
        assert_eq!(Start::reopen(Some(&seq("41"))), Start::After(seq("41")));
        assert_eq!(Start::reopen(None), Start::TrimHorizon);
    }

    #[test]
    fn an_iterator_kept_past_its_reuse_is_not_used() {
        let old = ITERATOR_REUSE + Duration::from_secs(1);
        assert_eq!(
            Start::of(false, Some((seq("it-old"), old)), Some(&seq("9"))),
            Start::After(seq("9"))
        );
    }

    #[test]
    fn a_closed_shard_read_to_its_end_is_not_read_again() {
        let kept = Some((seq("it"), Duration::ZERO));
        assert_eq!(Start::of(true, kept, Some(&seq("3"))), Start::Drained);
        assert_eq!(Start::of(true, None, None), Start::Drained);
    }
}
