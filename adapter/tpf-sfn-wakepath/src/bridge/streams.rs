//! Reading both streams shard by shard, from the checkpoints the bridge keeps in the wakeup
//! table (one row per stream and shard under [`wakeup::CHECKPOINT_PK`]).
//!
//! A steady poll asks the streams for records and nothing else: each pass reuses the streams'
//! description and continues every shard with the iterator the last batch handed back, rather
//! than describing both streams and opening a new iterator per shard every pass. Besides the
//! calls saved (DescribeStream has a low per-account rate on AWS), an emulator that keeps every
//! iterator it ever issued (moto does, for the life of the process) grows by one per GetRecords
//! instead of two, and by none for a drained closed shard.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue as DdbValue;
use aws_sdk_dynamodbstreams::types::{OperationType, ShardIteratorType};
use tpf_wire::wakeup::{self, attr};

use super::{failed, Bridge, Change, PassReport, Source, DESCRIBE_EVERY, MAX_BATCHES_PER_SHARD};
use crate::error::Error;

/// How long a kept iterator is used: well inside the 15 minutes after which DynamoDB Streams
/// refuses it (`ExpiredIteratorException`).
const ITERATOR_REUSE: Duration = Duration::from_secs(5 * 60);

/// What one pass leaves the next, all of it dropped after a failed pass.
#[derive(Debug, Default)]
pub(super) struct Reuse {
    /// Per table: its stream's ARN and shards, and when they were described.
    described: HashMap<String, (String, Vec<String>, Instant)>,
    /// Per `stream#shard`: the iterator the last batch handed back, where the next read starts,
    /// and when it was handed back.
    iterators: HashMap<String, (String, Instant)>,
    /// Closed shards read to their end: nothing more can come from them.
    drained: HashSet<String>,
}

impl Bridge {
    /// The stream's ARN and shards of `table`, described again once [`DESCRIBE_EVERY`] has
    /// passed or a shard of it closed.
    pub(super) async fn described(&self, table: &str) -> Result<(String, Vec<String>), Error> {
        if let Some((arn, shards, at)) = self.reuse().described.get(table) {
            if at.elapsed() < DESCRIBE_EVERY {
                return Ok((arn.clone(), shards.clone()));
            }
        }
        let arn = self.stream_arn(table).await?;
        let shards = self.shards(&arn).await?;
        let mut reuse = self.reuse();
        // Shards no longer listed are gone (trimmed after 24 hours on AWS): forget them.
        let listed: HashSet<String> = shards
            .iter()
            .map(|s| wakeup::checkpoint_sk(&arn, s))
            .collect();
        let prefix = wakeup::checkpoint_sk(&arn, "");
        reuse
            .iterators
            .retain(|key, _| !key.starts_with(&prefix) || listed.contains(key));
        reuse
            .drained
            .retain(|key| !key.starts_with(&prefix) || listed.contains(key));
        reuse.described.insert(
            table.to_owned(),
            (arn.clone(), shards.clone(), Instant::now()),
        );
        Ok((arn, shards))
    }

    /// A shard of `stream_arn` closed: the next pass describes its stream again.
    fn shard_closed(&self, stream_arn: &str, key: &str) {
        let mut reuse = self.reuse();
        reuse.drained.insert(key.to_owned());
        reuse.described.retain(|_, (arn, _, _)| arn != stream_arn);
    }

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

    pub(super) async fn shards(&self, stream_arn: &str) -> Result<Vec<String>, Error> {
        shards(&self.streams, super::SCOPE, stream_arn).await
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
        if self.reuse().drained.contains(&key) {
            return Ok(());
        }
        // Taken out: it is put back only when this read ends well, so a failed batch is read
        // again from the position before it.
        let kept = self.reuse().iterators.remove(&key);
        let mut iterator = match kept {
            // A shard iterator expires 15 minutes after it was issued; after a longer pause
            // (a long --idle-interval-ms, a suspended machine) a new one starts from the position.
            Some((kept, at)) if at.elapsed() < ITERATOR_REUSE => Some(kept),
            _ => self.open_iterator(stream_arn, shard_id, &key).await?,
        };
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
            iterator = out.next_shard_iterator().map(str::to_owned);
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
        }
        match iterator {
            Some(next) => {
                self.reuse().iterators.insert(key, (next, Instant::now()));
            }
            // No next iterator: the shard is closed and read to its end.
            None => self.shard_closed(stream_arn, &key),
        }
        Ok(())
    }

    /// A new iterator on the shard, just after the last record read (this process's position,
    /// else the saved checkpoint), or at its oldest record.
    async fn open_iterator(
        &self,
        stream_arn: &str,
        shard_id: &str,
        key: &str,
    ) -> Result<Option<String>, Error> {
        let after = match self.position(key) {
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
        Ok(request
            .send()
            .await
            .map_err(|e| failed("GetShardIterator", e))?
            .shard_iterator()
            .map(str::to_owned))
    }
}

/// Every shard of `stream_arn`, following `LastEvaluatedShardId` by hand: the DynamoDB Streams
/// SDK has no paginator for DescribeStream. A failure is coded under `scope`.
pub(crate) async fn shards(
    streams: &aws_sdk_dynamodbstreams::Client,
    scope: &str,
    stream_arn: &str,
) -> Result<Vec<String>, Error> {
    let mut shards = Vec::new();
    let mut start: Option<String> = None;
    loop {
        let out = streams
            .describe_stream()
            .stream_arn(stream_arn)
            .set_exclusive_start_shard_id(start.take())
            .send()
            .await
            .map_err(|e| crate::aws::errors::from_sdk(scope, "DescribeStream", e, |_| None))?;
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
