//! Runs a handler's future to its end with one poll. Every operation of this engine resolves at
//! once (a suspension is an `Err`, not a pending future), so a future that is still pending
//! after one poll is a bug, reported as one rather than waited for.

use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::context::{Stop, StopKind};
use crate::history::error;

pub fn ready<F: Future>(future: F) -> Result<F::Output, Stop> {
    let mut cx = TaskContext::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(v) => Ok(v),
        Poll::Pending => Err(Stop(StopKind::Failed {
            error: error::PENDING_POLL.to_string(),
            cause: "the handler's future was pending after one poll".to_string(),
        })),
    }
}
