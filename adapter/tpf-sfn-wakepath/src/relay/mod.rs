//! `tpf-sfn relay`: the gateway binding's queue transport. The driver sends
//! `{gatewayRequest, taskToken, park}` with `sqs:sendMessage.waitForTaskToken`; the relay
//! invokes TPF's action gateway ([`gateway::GatewayRelay`]) and answers the token as that invoke
//! would have ended (`SendTaskSuccess(response)` or `SendTaskFailure(error)`).
//!
//! The per-message work (a [`MessageHandler`]) is shared with the Lambda handler
//! (`tpf-sfn-lambda`), where the event source mapping receives and deletes instead.
//!
//! Delivery is at least once. A message is deleted only after its token was answered, so a
//! crash between the two redelivers it; the repeated call carries the same `idempotencyKey` and
//! every TPF commit is OCC-conditioned, and an answer Step Functions already has
//! (`TaskTimedOut`, `InvalidToken`, `TaskDoesNotExist`) counts as done.

pub mod envelope;
pub mod gateway;
pub mod http;

use aws_sdk_sfn::error::{ProvideErrorMetadata, SdkError};
use futures_util::stream::{self, StreamExt};

use crate::aws::errors;
use crate::error::Error;

/// Step Functions' limits on `SendTaskFailure`'s `error` and `cause`.
const MAX_ERROR: usize = 256;
const MAX_CAUSE: usize = 32_768;

/// `RELAY_…`: SQS or Step Functions failed; the message stays in the queue and comes back.
const SCOPE: &str = "RELAY";

pub use tpf_sfn_wakeup::relay::Answer;

/// What happened to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Answered and deleted; `error` is the failure name sent, if any, with its cause.
    /// `subject` names what the message was for (`execution TENANT/ID`, `sweep-once`).
    Answered {
        error: Option<String>,
        subject: String,
        cause: String,
    },
    /// Step Functions had closed the token already; deleted.
    AlreadyDone,
    /// Could never succeed; deleted without an answer.
    Malformed(String),
}

/// What one receive pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    pub received: usize,
    pub succeeded: usize,
    pub failed: usize,
    /// One line per failure answered: the message id, the execution and the failure's name
    /// and cause, so a log says which call failed and why, not only how many.
    pub failures: Vec<String>,
    /// Tokens Step Functions had already closed (redeliveries, timeouts).
    pub already_done: usize,
    pub malformed: Vec<String>,
    /// Messages left in the queue because answering or deleting failed (they come back).
    pub retained: Vec<String>,
}

impl PassReport {
    /// Counts what happened to message `id`.
    pub fn count(&mut self, id: &str, outcome: &Result<Handled, Error>) {
        self.received += 1;
        match outcome {
            Ok(Handled::Answered { error: None, .. }) => self.succeeded += 1,
            Ok(Handled::AlreadyDone) => self.already_done += 1,
            Ok(Handled::Answered {
                error: Some(error),
                subject,
                cause,
            }) => {
                self.failed += 1;
                let cause = clip(cause.trim(), MAX_LOGGED_CAUSE);
                self.failures.push(if cause.is_empty() {
                    format!("message {id}: {subject}: answered {error}")
                } else {
                    format!("message {id}: {subject}: answered {error}: {cause}")
                });
            }
            Ok(Handled::Malformed(why)) => self.malformed.push(format!("{id}: {why}")),
            Err(e) => self.retained.push(format!("{id}: {}", e.report())),
        }
    }
}

impl Handled {
    /// What answering `answer` did for `subject` (`closed`: Step Functions had the token
    /// closed already).
    fn of(answer: Answer, subject: String, closed: bool) -> Handled {
        match answer {
            _ if closed => Handled::AlreadyDone,
            Answer::Failure { error, cause } => Handled::Answered {
                error: Some(error),
                subject,
                cause,
            },
            Answer::Success { .. } => Handled::Answered {
                error: None,
                subject,
                cause: String::new(),
            },
        }
    }
}

/// One message's work: parse the body, do the call it asks for, answer its task token.
/// `Malformed` bodies can never succeed and are answered by nobody; an error means the token
/// was not answered and the message must come back. Deleting the message is the caller's: the
/// process deletes it, Lambda's event source mapping deletes what the handler does not report
/// failed.
pub trait MessageHandler {
    fn relay(&self, body: &str)
        -> impl std::future::Future<Output = Result<Handled, Error>> + Send;
}

/// Answers task tokens.
pub(crate) struct Tokens {
    sfn: aws_sdk_sfn::Client,
}

/// `tpf-sfn relay`: receives from the queue, relays each message, deletes it once answered.
pub struct Relay<H> {
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    task: H,
    /// SQS long-poll wait (0..=20 s).
    pub wait_seconds: i32,
    /// Messages of one batch handled at once (1 = one after another).
    pub concurrency: usize,
}

/// `true` when Step Functions says the token is closed already: the answer has nothing to do.
fn already_done(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("TaskTimedOut" | "InvalidToken" | "TaskDoesNotExist")
    )
}

/// `None` when the error says the token is closed already, otherwise the error to report.
fn closed_or<E, R>(operation: &str, e: SdkError<E, R>) -> Option<Error>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    if already_done(e.code()) {
        return None;
    }
    Some(errors::from_sdk(SCOPE, operation, e, |_| None))
}

/// How much of a failure's cause a log line keeps (the whole cause went to Step Functions).
const MAX_LOGGED_CAUSE: usize = 300;

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

impl Tokens {
    /// Sends `answer` for `token`. `Ok(true)` when Step Functions had already closed the token.
    async fn answer(&self, token: &str, answer: &Answer) -> Result<bool, Error> {
        let result = match answer {
            Answer::Success { output } => self
                .sfn
                .send_task_success()
                .task_token(token)
                .output(output)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| closed_or("SendTaskSuccess", e)),
            Answer::Failure { error, cause } => self
                .sfn
                .send_task_failure()
                .task_token(token)
                .error(clip(error, MAX_ERROR))
                .cause(clip(cause, MAX_CAUSE))
                .send()
                .await
                .map(|_| ())
                .map_err(|e| closed_or("SendTaskFailure", e)),
        };
        match result {
            Ok(()) => Ok(false),
            Err(None) => Ok(true),
            Err(Some(e)) => Err(e),
        }
    }
}

impl<H: MessageHandler + Sync> Relay<H> {
    /// A relay whose messages `handler` works.
    pub fn with_handler(
        sqs: aws_sdk_sqs::Client,
        queue_url: impl Into<String>,
        handler: H,
    ) -> Self {
        Relay {
            sqs,
            queue_url: queue_url.into(),
            task: handler,
            wait_seconds: 20,
            concurrency: 10,
        }
    }

    async fn delete(&self, receipt: &str) -> Result<(), Error> {
        self.sqs
            .delete_message()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| errors::from_sdk(SCOPE, "DeleteMessage", e, |_| None))
    }

    /// Relays one message body, then deletes it (also when malformed: redelivery cannot fix
    /// it). An error leaves the message for redelivery.
    pub async fn handle(&self, body: &str, receipt: &str) -> Result<Handled, Error> {
        let handled = self.task.relay(body).await?;
        self.delete(receipt).await?;
        Ok(handled)
    }

    async fn handle_message(
        &self,
        message: &aws_sdk_sqs::types::Message,
    ) -> (String, Result<Handled, Error>) {
        let id = message.message_id().unwrap_or("?").to_owned();
        let outcome = match (message.body(), message.receipt_handle()) {
            (Some(body), Some(receipt)) => self.handle(body, receipt).await,
            _ => Err(
                Error::new("RELAY_MESSAGE", "the message has no body or receipt handle").with_hint(
                    "left on the queue for redelivery; only the drivers should send to it",
                ),
            ),
        };
        (id, outcome)
    }

    /// One ReceiveMessage (long poll) and every message it returned.
    pub async fn poll_once(&self) -> Result<PassReport, Error> {
        let received = self
            .sqs
            .receive_message()
            .queue_url(&self.queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(self.wait_seconds)
            .send()
            .await
            .map_err(|e| errors::from_sdk(SCOPE, "ReceiveMessage", e, |_| None))?;
        // Messages are independent and every step of `handle` is idempotent, so a batch is
        // handled concurrently: the round trips to the host, Step Functions and SQS overlap.
        let pending: Vec<_> = received
            .messages()
            .iter()
            .map(|m| self.handle_message(m))
            .collect();
        let outcomes: Vec<(String, Result<Handled, Error>)> =
            // Collected first: a closure inside the stream's type would make the future
            // lose `Send` (rust-lang/rust#64552).
            stream::iter(pending)
                .buffer_unordered(self.concurrency.max(1))
                .collect()
                .await;
        let mut report = PassReport::default();
        for (id, outcome) in &outcomes {
            report.count(id, outcome);
        }
        Ok(report)
    }
}
