//! The seam between the engine and a test harness: every Task resource that is not a Step
//! Functions built-in goes to a [`TaskHandler`].

use serde_json::Value;

/// One task attempt, as the handler sees it.
#[derive(Debug, Clone)]
pub struct TaskCall<'a> {
    pub now_ms: i64,
    pub execution_arn: &'a str,
    pub execution_name: &'a str,
    pub state_machine_arn: &'a str,
    pub state_name: &'a str,
    pub resource: &'a str,
    /// The effective input: InputPath then Parameters applied.
    pub input: &'a Value,
    /// `$$.Task.Token`, only for `.waitForTaskToken` resources.
    pub task_token: Option<&'a str>,
    /// The engine's handle on this attempt. For a callback task it equals `task_token`; for a
    /// request-response task answered with [`TaskOutcome::Pending`] the harness completes it
    /// later with `send_task_success`/`send_task_failure` on this token (an interpreter
    /// extension: AWS has no such thing, but it models a slow synchronous call).
    pub token: &'a str,
    /// Retries so far in this state visit (`$$.State.RetryCount`).
    pub retry_count: u32,
    pub timeout_seconds: Option<u64>,
    pub heartbeat_seconds: Option<u64>,
}

/// What a task attempt did.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// For request-response: the task result. For a callback task: the result of submitting
    /// (e.g. the SQS send), after which the task waits for its token.
    Succeeded(Value),
    Failed {
        error: String,
        cause: String,
    },
    /// Nothing yet: the task waits for a token callback (or its timeout).
    Pending,
}

impl TaskOutcome {
    pub fn failed(error: impl Into<String>, cause: impl Into<String>) -> Self {
        TaskOutcome::Failed {
            error: error.into(),
            cause: cause.into(),
        }
    }
}

/// A token callback or heartbeat, applied when the virtual clock reaches it.
#[derive(Debug, Clone, PartialEq)]
pub enum Callback {
    Success {
        token: String,
        output: Value,
    },
    Failure {
        token: String,
        error: String,
        cause: String,
    },
    Heartbeat {
        token: String,
    },
}

/// A callback the handler wants delivered later (e.g. a queue relay answering after a delay).
#[derive(Debug, Clone, PartialEq)]
pub struct Deferred {
    pub at_ms: i64,
    pub callback: Callback,
}

pub trait TaskHandler {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome;

    /// Drained by the engine after every `invoke`; each entry becomes a timer.
    fn deferred(&mut self) -> Vec<Deferred> {
        Vec::new()
    }
}

impl<F> TaskHandler for F
where
    F: FnMut(&TaskCall<'_>) -> TaskOutcome,
{
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        self(call)
    }
}

/// A handler for machines that have no external tasks: every call fails.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTasks;

impl TaskHandler for NoTasks {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        TaskOutcome::failed(
            "States.TaskFailed",
            format!("no handler for resource {}", call.resource),
        )
    }
}
