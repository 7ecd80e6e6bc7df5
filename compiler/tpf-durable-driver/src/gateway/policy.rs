//! TPF's driver's timing, as the durable execution SDK's defaults give it: the retry of its
//! steps and the wait strategy of its condition. The delays here are the strategies' upper
//! bounds; an engine that jitters (the deployed SDK, as TPF's driver does) draws below them,
//! the replay engine takes them as they are.

use serde::{Deserialize, Serialize};
use tpf_wire::gateway::host::{step_retry, POLL_WAITS_SECONDS};
use tpf_wire::records::ExecutionStatus;

use super::calls::PollState;

/// A step's retry: attempts after the first, the first delay, the rate, the cap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRetry {
    pub retries: u32,
    pub first_delay_seconds: u64,
    pub backoff_rate: f64,
    pub max_delay_seconds: u64,
}

/// The SDK's default step retry, TPF's driver's (`tpf_wire::gateway::host::step_retry`): 6
/// attempts (1 + 5), 5 s first, ×2, at most 60 s, full jitter, on any error.
pub const TPF_STEP: StepRetry = StepRetry {
    retries: step_retry::RETRIES as u32,
    first_delay_seconds: step_retry::FIRST_DELAY_SECONDS,
    backoff_rate: step_retry::BACKOFF_RATE,
    max_delay_seconds: step_retry::MAX_DELAY_SECONDS,
};

impl StepRetry {
    /// The delay before the attempt after `attempt` (1-based) failed, or `None` when that was
    /// the last: `first × rate^(attempt-1)`, capped, at least a second.
    pub fn delay_after(&self, attempt: u32) -> Option<u64> {
        if attempt > self.retries {
            return None;
        }
        let exp = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let d = (self.first_delay_seconds as f64 * self.backoff_rate.powi(exp))
            .min(self.max_delay_seconds as f64);
        Some((d.ceil() as u64).max(1))
    }
}

/// The checks one condition runs at most (the SDK default's 60 attempts, about 4 h 20 min of
/// polling); then the driver hands over to the next generation rather than fail as TPF's does.
pub const MAX_CHECKS: u32 = 60;

/// What the wait strategy decides after check `attempt` (1-based) read `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollDecision {
    /// A status the driver routes: the condition completes.
    Settled,
    /// Still in progress: check again after this many seconds.
    Again(u64),
    /// Still in progress after [`MAX_CHECKS`].
    Exhausted,
}

/// The states that end a poll: TPF's driver's terminal statuses (`REMOTE_OUTCOME_UNKNOWN`
/// included), a status this driver does not know (routed, and failed), and WAITING_EXTERNAL
/// with an open await. WAITING_EXTERNAL whose await was completed but not yet resumed by TPF's
/// work function is polled on: parking then would wait for a wake that was already delivered.
pub fn settles(state: &PollState) -> bool {
    match ExecutionStatus::parse(&state.status) {
        Some(ExecutionStatus::WaitingExternal) => state.await_pending,
        Some(ExecutionStatus::Queued | ExecutionStatus::Running | ExecutionStatus::WaitRetry) => {
            false
        }
        _ => true,
    }
}

pub fn decide(state: &PollState, attempt: u32) -> PollDecision {
    if settles(state) {
        PollDecision::Settled
    } else if attempt >= MAX_CHECKS {
        PollDecision::Exhausted
    } else {
        let i = usize::try_from(attempt.saturating_sub(1)).unwrap_or(usize::MAX);
        PollDecision::Again(POLL_WAITS_SECONDS[i.min(POLL_WAITS_SECONDS.len() - 1)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_climbs_tpfs_ladder_and_settles_on_a_routed_status() {
        let s = |status: &str, await_pending| PollState {
            status: status.to_owned(),
            await_pending,
        };
        assert_eq!(decide(&s("RUNNING", false), 1), PollDecision::Again(5));
        assert_eq!(decide(&s("QUEUED", false), 12), PollDecision::Again(300));
        assert_eq!(
            decide(&s("WAIT_RETRY", false), 59),
            PollDecision::Again(300)
        );
        assert_eq!(
            decide(&s("RUNNING", false), MAX_CHECKS),
            PollDecision::Exhausted
        );
        for status in ["SUCCEEDED", "FAILED", "DLQ", "REMOTE_OUTCOME_UNKNOWN"] {
            assert_eq!(
                decide(&s(status, false), 1),
                PollDecision::Settled,
                "{status}"
            );
        }
        assert_eq!(
            decide(&s("WAITING_EXTERNAL", true), 1),
            PollDecision::Settled
        );
        // Completed, not yet resumed by TPF's work function: poll on.
        assert_eq!(
            decide(&s("WAITING_EXTERNAL", false), 2),
            PollDecision::Again(8)
        );
        // A status this driver does not know is routed (and failed), never polled forever.
        assert_eq!(decide(&s("PAUSED", false), 1), PollDecision::Settled);
    }

    #[test]
    fn the_step_retry_is_six_attempts_doubling_from_five_to_sixty() {
        let delays: Vec<_> = (1..=6).map(|a| TPF_STEP.delay_after(a)).collect();
        assert_eq!(
            delays,
            [Some(5), Some(10), Some(20), Some(40), Some(60), None]
        );
    }
}
