//! What TPF's coordinator driver (`AwsDurableCoordinatorHandler`) does that another host of the
//! same protocol repeats: its output, its failures with TPF's texts, its poll waits and the
//! retry of its steps. The error names are the project's (a Java exception has no Step
//! Functions error name); their causes are TPF's messages.

use serde::Serialize;

use super::records::ExecutionCheckpoint;

/// `AwsDurableExecutionOutput`: what a driver returns when TPF's execution succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecutionOutput {
    pub tenant_id: String,
    pub execution_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub generation: i64,
    pub result_json: String,
}

impl ExecutionOutput {
    pub fn new(checkpoint: &ExecutionCheckpoint, generation: i64, result_json: &str) -> Self {
        Self {
            tenant_id: checkpoint.tenant_id.clone(),
            execution_id: checkpoint.execution_id.clone(),
            pipeline_id: checkpoint.pipeline_id.clone(),
            contract_version: checkpoint.contract_version.clone(),
            release_version: checkpoint.release_version.clone(),
            generation,
            result_json: result_json.to_owned(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The errors a gateway driver fails with.
pub mod driver_error {
    /// TPF's execution reached FAILED, DLQ or REMOTE_OUTCOME_UNKNOWN.
    pub const EXECUTION_ENDED: &str = "TPF.ExecutionEnded";
    /// The callback signal names another execution or generation than the driver's checkpoint.
    pub const CALLBACK_IDENTITY_MISMATCH: &str = "TPF.CallbackIdentityMismatch";
    /// SUBMIT answered without a checkpoint.
    pub const NO_CHECKPOINT: &str = "TPF.NoCheckpoint";
    /// RESULT answered without a result.
    pub const NO_RESULT: &str = "TPF.NoResult";
}

/// TPF's message when its execution ends in a status other than SUCCEEDED.
pub fn execution_ended_cause(status: &str) -> String {
    format!("TPF execution ended with status {status}")
}

/// TPF's message when a callback signal does not match the checkpoint.
pub const CALLBACK_IDENTITY_MISMATCH_CAUSE: &str =
    "provider callback identity does not match the TPF execution checkpoint";
/// TPF's message when SUBMIT returns no checkpoint.
pub const NO_CHECKPOINT_CAUSE: &str = "TPF action Lambda did not return an execution checkpoint";
/// TPF's message when RESULT returns no payload.
pub const NO_RESULT_CAUSE: &str = "TPF action Lambda did not return a result payload";

/// The wait strategy of TPF's poll (the durable SDK's default: 5 s first, ×1.5, at most 300 s)
/// without its jitter, as a fixed ladder: the wait before poll `n + 1` is `5 × 1.5^n` to the
/// nearest second (halves up), capped at 300. The ladder holds every distinct wait; past its
/// end, the last one repeats, and it starts over after each park.
pub const POLL_WAITS_SECONDS: [u64; 12] = [5, 8, 11, 17, 25, 38, 57, 85, 128, 192, 288, 300];

/// The wait before a generation whose callback registration failed for good hands over: the
/// poll ladder's rung at `generation - 1` (generation 1 waits 5 s, then 8, 11, ..., 300 s from
/// generation 12 on). TPF's driver paces every retry on its wait strategy; a registration TPF
/// keeps refusing (a persistent gateway error while its record says WAITING_EXTERNAL) then costs
/// one generation per 300 s until TPF's await deadline, applied by the next generation's
/// SWEEP, changes TPF's status. The Step Functions driver renders the same rule over the same
/// ladder (`States.ArrayGetItem` at `generation - 1`, its longest wait from the generation
/// [`REFUSED_LONGEST_FROM_GENERATION`]).
pub fn refused_registration_wait_seconds(generation: i64) -> u64 {
    let rung = usize::try_from(generation.saturating_sub(1)).unwrap_or(0);
    POLL_WAITS_SECONDS[rung.min(POLL_WAITS_SECONDS.len() - 1)]
}

/// The first generation whose refused registration waits the ladder's longest wait.
pub const REFUSED_LONGEST_FROM_GENERATION: i64 = POLL_WAITS_SECONDS.len() as i64;

/// The retry of TPF's driver steps (the durable SDK's default step retry): 6 attempts (the
/// first and 5 retries), 5 s first delay, ×2, at most 60 s, full jitter, on any error.
pub mod step_retry {
    pub const RETRIES: u64 = 5;
    pub const FIRST_DELAY_SECONDS: u64 = 5;
    pub const BACKOFF_RATE: f64 = 2.0;
    pub const MAX_DELAY_SECONDS: u64 = 60;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_is_five_times_one_and_a_half_to_the_n_rounded_and_capped() {
        let mut expected = Vec::new();
        let mut n = 0;
        loop {
            let w = (5.0 * 1.5f64.powi(n)).round().min(300.0) as u64;
            expected.push(w);
            if w == 300 {
                break;
            }
            n += 1;
        }
        assert_eq!(POLL_WAITS_SECONDS.as_slice(), expected.as_slice());
    }

    #[test]
    fn a_refused_registration_waits_the_ladder_by_generation_up_to_its_longest() {
        let waits: Vec<u64> = (1..=14).map(refused_registration_wait_seconds).collect();
        assert_eq!(
            waits,
            [5, 8, 11, 17, 25, 38, 57, 85, 128, 192, 288, 300, 300, 300]
        );
        assert_eq!(
            refused_registration_wait_seconds(REFUSED_LONGEST_FROM_GENERATION),
            300
        );
        assert_eq!(
            refused_registration_wait_seconds(REFUSED_LONGEST_FROM_GENERATION - 1),
            288
        );
        // TPF refuses a generation below 1; the rule still answers the first rung.
        assert_eq!(refused_registration_wait_seconds(0), 5);
        assert_eq!(refused_registration_wait_seconds(i64::MIN), 5);
        assert_eq!(refused_registration_wait_seconds(i64::MAX), 300);
    }
}
