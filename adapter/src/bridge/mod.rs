//! `tpf-sfn bridge`: polls the DynamoDB Streams of `tpf_execution` and the wakeup table, turns
//! stream records into [`BridgeEvent`]s, asks [`decide`] what to do, and does it with Step
//! Functions. The decision itself lives in `tpf_sfn_wakeup::bridge` (shared with the mapping
//! proof); this module only reads, converts and executes.
//!
//! Delivery is at least once: a shard's checkpoint (in the wakeup table) moves only after the
//! batch's actions ran, and a replayed action is harmless because "already done" answers
//! (`ExecutionAlreadyExists`, `InvalidToken`, `TaskTimedOut`, `TaskDoesNotExist`) count as done.

pub mod images;

use std::collections::HashMap;
use std::sync::Mutex;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue as DdbValue;
use aws_sdk_dynamodbstreams::types::{OperationType, Record, ShardIteratorType};
use tpf_sfn_compiler::sfn::names::machine_name;
use tpf_sfn_wakeup::bridge::{decide, BridgeAction, BridgeEvent, RecordImage, TokenRow};
use tpf_wire::wakeup::{self, attr};

use crate::aws::errors;
use crate::aws::tables::TableNames;
use crate::error::Error;
use images::{is_checkpoint, record_image, token_row, Image};

/// Most GetRecords calls per shard and pass; an open shard answers empty batches forever.
const MAX_BATCHES_PER_SHARD: usize = 100;

/// `BRIDGE_…`: the codes of a failed pass. The pass stops and its checkpoints stay put.
const SCOPE: &str = "BRIDGE";

fn failed<E, R>(operation: &str, e: SdkError<E, R>) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    errors::from_sdk(SCOPE, operation, e, |_| None)
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Executions,
    Wakeups,
}

pub struct Bridge {
    ddb: aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    sfn: aws_sdk_sfn::Client,
    tables: TableNames,
    machines: Machines,
    /// Last sequence number read per `stream#shard` in this process. Passes start here rather
    /// than at the saved checkpoint, which lags behind the checkpoint writes' own echoes.
    positions: Mutex<HashMap<String, String>>,
}

impl Bridge {
    pub fn new(config: &aws_config::SdkConfig, tables: TableNames, machines: Machines) -> Self {
        Self {
            ddb: aws_sdk_dynamodb::Client::new(config),
            streams: aws_sdk_dynamodbstreams::Client::new(config),
            sfn: aws_sdk_sfn::Client::new(config),
            tables,
            machines,
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
    pub async fn poll_once(&self) -> Result<PassReport, Error> {
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

    async fn stream_arn(&self, table: &str) -> Result<String, Error> {
        let out = self
            .ddb
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| failed("DescribeTable", e))?;
        out.table()
            .and_then(|t| t.latest_stream_arn())
            .map(str::to_owned)
            .ok_or_else(|| {
                Error::new("BRIDGE_NO_STREAM", format!("table {table} has no stream"))
                    .with_hint("create the tables with `tpf-sfn tables create`")
            })
    }

    /// Every shard, following `LastEvaluatedShardId` by hand: the DynamoDB Streams SDK has no
    /// paginator for DescribeStream.
    async fn shards(&self, stream_arn: &str) -> Result<Vec<String>, Error> {
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
                .map_err(|e| failed("DescribeStream", e))?;
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
            (
                wakeup::PK.to_owned(),
                DdbValue::S(wakeup::CHECKPOINT_PK.to_owned()),
            ),
            (
                wakeup::SK.to_owned(),
                DdbValue::S(wakeup::checkpoint_sk(stream_arn, shard_id)),
            ),
        ]
    }

    async fn checkpoint(&self, stream_arn: &str, shard_id: &str) -> Result<Option<String>, Error> {
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
            .map_err(|e| failed("GetItem", e))?;
        Ok(
            match out.item().and_then(|i| i.get(attr::SEQUENCE_NUMBER)) {
                Some(DdbValue::S(seq)) => Some(seq.clone()),
                _ => None,
            },
        )
    }

    async fn save_checkpoint(
        &self,
        stream_arn: &str,
        shard_id: &str,
        sequence: &str,
    ) -> Result<(), Error> {
        let mut item: std::collections::HashMap<String, DdbValue> =
            Self::checkpoint_key(stream_arn, shard_id)
                .into_iter()
                .collect();
        item.insert(
            attr::SEQUENCE_NUMBER.into(),
            DdbValue::S(sequence.to_owned()),
        );
        self.ddb
            .put_item()
            .table_name(&self.tables.wakeup)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| failed("PutItem", e))?;
        Ok(())
    }

    async fn read_shard(
        &self,
        source: Source,
        stream_arn: &str,
        shard_id: &str,
        report: &mut PassReport,
    ) -> Result<(), Error> {
        let key = wakeup::checkpoint_sk(stream_arn, shard_id);
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
            .map_err(|e| failed("GetShardIterator", e))?
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
                .map_err(|e| failed("GetRecords", e))?;
            let records = out.records();
            if records.is_empty() {
                break;
            }
            let mut last: Option<String> = None;
            let mut only_own = true;
            for record in records {
                if self.handle(source, record, report).await? {
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

    /// Handles one stream record; true when it was one of the bridge's own checkpoint writes.
    async fn handle(
        &self,
        source: Source,
        record: &Record,
        report: &mut PassReport,
    ) -> Result<bool, Error> {
        if record.event_name() == Some(&OperationType::Remove) {
            return Ok(false);
        }
        let Some(change) = record.dynamodb() else {
            return Ok(false);
        };
        let Some(new) = change.new_image() else {
            return Ok(false);
        };
        let old = change.old_image();
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

    async fn token(&self, tenant_id: &str, execution_id: &str) -> Result<Option<TokenRow>, Error> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.wakeup)
            .key(wakeup::PK, DdbValue::S(wakeup::pk(tenant_id, execution_id)))
            .key(wakeup::SK, DdbValue::S(wakeup::WAKEUP_ROW.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", e))?;
        let text = |name: &str| match out.item().and_then(|i| i.get(name)) {
            Some(DdbValue::S(s)) => Some(s.clone()),
            _ => None,
        };
        Ok(match (text(attr::TASK_TOKEN), text(attr::UNIT_ID)) {
            (Some(task_token), Some(unit_id)) => Some(TokenRow {
                tenant_id: tenant_id.to_owned(),
                execution_id: execution_id.to_owned(),
                task_token,
                unit_id,
                execution_arn: text(attr::EXECUTION_ARN).unwrap_or_default(),
            }),
            _ => None,
        })
    }

    async fn record(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<RecordImage>, Error> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.execution)
            .key("tenant_id", DdbValue::S(tenant_id.to_owned()))
            .key("execution_id", DdbValue::S(execution_id.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", e))?;
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

    async fn execute(&self, action: &BridgeAction, report: &mut PassReport) -> Result<(), Error> {
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
                    Err(e) => return Err(failed("StartExecution", e)),
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
                    Err(e) => return Err(failed("SendTaskSuccess", e)),
                }
            }
        }
        Ok(())
    }
}
