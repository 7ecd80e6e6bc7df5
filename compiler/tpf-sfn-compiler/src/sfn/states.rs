//! State names the console shows: the gateway driver's fixed states, and the errors it fails
//! with.

/// The errors a driver execution fails with that TPF's driver has no name for: what the console
/// lists and alarms match.
pub mod fail_error {
    /// STATUS answered a status the driver does not route (a TPF newer than the driver).
    pub const UNEXPECTED_OUTCOME: &str = "TPF.UnexpectedOutcome";
}

/// The gateway driver's states (`docs/gateway.md`, "The Step Functions driver").
pub mod gateway {
    pub const START: &str = "Resume or submit?";
    pub const RESUME: &str = "Resume TPF execution";
    pub const SUBMIT: &str = "Submit TPF execution";
    pub const HAS_CHECKPOINT: &str = "Did TPF return a checkpoint?";
    pub const START_POLLING: &str = "Start polling";
    pub const SWEEP: &str = "Sweep TPF";
    pub const STATUS: &str = "Read TPF status";
    pub const ROUTE: &str = "Route on TPF status";
    pub const POLL_NEXT: &str = "Poll again: next wait";
    pub const POLL_LONGEST: &str = "Poll again: longest wait";
    pub const WAIT: &str = "Wait before polling";
    /// `sweeper.mode = "schedule"`: the lane a WAIT_RETRY takes, which sweeps after its wait.
    pub const RETRY_NEXT: &str = "Retry waits: next wait";
    pub const RETRY_LONGEST: &str = "Retry waits: longest wait";
    pub const WAIT_TO_SWEEP: &str = "Wait, then sweep";
    pub const PARK: &str = "Park until TPF's await completes";
    pub const CHECK_SIGNAL: &str = "Does the signal match?";
    pub const WOKEN: &str = "Woken: poll at once";
    pub const DEADLINE_PASSED: &str = "Await deadline passed: sweep";
    /// A registration that failed for good waits the ladder's rung at its generation, then
    /// hands over.
    pub const REFUSED: &str = "Registration failed: which wait?";
    pub const REFUSED_NEXT: &str = "Registration failed: the generation's wait";
    pub const REFUSED_LONGEST: &str = "Registration failed: longest wait";
    pub const WAIT_TO_HAND_OVER: &str = "Wait, then hand over";
    pub const HAND_OVER: &str = "Hand over to the next generation";
    pub const HANDED_OVER: &str = "Handed-over output";
    pub const GENERATION_HANDED_OVER: &str = "Generation handed over";
    pub const RESULT: &str = "Read TPF result";
    pub const HAS_RESULT: &str = "Did TPF return a result?";
    pub const OUTPUT: &str = "TPF's output";
    pub const SUCCEEDED: &str = "Execution succeeded";
    pub const ENDED_FAILED: &str = "TPF execution failed";
    pub const ENDED_DLQ: &str = "TPF execution in DLQ";
    pub const ENDED_REMOTE_UNKNOWN: &str = "TPF remote outcome unknown";
    pub const IDENTITY_MISMATCH: &str = "Callback identity mismatch";
    pub const NO_CHECKPOINT: &str = "No checkpoint from TPF";
    pub const NO_RESULT: &str = "No result from TPF";
    pub const UNEXPECTED: &str = "Unexpected TPF status";

    /// Every fixed state: an await's console name must not take one.
    pub const ALL: &[&str] = &[
        START,
        RESUME,
        SUBMIT,
        HAS_CHECKPOINT,
        START_POLLING,
        SWEEP,
        STATUS,
        ROUTE,
        POLL_NEXT,
        POLL_LONGEST,
        WAIT,
        PARK,
        CHECK_SIGNAL,
        WOKEN,
        DEADLINE_PASSED,
        REFUSED,
        REFUSED_NEXT,
        REFUSED_LONGEST,
        WAIT_TO_HAND_OVER,
        HAND_OVER,
        HANDED_OVER,
        GENERATION_HANDED_OVER,
        RESULT,
        HAS_RESULT,
        OUTPUT,
        SUCCEEDED,
        ENDED_FAILED,
        ENDED_DLQ,
        ENDED_REMOTE_UNKNOWN,
        IDENTITY_MISMATCH,
        NO_CHECKPOINT,
        NO_RESULT,
        UNEXPECTED,
    ];
}
