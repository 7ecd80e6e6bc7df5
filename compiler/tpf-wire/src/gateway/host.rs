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
}
