//! The durable driver's operation budget: how many calls one generation may make so that its
//! worst case still ends below the budget with a hand-over.

use tpf_durable_driver::limits::{
    MAX_CHECKPOINT_BYTES, SERVICE_OPERATIONS, SERVICE_WRITTEN_STATE_BYTES,
};
use tpf_durable_driver::spec::TransportRetry;

/// The most operations a generation checkpoints, whatever the configured event budget: every
/// invocation replays every checkpoint before it, so a long generation costs quadratic replay
/// time, and the service stops an execution at 3,000 operations and at 100 MiB of written
/// state. With every checkpoint at most `MAX_CHECKPOINT_BYTES`, this ceiling
/// keeps a generation under both, as the assertions below prove at build time.
pub const OPERATION_CEILING: u32 = 2_000;

const _: () = assert!((OPERATION_CEILING as u64) < SERVICE_OPERATIONS);
const _: () = assert!(written_state_bound(OPERATION_CEILING) <= SERVICE_WRITTEN_STATE_BYTES);

/// The most state a generation of `operation_budget` operations can write.
pub const fn written_state_bound(operation_budget: u32) -> u64 {
    operation_budget as u64 * MAX_CHECKPOINT_BYTES
}

/// Operations of the worst iteration: the call, every transport retry (a pause and a call),
/// then a park (a callback is three operations: its context, the callback, the step that
/// writes the token row) and the re-check wait after a failed registration.
pub fn iteration_cost(retry: &TransportRetry) -> u64 {
    1 + 2 * retry.max_attempts + 3 + 1
}

/// Outside the loop: the registration step, the wait before a hand-over and the hand-over step.
const FIXED: u64 = 3;

/// Calls per generation, or `None` when not even one fits.
pub fn max_iterations(operation_budget: u32, retry: &TransportRetry) -> Option<u64> {
    let n = u64::from(operation_budget).checked_sub(FIXED)? / iteration_cost(retry);
    (n >= 1).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(max_attempts: u64) -> TransportRetry {
        TransportRetry {
            interval_seconds: 2,
            max_attempts,
            backoff_rate: 2.0,
            max_delay_seconds: 60,
        }
    }

    #[test]
    fn the_worst_generation_fits_the_budget() {
        for budget in [8, 100, 2_000] {
            for attempts in [0, 3, 10] {
                let r = retry(attempts);
                if let Some(n) = max_iterations(budget, &r) {
                    assert!(FIXED + n * iteration_cost(&r) <= u64::from(budget));
                    assert!(FIXED + (n + 1) * iteration_cost(&r) > u64::from(budget));
                }
            }
        }
    }

    #[test]
    fn a_budget_below_one_iteration_has_no_answer() {
        assert_eq!(max_iterations(5, &retry(3)), None);
    }
}
