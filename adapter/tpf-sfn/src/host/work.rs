//! TPF's work function, in process: TPF's control plane hands each work item to SQS and an
//! SQS-triggered function claims and runs it as soon as it is delivered. `serve` does the same
//! on a short period: every tick takes the host's lock (skipping the tick when a request holds
//! it past the lock wait) and runs every item queued since the last one. A tick's work is
//! bounded by the queue, which only gateway calls fill, and an idle tick is one lock.

use std::sync::Arc;
use std::time::Duration;

use tpf_wire::java_error::JavaError;
use tpf_wire::records::ExecutionRecord;

use super::handlers::locked;
use super::{HostState, HostStore};
use crate::stdio::errln;

/// How often the work function looks at the queue: SQS delivers a message to its function well
/// under a second after it is sent.
pub const WORK_PERIOD: Duration = Duration::from_millis(250);

/// One tick: every queued item claimed and run; the records they left behind.
pub async fn run_once<S: HostStore>(
    state: Arc<HostState<S>>,
) -> Result<Vec<ExecutionRecord>, WorkError> {
    let ran = locked(state, |hosted, now| {
        if hosted.queued() == 0 {
            return Ok(Vec::new());
        }
        hosted.gateway(|gateway| gateway.plane.run_work(now))
    })
    .await
    .map_err(|_| WorkError::Busy)?;
    ran.map_err(WorkError::Failed)
}

/// Why a tick did not run its queue.
#[derive(Debug)]
pub enum WorkError {
    /// A request held the host past the lock wait: the next tick tries again.
    Busy,
    /// An item's run failed (it is dropped, as TPF's work function drops a message whose
    /// claim fails; the sweep queues its execution again when it is due).
    Failed(JavaError),
}

/// Runs the work function until the returned task is aborted.
pub fn spawn<S: HostStore>(
    state: Arc<HostState<S>>,
    period: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match run_once(state.clone()).await {
                Ok(_) | Err(WorkError::Busy) => {}
                Err(WorkError::Failed(e)) => {
                    errln!("tpf-sfn serve: work function: {}: {}", e.class, e.message)
                }
            }
        }
    })
}
