//! The relay handler: a batch of the gateway binding's queue transport's SQS messages in, the
//! ids of those whose task token could not be answered out (partial batch failures).
//!
//! Lambda's event source mapping deletes every message the response does not name, so a
//! message is reported failed exactly when the process relay would leave it in the queue: its
//! token was not answered. A malformed message is not reported (redelivery cannot fix it; the
//! process deletes it too). Messages are independent and each step is idempotent, so a batch is
//! handled concurrently.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use futures_util::stream::{self, StreamExt};
use tpf_sfn_wakepath::error::Error;
use tpf_sfn_wakepath::relay::{Handled, MessageHandler, PassReport};

/// What one invocation did.
#[derive(Debug, Default)]
pub struct Batch {
    pub response: SqsBatchResponse,
    pub report: PassReport,
}

/// Most messages of one batch in flight at once (the event source mapping's batch is at most
/// ten by default; a larger configured batch is worked through ten at a time).
const CONCURRENCY: usize = 10;

pub async fn handle<H: MessageHandler + Sync>(relay: &H, event: &SqsEvent) -> Batch {
    let pending: Vec<_> = event.records.iter().map(|m| one(relay, m)).collect();
    // Collected first: a closure inside the stream's type would make the future lose `Send`.
    let outcomes: Vec<(String, Result<Handled, Error>)> =
        stream::iter(pending).buffered(CONCURRENCY).collect().await;
    let mut batch = Batch::default();
    for (id, outcome) in &outcomes {
        batch.report.count(id, outcome);
        if outcome.is_err() {
            let mut failed = BatchItemFailure::default();
            failed.item_identifier = id.clone();
            batch.response.batch_item_failures.push(failed);
        }
    }
    batch
}

async fn one<H: MessageHandler + Sync>(
    relay: &H,
    message: &SqsMessage,
) -> (String, Result<Handled, Error>) {
    let id = message.message_id.clone().unwrap_or_default();
    let outcome = match &message.body {
        Some(body) => relay.relay(body).await,
        None => Ok(Handled::Malformed("no body".to_owned())),
    };
    (id, outcome)
}
