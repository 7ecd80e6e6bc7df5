//! `tpf-sfn bridge`: polls the DynamoDB Streams of `tpf_execution` and the wakeup table, turns
//! stream records into [`BridgeEvent`]s, asks [`decide`] what to do, and does it with Step
//! Functions. The decision itself lives in `tpf_sfn_wakeup::bridge` (shared with the mapping
//! proof); this module only reads, converts and executes.
//!
//! The per-record work ([`RecordHandler`], `records.rs`) is shared with the Lambda handler
//! (`tpf-sfn-lambda`), which gets its records from event source mappings instead of polling.
//!
//! Delivery is at least once: a shard's checkpoint (in the wakeup table) moves only after the
//! batch's actions ran, and a replayed action is harmless because "already done" answers
//! (`ExecutionAlreadyExists`, `InvalidToken`, `TaskTimedOut`, `TaskDoesNotExist`) count as done.

pub mod durable;
pub mod images;
mod records;
pub(crate) mod streams;

pub use images::Image;
pub(crate) use records::{read_row, read_token, row_text};

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use tpf_sfn_compiler::lowering::names::resource_name;

use crate::aws::errors;
use crate::aws::tables::TableNames;
use crate::error::Error;

/// Most GetRecords calls per shard and pass; an open shard answers empty batches forever.
const MAX_BATCHES_PER_SHARD: usize = 100;

/// How long a pass reuses the streams' description (ARN and shards) before describing them
/// again. A shard that closes is noticed at once (its last batch has no next iterator) and
/// makes the next pass describe its stream; this bound only catches what that cannot.
const DESCRIBE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// `BRIDGE_…`: the codes of a failed pass. The pass stops and its checkpoints stay put.
const SCOPE: &str = "BRIDGE";

fn failed<E, R>(operation: &str, e: SdkError<E, R>) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    errors::from_sdk(SCOPE, operation, e, |_| None)
}

/// Where the drivers live: `<machine_arn_prefix><resource_name(name_prefix, pipeline, release, "driver")>`.
#[derive(Debug, Clone)]
pub struct Machines {
    /// e.g. `arn:aws:states:us-east-1:123456789012:stateMachine:`
    pub arn_prefix: String,
    /// The compiler's `name_prefix` (default `tpf`).
    pub name_prefix: String,
}

impl Machines {
    pub fn driver_arn(&self, pipeline_id: &str, release_version: &str) -> String {
        format!(
            "{}{}",
            self.arn_prefix,
            resource_name(&self.name_prefix, pipeline_id, release_version, "driver")
        )
    }
}

/// The releases deployed as Lambda durable functions, by `(pipelineId, releaseVersion)`: the
/// qualified function ARN (`...:function:<name>:<version>`) whose version runs that release's
/// driver. A release not listed here runs on its Step Functions machine ([`Machines`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DurableFunctions {
    by_release: BTreeMap<(String, String), String>,
}

impl DurableFunctions {
    /// From `{"<pipelineId>@<releaseVersion>": "<qualified function ARN>", ...}` (the
    /// `TPF_SFN_DURABLE_FUNCTIONS` setting, `--durable-functions`).
    pub fn parse(json: &str) -> Result<Self, Error> {
        let bad = |message: String| {
            Error::new("BRIDGE_DURABLE_FUNCTIONS", message).with_hint(
                "give a JSON object {\"<pipelineId>@<releaseVersion>\": \"<qualified function ARN>\"}",
            )
        };
        let map: BTreeMap<String, String> = serde_json::from_str(json).map_err(|e| {
            bad(format!(
                "the durable functions map is not a JSON object of strings: {e}"
            ))
        })?;
        let mut by_release = BTreeMap::new();
        for (key, function) in map {
            let Some((pipeline, release)) = key.rsplit_once('@') else {
                return Err(bad(format!(
                    "key `{key}` is not `<pipelineId>@<releaseVersion>`"
                )));
            };
            if pipeline.is_empty() || release.is_empty() || function.trim().is_empty() {
                return Err(bad(format!("entry `{key}` has an empty part")));
            }
            by_release.insert((pipeline.to_owned(), release.to_owned()), function);
        }
        Ok(Self { by_release })
    }

    pub fn insert(&mut self, pipeline_id: &str, release_version: &str, function: &str) {
        self.by_release.insert(
            (pipeline_id.to_owned(), release_version.to_owned()),
            function.to_owned(),
        );
    }

    /// The function version that runs this release's driver, if it is a durable one.
    pub fn function(&self, pipeline_id: &str, release_version: &str) -> Option<&str> {
        self.by_release
            .get(&(pipeline_id.to_owned(), release_version.to_owned()))
            .map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by_release.is_empty()
    }
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Stream records read, not counting the bridge's own checkpoint writes.
    pub records: usize,
    /// The bridge's own checkpoint writes read back from the wakeup table's stream.
    pub echoes: usize,
    pub started: usize,
    pub woken: usize,
    /// Actions Step Functions had already seen (replays).
    pub already_done: usize,
    /// Starts Step Functions refused for good (no such machine, invalid name, ...): skipped so
    /// one undeployed release cannot stall its shard; the sweeper ensures those drivers later.
    pub refused: Vec<String>,
}

/// Which stream a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// TPF's execution table.
    Executions,
    /// The adapter's wakeup table.
    Wakeups,
}

/// One stream record, as both the DynamoDB Streams API and Lambda's event source mapping
/// deliver it (images with NEW_AND_OLD_IMAGES).
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub remove: bool,
    pub old: Option<&'a Image>,
    pub new: Option<&'a Image>,
}

/// What one record asks of Step Functions, and doing it: the per-record work shared by the
/// polling process and the Lambda handler. Replaying a record is harmless, because "already
/// done" answers count as done.
pub struct RecordHandler {
    ddb: aws_sdk_dynamodb::Client,
    sfn: aws_sdk_sfn::Client,
    tables: TableNames,
    machines: Machines,
    /// Durable drivers: the Lambda client their starts and callbacks go through, and which
    /// releases run as durable functions.
    lambda: aws_sdk_lambda::Client,
    durable: DurableFunctions,
}

/// `tpf-sfn bridge`: polls both streams from checkpoints and hands each record to the
/// [`RecordHandler`].
pub struct Bridge {
    ddb: aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    tables: TableNames,
    records: RecordHandler,
    /// Last sequence number read per `stream#shard` in this process. Passes start here rather
    /// than at the saved checkpoint, which lags behind the checkpoint writes' own echoes.
    positions: Mutex<HashMap<String, String>>,
    /// What the next pass reuses from this one (`streams.rs`).
    reuse: Mutex<streams::Reuse>,
}

impl Bridge {
    pub fn new(config: &aws_config::SdkConfig, tables: TableNames, machines: Machines) -> Self {
        Self {
            ddb: aws_sdk_dynamodb::Client::new(config),
            streams: aws_sdk_dynamodbstreams::Client::new(config),
            tables: tables.clone(),
            records: RecordHandler::new(config, tables, machines),
            positions: Mutex::new(HashMap::new()),
            reuse: Mutex::new(streams::Reuse::default()),
        }
    }

    /// See [`RecordHandler::with_durable`].
    pub fn with_durable(
        mut self,
        lambda: aws_sdk_lambda::Client,
        durable: DurableFunctions,
    ) -> Self {
        self.records = self.records.with_durable(lambda, durable);
        self
    }

    fn position(&self, key: &str) -> Option<String> {
        self.positions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    fn advance(&self, key: &str, sequence: &str) {
        self.positions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_owned(), sequence.to_owned());
    }

    /// Reads every shard of both streams from its checkpoint to the current end.
    pub async fn poll_once(&self) -> Result<PassReport, Error> {
        let mut report = PassReport::default();
        let pass = self.pass(&mut report).await;
        if pass.is_err() {
            // A failed pass starts the next one afresh: described again, and every shard read
            // from its position through a new iterator.
            *self.reuse() = streams::Reuse::default();
        }
        pass.map(|()| report)
    }

    async fn pass(&self, report: &mut PassReport) -> Result<(), Error> {
        for (table, source) in [
            (self.tables.execution.clone(), Source::Executions),
            (self.tables.wakeup.clone(), Source::Wakeups),
        ] {
            let (stream_arn, shards) = self.described(&table).await?;
            for shard in shards {
                self.read_shard(source, &stream_arn, &shard, report).await?;
            }
        }
        Ok(())
    }

    fn reuse(&self) -> std::sync::MutexGuard<'_, streams::Reuse> {
        self.reuse.lock().unwrap_or_else(|p| p.into_inner())
    }
}
