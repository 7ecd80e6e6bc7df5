//! State names the console shows: the driver's fixed states and the sweeper's.

/// The driver's fixed states. Await states must not take these names.
pub mod driver {
    pub const REGISTER: &str = "Register driver generation";
    pub const PROCESS: &str = "Process work item";
    pub const ROUTE: &str = "Route on TPF status";
    pub const GENERIC_AWAIT: &str = "Await external completion";
    pub const WAIT_DUE: &str = "Wait until due";
    pub const WAIT_LEASE: &str = "Wait for lease";
    pub const RECHECK: &str = "Wait before re-checking TPF";
    pub const BACK_OFF: &str = "Deadline passed: back off";
    pub const BACK_OFF_FIRST: &str = "Back off: first wait";
    pub const BACK_OFF_DOUBLE: &str = "Back off: double the wait";
    pub const BACK_OFF_LONGEST: &str = "Back off: longest wait";
    pub const LATE: &str = "Deadline passed: park until woken or re-ask";
    pub const DUE_THEN_HAND_OVER: &str = "Wait until due, then hand over";
    pub const LEASE_THEN_HAND_OVER: &str = "Wait for lease, then hand over";
    pub const CONTINUE: &str = "Continue as new generation";
    pub const HANDED_OVER: &str = "Generation handed over";
    pub const SUCCEEDED: &str = "Execution succeeded";
    pub const FAILED: &str = "Execution failed in TPF";
    pub const REMOTE_UNKNOWN: &str = "Remote outcome unknown to TPF";
    pub const MISMATCH: &str = "Release identity mismatch";
    pub const NOT_FOUND: &str = "Execution unknown to TPF";
    pub const UNEXPECTED: &str = "Unexpected TPF outcome";

    pub const ALL: &[&str] = &[
        REGISTER,
        PROCESS,
        ROUTE,
        GENERIC_AWAIT,
        WAIT_DUE,
        WAIT_LEASE,
        RECHECK,
        BACK_OFF,
        BACK_OFF_FIRST,
        BACK_OFF_DOUBLE,
        BACK_OFF_LONGEST,
        LATE,
        DUE_THEN_HAND_OVER,
        LEASE_THEN_HAND_OVER,
        CONTINUE,
        HANDED_OVER,
        SUCCEEDED,
        FAILED,
        REMOTE_UNKNOWN,
        MISMATCH,
        NOT_FOUND,
        UNEXPECTED,
    ];
}

/// The errors a driver execution fails with, one per Fail state: what the console lists and
/// alarms match. A refusal TPF sends as a task error fails the driver under the same name.
pub mod fail_error {
    use tpf_wire::action::{driver_error, task_error};

    pub const EXECUTION_FAILED: &str = driver_error::EXECUTION_FAILED;
    pub const REMOTE_OUTCOME_UNKNOWN: &str = driver_error::REMOTE_OUTCOME_UNKNOWN;
    pub const RELEASE_IDENTITY_MISMATCH: &str = task_error::RELEASE_IDENTITY_MISMATCH;
    pub const EXECUTION_NOT_FOUND: &str = task_error::EXECUTION_NOT_FOUND;
    pub const UNEXPECTED_OUTCOME: &str = driver_error::UNEXPECTED_OUTCOME;
}

/// Sweeper state names.
pub mod sweeper {
    pub const LOCATE: &str = "Locate this release's driver";
    pub const SWEEP: &str = "Sweep TPF once";
    pub const ENSURE: &str = "Ensure a driver for each due execution";
    pub const CHECK_RELEASE: &str = "Is it pinned to this release?";
    pub const OTHER_RELEASE: &str = "Pinned to another release";
    pub const LOOKUP_DRIVER: &str = "Look up the live driver";
    pub const HAS_POINTER: &str = "Is a driver registered?";
    pub const DESCRIBE: &str = "Check the registered driver";
    pub const IS_RUNNING: &str = "Is the driver running?";
    pub const LOOKUP_TOKEN: &str = "Look up the parked driver's token";
    pub const HAS_TOKEN: &str = "Is a wakeup token registered?";
    pub const TOKEN_IS_LIVE: &str = "Does the token belong to the live driver?";
    pub const WAKE: &str = "Wake the parked driver";
    pub const LIVE: &str = "Driver is live";
    pub const START_RECOVERY: &str = "Start a recovery driver";
    pub const RECOVERY_EXISTS: &str = "Recovery already started";
    pub const RECOVERED: &str = "Recovery driver started";
    pub const DONE: &str = "Sweep finished";
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
}
