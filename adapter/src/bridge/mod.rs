//! `tpf-sfn bridge`: polls the DynamoDB Streams of `tpf_execution` and the wakeup table, turns
//! stream records into [`BridgeEvent`]s, asks [`decide`] what to do, and does it with Step
//! Functions. The decision itself lives in `tpf_sfn_wakeup::bridge` (shared with the mapping
//! proof); this module only reads, converts and executes.
//!
//! The per-record work ([`RecordHandler`]) is shared with the Lambda handler
//! (`tpf-sfn-lambda`), which gets its records from event source mappings instead.
//!
//! Delivery is at least once: a shard's checkpoint (in the wakeup table) moves only after the
//! batch's actions ran, and a replayed action is harmless because "already done" answers
//! (`ExecutionAlreadyExists`, `InvalidToken`, `TaskTimedOut`, `TaskDoesNotExist`) count as done.

pub mod images;

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use aws_sdk_dynamodb::types::AttributeValue as DdbValue;
use aws_sdk_dynamodbstreams::types::{OperationType, ShardIteratorType};
use tpf_sfn_compiler::sfn::names::machine_name;
use tpf_sfn_wakeup::bridge::{decide, BridgeAction, BridgeEvent, RecordImage, TokenRow};

use crate::aws::tables::TableNames;
use images::{is_checkpoint, record_image, token_row, Image, CHECKPOINT_PK, WAKEUP_SK};

/// Most GetRecords calls per shard and pass; an open shard answers empty batches forever.
const MAX_BATCHES_PER_SHARD: usize = 100;

/// The bridge could not read, decide or act; the pass stops and the checkpoint stays put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeError(pub String);

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bridge: {}", self.0)
    }
}

impl std::error::Error for BridgeError {}

fn failed<E: std::error::Error + 'static, R: fmt::Debug>(
    operation: &str,
    e: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> BridgeError {
    BridgeError(format!(
        "{operation}: {}",
        aws_sdk_dynamodb::error::DisplayErrorContext(e)
    ))
}

/// Where the drivers live: `<machine_arn_prefix><machine_name(name_prefix, pipeline, release, "driver")>`.
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
            machine_name(&self.name_prefix, pipeline_id, release_version, "driver")
        )
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

/// What one record asked of Step Functions, and what the bridge did: the per-record work shared
/// by the polling process and the Lambda handler. Replaying a record is harmless, because
/// "already done" answers count as done.
pub struct RecordHandler {
    ddb: aws_sdk_dynamodb::Client,
    sfn: aws_sdk_sfn::Client,
    tables: TableNames,
    machines: Machines,
}

/// `tpf-sfn bridge`: polls both streams from checkpoints and hands each record to the
/// [`RecordHandler`].
pub struct Bridge {
    streams: aws_sdk_dynamodbstreams::Client,
    ddb: aws_sdk_dynamodb::Client,
    tables: TableNames,
    records: RecordHandler,
    /// Last sequence number read per `stream#shard` in this process. Passes start here rather
    /// than at the saved checkpoint, which lags behind the checkpoint writes' own echoes.
    positions: Mutex<HashMap<String, String>>,
}

impl Bridge {
    pub fn new(config: &aws_config::SdkConfig, tables: TableNames, machines: Machines) -> Self {
        Self {
            streams: aws_sdk_dynamodbstreams::Client::new(config),
            ddb: aws_sdk_dynamodb::Client::new(config),
            tables: tables.clone(),
            records: RecordHandler::new(config, tables, machines),
            positions: Mutex::new(HashMap::new()),
        }
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
    pub async fn poll_once(&self) -> Result<PassReport, BridgeError> {
        let mut report = PassReport::default();
        for (table, source) in [
            (self.tables.execution.clone(), Source::Executions),
            (self.tables.wakeup.clone(), Source::Wakeups),
        ] {
            let stream_arn = self.stream_arn(&table).await?;
            for shard in self.shards(&stream_arn).await? {
                self.read_shard(source, &stream_arn, &shard, &mut report)
                    .await?;
            }
        }
        Ok(report)
    }

    async fn stream_arn(&self, table: &str) -> Result<String, BridgeError> {
        let out = self
            .ddb
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| failed("DescribeTable", &e))?;
        out.table()
            .and_then(|t| t.latest_stream_arn())
            .map(str::to_owned)
            .ok_or_else(|| {
                BridgeError(format!(
                    "table {table} has no stream; create it with `tpf-sfn tables create`"
                ))
            })
    }

    async fn shards(&self, stream_arn: &str) -> Result<Vec<String>, BridgeError> {
        let mut shards = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let out = self
                .streams
                .describe_stream()
                .stream_arn(stream_arn)
                .set_exclusive_start_shard_id(start.take())
                .send()
                .await
                .map_err(|e| failed("DescribeStream", &e))?;
            let Some(description) = out.stream_description() else {
                return Ok(shards);
            };
            // Parents are listed before children, so reading in order keeps per-key order.
            shards.extend(
                description
                    .shards()
                    .iter()
                    .filter_map(|s| s.shard_id().map(str::to_owned)),
            );
            match description.last_evaluated_shard_id() {
                Some(last) => start = Some(last.to_owned()),
                None => return Ok(shards),
            }
        }
    }

    fn checkpoint_key(stream_arn: &str, shard_id: &str) -> [(String, DdbValue); 2] {
        [
            ("pk".to_owned(), DdbValue::S(CHECKPOINT_PK.to_owned())),
            (
                "sk".to_owned(),
                DdbValue::S(format!("{stream_arn}#{shard_id}")),
            ),
        ]
    }

    async fn checkpoint(
        &self,
        stream_arn: &str,
        shard_id: &str,
    ) -> Result<Option<String>, BridgeError> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.wakeup)
            .set_key(Some(
                Self::checkpoint_key(stream_arn, shard_id)
                    .into_iter()
                    .collect(),
            ))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", &e))?;
        Ok(match out.item().and_then(|i| i.get("sequence_number")) {
            Some(DdbValue::S(seq)) => Some(seq.clone()),
            _ => None,
        })
    }

    async fn save_checkpoint(
        &self,
        stream_arn: &str,
        shard_id: &str,
        sequence: &str,
    ) -> Result<(), BridgeError> {
        let mut item: std::collections::HashMap<String, DdbValue> =
            Self::checkpoint_key(stream_arn, shard_id)
                .into_iter()
                .collect();
        item.insert("sequence_number".into(), DdbValue::S(sequence.to_owned()));
        self.ddb
            .put_item()
            .table_name(&self.tables.wakeup)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| failed("PutItem", &e))?;
        Ok(())
    }

    async fn read_shard(
        &self,
        source: Source,
        stream_arn: &str,
        shard_id: &str,
        report: &mut PassReport,
    ) -> Result<(), BridgeError> {
        let key = format!("{stream_arn}#{shard_id}");
        let after = match self.position(&key) {
            Some(seq) => Some(seq),
            None => self.checkpoint(stream_arn, shard_id).await?,
        };
        let request = self
            .streams
            .get_shard_iterator()
            .stream_arn(stream_arn)
            .shard_id(shard_id);
        let request = match &after {
            Some(seq) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq),
            None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        let mut iterator = request
            .send()
            .await
            .map_err(|e| failed("GetShardIterator", &e))?
            .shard_iterator()
            .map(str::to_owned);
        for _ in 0..MAX_BATCHES_PER_SHARD {
            let Some(current) = iterator.take() else {
                break;
            };
            let out = self
                .streams
                .get_records()
                .shard_iterator(current)
                .send()
                .await
                .map_err(|e| failed("GetRecords", &e))?;
            let records = out.records();
            if records.is_empty() {
                break;
            }
            let mut last: Option<String> = None;
            let mut only_own = true;
            for record in records {
                let change = record.dynamodb();
                let change = Change {
                    remove: record.event_name() == Some(&OperationType::Remove),
                    old: change.and_then(|c| c.old_image()),
                    new: change.and_then(|c| c.new_image()),
                };
                if self.records.handle(source, change, report).await? {
                    report.echoes += 1;
                } else {
                    only_own = false;
                    report.records += 1;
                }
                if let Some(seq) = record.dynamodb().and_then(|d| d.sequence_number()) {
                    last = Some(seq.to_owned());
                }
            }
            // Checkpoint rows live in the wakeup table, so each write comes back as a stream
            // record; a batch of nothing but those is not checkpointed, which ends the echo.
            if let (Some(seq), false) = (&last, only_own) {
                self.save_checkpoint(stream_arn, shard_id, seq).await?;
            }
            if let Some(seq) = &last {
                self.advance(&key, seq);
            }
            iterator = out.next_shard_iterator().map(str::to_owned);
        }
        Ok(())
    }
}

impl RecordHandler {
    pub fn new(config: &aws_config::SdkConfig, tables: TableNames, machines: Machines) -> Self {
        Self::with_clients(
            aws_sdk_dynamodb::Client::new(config),
            aws_sdk_sfn::Client::new(config),
            tables,
            machines,
        )
    }

    /// With clients of the caller's (tests hand in ones with interceptors or mocks).
    pub fn with_clients(
        ddb: aws_sdk_dynamodb::Client,
        sfn: aws_sdk_sfn::Client,
        tables: TableNames,
        machines: Machines,
    ) -> Self {
        Self {
            ddb,
            sfn,
            tables,
            machines,
        }
    }

    /// Which stream a stream ARN (`arn:...:table/<name>/stream/<label>`) belongs to, by table
    /// name; `None` for a table this bridge does not read.
    pub fn source_of(&self, stream_arn: &str) -> Option<Source> {
        let table = stream_arn.split("/stream/").next()?.rsplit('/').next()?;
        if table == self.tables.wakeup {
            Some(Source::Wakeups)
        } else if table == self.tables.execution {
            Some(Source::Executions)
        } else {
            None
        }
    }

    /// Handles one stream record; true when it was one of the bridge's own checkpoint writes.
    pub async fn handle(
        &self,
        source: Source,
        change: Change<'_>,
        report: &mut PassReport,
    ) -> Result<bool, BridgeError> {
        if change.remove {
            return Ok(false);
        }
        let Some(new) = change.new else {
            return Ok(false);
        };
        let old = change.old;
        let (event, token) = match source {
            Source::Executions => {
                let Some(new) = record_image(new) else {
                    return Ok(false);
                };
                let old = old.and_then(record_image);
                let token = self.token(&new.tenant_id, &new.execution_id).await?;
                (BridgeEvent::RecordChanged { old, new }, token)
            }
            Source::Wakeups => {
                if is_checkpoint(new) {
                    return Ok(true);
                }
                let Some(token) = token_row(new) else {
                    return Ok(false);
                };
                // Only a new token is a registration; other rewrites of the row are not.
                if old
                    .and_then(token_row)
                    .is_some_and(|o| o.task_token == token.task_token)
                {
                    return Ok(false);
                }
                let record = self.record(&token.tenant_id, &token.execution_id).await?;
                (BridgeEvent::TokenRegistered { token, record }, None)
            }
        };
        for action in decide(&event, token.as_ref()) {
            self.execute(&action, report).await?;
        }
        Ok(false)
    }

    async fn token(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<TokenRow>, BridgeError> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.wakeup)
            .key("pk", DdbValue::S(format!("{tenant_id}#{execution_id}")))
            .key("sk", DdbValue::S(WAKEUP_SK.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", &e))?;
        let text = |name: &str| match out.item().and_then(|i| i.get(name)) {
            Some(DdbValue::S(s)) => Some(s.clone()),
            _ => None,
        };
        Ok(match (text("task_token"), text("unit_id")) {
            (Some(task_token), Some(unit_id)) => Some(TokenRow {
                tenant_id: tenant_id.to_owned(),
                execution_id: execution_id.to_owned(),
                task_token,
                unit_id,
                execution_arn: text("execution_arn").unwrap_or_default(),
            }),
            _ => None,
        })
    }

    async fn record(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<RecordImage>, BridgeError> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.execution)
            .key("tenant_id", DdbValue::S(tenant_id.to_owned()))
            .key("execution_id", DdbValue::S(execution_id.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", &e))?;
        // Same attribute names in both APIs; re-key the DynamoDB value into the streams shape.
        Ok(out.item().and_then(|item| {
            let image: Image = item
                .iter()
                .filter_map(|(k, v)| {
                    let value = match v {
                        DdbValue::S(s) => {
                            aws_sdk_dynamodbstreams::types::AttributeValue::S(s.clone())
                        }
                        DdbValue::N(n) => {
                            aws_sdk_dynamodbstreams::types::AttributeValue::N(n.clone())
                        }
                        _ => return None,
                    };
                    Some((k.clone(), value))
                })
                .collect();
            record_image(&image)
        }))
    }

    async fn execute(
        &self,
        action: &BridgeAction,
        report: &mut PassReport,
    ) -> Result<(), BridgeError> {
        match action {
            BridgeAction::StartDriver {
                tenant_id,
                execution_id,
                pipeline_id,
                release_version,
                lineage,
            } => {
                let input = BridgeAction::driver_input(tenant_id, execution_id, lineage);
                let result = self
                    .sfn
                    .start_execution()
                    .state_machine_arn(self.machines.driver_arn(pipeline_id, release_version))
                    .name(lineage)
                    .input(input.to_string())
                    .send()
                    .await;
                match result {
                    Ok(_) => report.started += 1,
                    Err(e)
                        if e.as_service_error()
                            .is_some_and(|se| se.is_execution_already_exists()) =>
                    {
                        report.already_done += 1
                    }
                    Err(e)
                        if e.as_service_error().is_some_and(|se| {
                            se.is_state_machine_does_not_exist()
                                || se.is_state_machine_deleting()
                                || se.is_invalid_arn()
                                || se.is_invalid_name()
                                || se.is_invalid_execution_input()
                        }) =>
                    {
                        report.refused.push(format!(
                            "{tenant_id}/{execution_id} ({pipeline_id} {release_version}): {}",
                            aws_sdk_sfn::error::DisplayErrorContext(&e)
                        ))
                    }
                    Err(e) => return Err(failed("StartExecution", &e)),
                }
            }
            BridgeAction::Wake { task_token, output } => {
                let result = self
                    .sfn
                    .send_task_success()
                    .task_token(task_token)
                    .output(output.to_string())
                    .send()
                    .await;
                match result {
                    Ok(_) => report.woken += 1,
                    Err(e)
                        if e.as_service_error().is_some_and(|se| {
                            se.is_invalid_token()
                                || se.is_task_timed_out()
                                || se.is_task_does_not_exist()
                        }) =>
                    {
                        report.already_done += 1
                    }
                    Err(e) => return Err(failed("SendTaskSuccess", &e)),
                }
            }
        }
        Ok(())
    }
}
