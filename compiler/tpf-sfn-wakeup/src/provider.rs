//! What each backend's adapter derives from its provider, in the neutral words TPF's wake-up
//! and reconciler decide on: whether a refused callback send means the callback is gone, what
//! the provider's history says about that callback ([`ProviderState`]), and what state a
//! driver execution is in when its status changes ([`DriverState`]). The engine names below
//! are the providers' own (AWS's error codes, history event types and execution statuses).

/// The engine a parked driver runs on, read from its execution's ARN: what the wake-up sends
/// the callback with, and how a refused send and the driver's state are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeEngine {
    /// A Step Functions execution (`arn:<partition>:states:...`): `SendTaskSuccess`.
    StepFunctions,
    /// A Lambda durable execution: `SendDurableExecutionCallbackSuccess` with the token as the
    /// callback id.
    Durable,
}

impl WakeEngine {
    /// A states ARN, or no ARN at all, is Step Functions; anything else is a durable execution. That
    /// includes a `arn:<partition>:lambda:...:durable-execution:...` ARN and the durable
    /// execution ids the local emulator hands out, which are not ARNs.
    pub fn of(execution_arn: &str) -> WakeEngine {
        let arn = execution_arn.trim();
        if arn.is_empty() || arn.split(':').nth(2) == Some("states") {
            WakeEngine::StepFunctions
        } else {
            WakeEngine::Durable
        }
    }
}

/// TPF's `AwsDurableProviderCallbackState`: the provider's view of one callback after a send
/// was refused as gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderState {
    /// The callback completed successfully: an earlier send was accepted.
    Succeeded,
    /// The callback, or the execution that waited on it, is closed without that success.
    Closed,
    /// The callback is still open.
    Open,
    /// The history does not show this callback.
    Unknown,
}

/// The error codes with which a provider refuses a callback send because the callback no
/// longer waits (TPF catches these two on Lambda durable functions; Step Functions answers a
/// completed, timed-out or unknown task token with the other three).
pub fn callback_gone(engine: WakeEngine, error_code: &str) -> bool {
    let codes: &[&str] = match engine {
        WakeEngine::Durable => &["ResourceNotFoundException", "CallbackTimeoutException"],
        WakeEngine::StepFunctions => &["TaskDoesNotExist", "TaskTimedOut", "InvalidToken"],
    };
    codes.contains(&error_code)
}

/// One event of a Lambda durable execution's history (`GetDurableExecutionHistory`, every
/// page): its type, its operation id and, on `CallbackStarted`, the callback id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurableEvent<'a> {
    pub event_type: &'a str,
    pub id: &'a str,
    pub callback_id: Option<&'a str>,
}

/// Lambda durable functions' history event types the classification reads.
pub mod durable_event {
    pub const CALLBACK_STARTED: &str = "CallbackStarted";
    pub const CALLBACK_SUCCEEDED: &str = "CallbackSucceeded";
    pub const CALLBACK_FAILED: &str = "CallbackFailed";
    pub const CALLBACK_TIMED_OUT: &str = "CallbackTimedOut";
    pub const EXECUTION_SUCCEEDED: &str = "ExecutionSucceeded";
    pub const EXECUTION_FAILED: &str = "ExecutionFailed";
    pub const EXECUTION_TIMED_OUT: &str = "ExecutionTimedOut";
    pub const EXECUTION_STOPPED: &str = "ExecutionStopped";
}

/// TPF's classification of a callback from its durable execution's history
/// (`AwsDurableHistory.callbackState`). `None` is a history the service no longer has
/// (`ResourceNotFoundException`), which TPF treats as closed.
///
/// **Our deviation:** a callback that ended without success (failed, timed out) while its
/// execution still runs is `Open`, where TPF's is closed. TPF's driver fails as its callback
/// ends, so its execution closes at once; ours carries on (past the park's deadline it polls;
/// after a registration that failed for good it waits TPF's ladder, then hands over), and a
/// replacement started now would run beside it. The wake-up retries until the execution has
/// closed ([`sfn_callback_state`] alike).
pub fn durable_callback_state(
    events: Option<&[DurableEvent<'_>]>,
    callback_id: &str,
) -> ProviderState {
    use durable_event as e;
    let Some(events) = events else {
        return ProviderState::Closed;
    };
    let Some(started) = events
        .iter()
        .find(|ev| ev.event_type == e::CALLBACK_STARTED && ev.callback_id == Some(callback_id))
    else {
        return ProviderState::Unknown;
    };
    let terminal = events.iter().find(|ev| {
        ev.id == started.id
            && [
                e::CALLBACK_SUCCEEDED,
                e::CALLBACK_FAILED,
                e::CALLBACK_TIMED_OUT,
            ]
            .contains(&ev.event_type)
    });
    let execution_closed = events.iter().any(|ev| {
        [
            e::EXECUTION_SUCCEEDED,
            e::EXECUTION_FAILED,
            e::EXECUTION_TIMED_OUT,
            e::EXECUTION_STOPPED,
        ]
        .contains(&ev.event_type)
    });
    match terminal {
        Some(ev) if ev.event_type == e::CALLBACK_SUCCEEDED => ProviderState::Succeeded,
        _ if execution_closed => ProviderState::Closed,
        _ => ProviderState::Open,
    }
}

/// Step Functions' names the classification reads.
pub mod sfn {
    /// `DescribeExecution` statuses.
    pub mod status {
        pub const RUNNING: &str = "RUNNING";
        pub const SUCCEEDED: &str = "SUCCEEDED";
        pub const FAILED: &str = "FAILED";
        pub const TIMED_OUT: &str = "TIMED_OUT";
        pub const ABORTED: &str = "ABORTED";
        pub const PENDING_REDRIVE: &str = "PENDING_REDRIVE";
    }
    /// `GetExecutionHistory` event types.
    pub mod event {
        pub const TASK_SUCCEEDED: &str = "TaskSucceeded";
        pub const TASK_FAILED: &str = "TaskFailed";
        pub const TASK_TIMED_OUT: &str = "TaskTimedOut";
        pub const TASK_START_FAILED: &str = "TaskStartFailed";
        pub const TASK_SUBMIT_FAILED: &str = "TaskSubmitFailed";
        pub const EXECUTION_SUCCEEDED: &str = "ExecutionSucceeded";
        pub const EXECUTION_FAILED: &str = "ExecutionFailed";
        pub const EXECUTION_TIMED_OUT: &str = "ExecutionTimedOut";
        pub const EXECUTION_ABORTED: &str = "ExecutionAborted";
    }
}

/// The same classification for a Step Functions driver parked on a `.waitForTaskToken` task.
/// A Step Functions history does not name a task token in the events that end a task, so the
/// adapter finds the callback by its `TaskScheduled` event (whose parameters carry the token)
/// and passes the types of the events from that one on, in order; `None` when no scheduled
/// task carries the token. `status` is `DescribeExecution`'s, `None` when the execution does
/// not exist (`ExecutionDoesNotExist`: closed, as TPF treats a lost history).
///
/// The driver runs one state at a time, so the first task-ending event after the callback's
/// `TaskScheduled` ends the callback's task: `TaskSucceeded` is the accepted success. Any other
/// ending, or none, is closed once the execution is (by status or by its closing event), and
/// open while it runs: the driver carries on from its park's catch (our deviation, as in
/// [`durable_callback_state`]).
pub fn sfn_callback_state(status: Option<&str>, from_callback: Option<&[&str]>) -> ProviderState {
    use sfn::{event as e, status as s};
    let Some(status) = status else {
        return ProviderState::Closed;
    };
    let Some(events) = from_callback else {
        return ProviderState::Unknown;
    };
    let ending = events.iter().find(|t| {
        [
            e::TASK_SUCCEEDED,
            e::TASK_FAILED,
            e::TASK_TIMED_OUT,
            e::TASK_START_FAILED,
            e::TASK_SUBMIT_FAILED,
        ]
        .contains(t)
    });
    let execution_closed = [s::SUCCEEDED, s::FAILED, s::TIMED_OUT, s::ABORTED].contains(&status)
        || events.iter().any(|t| {
            [
                e::EXECUTION_SUCCEEDED,
                e::EXECUTION_FAILED,
                e::EXECUTION_TIMED_OUT,
                e::EXECUTION_ABORTED,
            ]
            .contains(t)
        });
    match ending {
        Some(&t) if t == e::TASK_SUCCEEDED => ProviderState::Succeeded,
        _ if execution_closed => ProviderState::Closed,
        _ => ProviderState::Open,
    }
}

/// A driver execution's state as the reconciler sees it after a status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DriverState {
    /// Still running (Step Functions: also `PENDING_REDRIVE`, about to run again).
    Running,
    Succeeded,
    /// Failed, stopped (aborted) or timed out.
    Ended,
    /// The provider no longer has it (expired or deleted).
    NotFound,
}

/// A provider status the reconciler does not know; TPF's reconciler throws on one
/// ("Unsupported Durable execution status"), so the event is retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStatus(pub String);

impl std::fmt::Display for UnknownStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unsupported driver execution status `{}`", self.0)
    }
}

impl std::error::Error for UnknownStatus {}

/// A driver execution's state from its provider status: `GetDurableExecution`'s status on
/// Lambda durable functions (as TPF maps it), `DescribeExecution`'s on Step Functions.
/// `None` is an execution the provider does not have.
pub fn driver_state(
    engine: WakeEngine,
    status: Option<&str>,
) -> Result<DriverState, UnknownStatus> {
    let Some(status) = status else {
        return Ok(DriverState::NotFound);
    };
    let state = match (engine, status) {
        (_, "RUNNING") => DriverState::Running,
        (_, "SUCCEEDED") => DriverState::Succeeded,
        (_, "FAILED" | "TIMED_OUT") => DriverState::Ended,
        (WakeEngine::Durable, "STOPPED") => DriverState::Ended,
        (WakeEngine::StepFunctions, sfn::status::ABORTED) => DriverState::Ended,
        (WakeEngine::StepFunctions, sfn::status::PENDING_REDRIVE) => DriverState::Running,
        _ => return Err(UnknownStatus(status.to_owned())),
    };
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use durable_event as e;

    fn ev<'a>(event_type: &'a str, id: &'a str, callback_id: Option<&'a str>) -> DurableEvent<'a> {
        DurableEvent {
            event_type,
            id,
            callback_id,
        }
    }

    #[test]
    fn durable_history_classifies_as_tpf_does_once_the_execution_closed() {
        let started = ev(e::CALLBACK_STARTED, "op-2", Some("cb"));
        let other = ev(e::CALLBACK_STARTED, "op-1", Some("other"));
        let cases: Vec<(Vec<DurableEvent<'_>>, ProviderState)> = vec![
            (vec![other], ProviderState::Unknown),
            (
                vec![started, ev(e::CALLBACK_SUCCEEDED, "op-2", None)],
                ProviderState::Succeeded,
            ),
            (
                vec![
                    started,
                    ev(e::CALLBACK_TIMED_OUT, "op-2", None),
                    ev(e::EXECUTION_FAILED, "exec", None),
                ],
                ProviderState::Closed,
            ),
            (
                vec![
                    started,
                    ev(e::CALLBACK_FAILED, "op-2", None),
                    ev(e::EXECUTION_SUCCEEDED, "exec", None),
                ],
                ProviderState::Closed,
            ),
            // Our deviation: ended without success while the driver still runs (it polls past
            // its deadline, or waits to hand over): open until the execution closes.
            (
                vec![started, ev(e::CALLBACK_TIMED_OUT, "op-2", None)],
                ProviderState::Open,
            ),
            (
                vec![started, ev(e::CALLBACK_FAILED, "op-2", None)],
                ProviderState::Open,
            ),
            // Another operation's success is not this callback's.
            (
                vec![other, started, ev(e::CALLBACK_SUCCEEDED, "op-1", None)],
                ProviderState::Open,
            ),
            (
                vec![started, ev(e::EXECUTION_STOPPED, "exec", None)],
                ProviderState::Closed,
            ),
            (
                vec![started, ev(e::EXECUTION_SUCCEEDED, "exec", None)],
                ProviderState::Closed,
            ),
            (vec![started], ProviderState::Open),
        ];
        for (events, want) in cases {
            assert_eq!(
                durable_callback_state(Some(&events), "cb"),
                want,
                "{events:?}"
            );
        }
        assert_eq!(durable_callback_state(None, "cb"), ProviderState::Closed);
    }

    #[test]
    fn sfn_history_classifies_the_callback_task() {
        use sfn::{event as se, status as st};
        type Case<'a> = (Option<&'a str>, Option<&'a [&'a str]>, ProviderState);
        let cases: &[Case<'_>] = &[
            (None, None, ProviderState::Closed),
            (Some(st::RUNNING), None, ProviderState::Unknown),
            (
                Some(st::RUNNING),
                Some(&["TaskScheduled", "TaskStarted", "TaskSubmitted"]),
                ProviderState::Open,
            ),
            (
                Some(st::RUNNING),
                Some(&[
                    "TaskScheduled",
                    "TaskSubmitted",
                    se::TASK_SUCCEEDED,
                    "TaskStateExited",
                ]),
                ProviderState::Succeeded,
            ),
            (
                Some(st::SUCCEEDED),
                Some(&["TaskScheduled", se::TASK_SUCCEEDED, se::TASK_FAILED]),
                ProviderState::Succeeded,
            ),
            // Our deviation: the task ended without success while the driver still runs
            // (past its park's deadline it polls; after a failed registration it waits, then
            // hands over): open until the execution closes.
            (
                Some(st::RUNNING),
                Some(&["TaskScheduled", se::TASK_TIMED_OUT, se::TASK_SUCCEEDED]),
                ProviderState::Open,
            ),
            (
                Some(st::RUNNING),
                Some(&["TaskScheduled", se::TASK_FAILED, "WaitStateEntered"]),
                ProviderState::Open,
            ),
            (
                Some(st::SUCCEEDED),
                Some(&["TaskScheduled", se::TASK_FAILED, se::EXECUTION_SUCCEEDED]),
                ProviderState::Closed,
            ),
            (
                Some(st::TIMED_OUT),
                Some(&["TaskScheduled", se::TASK_TIMED_OUT]),
                ProviderState::Closed,
            ),
            (
                Some(st::ABORTED),
                Some(&["TaskScheduled", "TaskSubmitted", se::EXECUTION_ABORTED]),
                ProviderState::Closed,
            ),
            (
                Some(st::FAILED),
                Some(&["TaskScheduled", "TaskSubmitted"]),
                ProviderState::Closed,
            ),
            (
                Some(st::PENDING_REDRIVE),
                Some(&["TaskScheduled"]),
                ProviderState::Open,
            ),
        ];
        for (status, events, want) in cases {
            assert_eq!(
                sfn_callback_state(*status, *events),
                *want,
                "{status:?} {events:?}"
            );
        }
    }

    #[test]
    fn gone_codes_are_the_engines_own() {
        for code in ["TaskDoesNotExist", "TaskTimedOut", "InvalidToken"] {
            assert!(callback_gone(WakeEngine::StepFunctions, code));
            assert!(!callback_gone(WakeEngine::Durable, code));
        }
        for code in ["ResourceNotFoundException", "CallbackTimeoutException"] {
            assert!(callback_gone(WakeEngine::Durable, code));
            assert!(!callback_gone(WakeEngine::StepFunctions, code));
        }
        assert!(!callback_gone(
            WakeEngine::Durable,
            "TooManyRequestsException"
        ));
        assert!(!callback_gone(
            WakeEngine::StepFunctions,
            "ThrottlingException"
        ));
    }

    #[test]
    fn driver_states() {
        use DriverState::*;
        let d = WakeEngine::Durable;
        let s = WakeEngine::StepFunctions;
        assert_eq!(driver_state(d, Some("RUNNING")), Ok(Running));
        assert_eq!(driver_state(d, Some("STOPPED")), Ok(Ended));
        assert_eq!(driver_state(s, Some("ABORTED")), Ok(Ended));
        assert_eq!(driver_state(s, Some("TIMED_OUT")), Ok(Ended));
        assert_eq!(driver_state(s, Some("PENDING_REDRIVE")), Ok(Running));
        assert_eq!(driver_state(s, Some("SUCCEEDED")), Ok(Succeeded));
        assert_eq!(driver_state(s, None), Ok(NotFound));
        assert!(driver_state(s, Some("STOPPED")).is_err());
        assert!(driver_state(d, Some("ABORTED")).is_err());
    }

    #[test]
    fn the_execution_arn_picks_the_engine_to_wake() {
        for arn in [
            "arn:aws:states:us-east-1:123456789012:execution:m:e",
            "arn:aws-cn:states:cn-north-1:123456789012:execution:m:e",
            "",
        ] {
            assert_eq!(WakeEngine::of(arn), WakeEngine::StepFunctions, "{arn}");
        }
        for arn in [
            "arn:aws:lambda:us-east-1:123456789012:function:f:3/durable-execution/e/0e3c",
            "3f1b7c2e-0000-4000-8000-000000000000/9a6e",
        ] {
            assert_eq!(WakeEngine::of(arn), WakeEngine::Durable, "{arn}");
        }
    }
}
