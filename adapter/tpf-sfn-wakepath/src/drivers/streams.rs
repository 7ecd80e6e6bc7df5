//! Reading a DynamoDB stream's shards, for the local wake-up's stream mapping.

use crate::error::Error;

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
