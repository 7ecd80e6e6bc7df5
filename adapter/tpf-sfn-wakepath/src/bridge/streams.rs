//! Reading both streams shard by shard, from the checkpoints the bridge keeps in the wakeup
//! table (one row per stream and shard under [`wakeup::CHECKPOINT_PK`]).

use aws_sdk_dynamodb::types::AttributeValue as DdbValue;
use aws_sdk_dynamodbstreams::types::{OperationType, ShardIteratorType};
use tpf_wire::wakeup::{self, attr};

use super::{failed, Bridge, Change, PassReport, Source, MAX_BATCHES_PER_SHARD};
use crate::error::Error;

impl Bridge {
    pub(super) async fn stream_arn(&self, table: &str) -> Result<String, Error> {
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
    pub(super) async fn shards(&self, stream_arn: &str) -> Result<Vec<String>, Error> {
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

    pub(super) async fn read_shard(
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
                let image = record.dynamodb();
                let change = Change {
                    remove: record.event_name() == Some(&OperationType::Remove),
                    old: image.and_then(|c| c.old_image()),
                    new: image.and_then(|c| c.new_image()),
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
