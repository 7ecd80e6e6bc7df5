//! The wake-up function's work on one stream record, TPF's await wake-up in TPF's order
//! (`docs/gateway.md`): the decision of `tpf_sfn_wakeup::wake::on_stream_record`, the BINDING
//! put, the wake, the callback send, then the DELIVERY evidence or the replacement generation.
//!
//! A record ends acknowledged or retried; an error (a failed read or write, a binding
//! conflict, a refused start) retries it too, as an exception does in TPF's handler. The
//! function reports each retried record as a batch item failure.

use tpf_sfn_wakeup::wake::{self, AfterBind, Disposition, Settle, StreamStep, WakeStep};
use tpf_wire::gateway::AwaitIdentity;
use tpf_wire::records::Item;

use super::invoke::Invoker;
use super::reads::AwsHost;
use super::starter::Starter;
use crate::error::Error;

/// What became of one record, for the function's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Woke {
    /// Nothing to do (not an await's completion, fenced, already delivered, malformed).
    Acknowledged,
    /// The interaction was bound; it is not completed yet.
    Bound,
    /// The callback success was sent (or the provider had it) and its DELIVERY row written.
    Delivered(&'static str),
    /// The callback was closed: the next generation started under this name.
    Replaced(String),
}

/// The wake-up: TPF's reads, the binding table's writes, the callback sends and the starter.
pub struct Wakeup<I> {
    pub host: AwsHost<I>,
    pub starter: Starter,
    /// Milliseconds since the epoch, for the DELIVERY row.
    pub now_ms: fn() -> i64,
}

/// A random version-4 UUID: the DELIVERY row's `attempt_id`, one per delivery attempt.
fn attempt_id() -> Result<String, Error> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| {
        Error::new(
            "GATEWAY_HOST_RANDOM",
            "no randomness for the delivery's attempt id",
        )
        .with_source(std::io::Error::other(e.to_string()))
        .with_hint("the record is retried")
    })?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Milliseconds since the epoch by the system clock.
pub fn system_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl<I: Invoker> Wakeup<I> {
    /// One record's new image (`None`: the record has none).
    pub async fn on_record(&self, image: Option<&Item>) -> Result<(Disposition, Woke), Error> {
        let step = self
            .host
            .decide(|view| wake::on_stream_record(image, view))
            .await?;
        let (bindings, then) = match step {
            StreamStep::Done(d) => return Ok((d, Woke::Acknowledged)),
            StreamStep::Bind { bindings, then } => (bindings, then),
        };
        // In the decision's order: a wake follows only once every binding is written.
        for binding in &bindings {
            self.host.bindings.put_binding(binding).await?;
        }
        match then {
            AfterBind::Acknowledge => Ok((Disposition::Acknowledge, Woke::Bound)),
            AfterBind::Wake(identity) => self.wake(&identity).await,
        }
    }

    /// TPF's wake of a completed await.
    pub async fn wake(&self, identity: &AwaitIdentity) -> Result<(Disposition, Woke), Error> {
        let delivery = match self.host.decide(|view| wake::wake(identity, view)).await? {
            WakeStep::Done(d) => return Ok((d, Woke::Acknowledged)),
            WakeStep::Deliver(delivery) => delivery,
        };
        let providers = &self.host.providers;
        let arn = &delivery.binding.provider.execution_arn;
        let engine = providers.engine(arn)?;
        let sent = providers
            .send_success(engine, delivery.callback_id(), &delivery.result_json())
            .await;
        let outcome = providers
            .send_outcome(engine, arn, &sent, delivery.callback_id())
            .await?;
        match self
            .host
            .decide(|view| wake::settle(&delivery, outcome, view))
            .await?
        {
            Settle::Record(outcome) => {
                self.host
                    .bindings
                    .put_delivery(&delivery.binding, outcome, (self.now_ms)(), &attempt_id()?)
                    .await?;
                Ok((Disposition::Acknowledge, Woke::Delivered(outcome.as_str())))
            }
            Settle::Replace(input) => {
                let started = self.starter.start(&input).await?;
                Ok((
                    Disposition::Acknowledge,
                    Woke::Replaced(started.durable_execution_name),
                ))
            }
            Settle::Retry(why) => Ok((Disposition::Retry(why), Woke::Acknowledged)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::attempt_id;

    #[test]
    fn attempt_ids_are_version_4_uuids() {
        let a = attempt_id().unwrap();
        let b = attempt_id().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
    }
}
