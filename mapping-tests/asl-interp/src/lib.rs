//! A deterministic, virtual-time interpreter for Amazon States Language (Standard workflows,
//! JSONPath dialect), used by the mapping tests to run compiled drivers many times per second.
//!
//! [`Engine`] is Step Functions: it registers machines, starts executions, keeps their
//! histories, and answers its own integrations (nested StartExecution, DescribeExecution,
//! SendTask*). Every other Task resource goes to the harness's [`TaskHandler`]. Time moves only
//! when the harness advances it; randomness (retry jitter, `States.UUID`,
//! `States.MathRandom`) comes from the engine seed.
//!
//! ```
//! use serde_json::json;
//! use asl_interp::{Engine, ExecutionStatus, TaskCall, TaskOutcome};
//!
//! let def = asl_model::from_value(json!({
//!     "StartAt": "Nap",
//!     "States": {
//!         "Nap": {"Type": "Wait", "Seconds": 60, "Next": "Ask"},
//!         "Ask": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
//!                 "Parameters": {"token.$": "$$.Task.Token"}, "TimeoutSeconds": 300, "End": true}
//!     }
//! })).unwrap();
//! let mut engine = Engine::new(1_767_225_600_000, 42);
//! let sm = engine.create_state_machine("driver", def).unwrap();
//! let run = engine.start_execution(&sm, "run-1", json!({})).unwrap().execution_arn;
//!
//! // The handler plays every non-Step-Functions resource; here it parks on the token.
//! let mut tokens = Vec::new();
//! let mut handler = |call: &TaskCall<'_>| {
//!     tokens.push(call.task_token.unwrap().to_string());
//!     TaskOutcome::Succeeded(json!({"MessageId": "m-1"}))
//! };
//! engine.advance_to(1_767_225_660_000, &mut handler); // 60 s later: submitted, parked
//! assert_eq!(engine.next_timer(), Some(1_767_225_960_000)); // the task's TimeoutSeconds
//! assert_eq!(engine.current_state(&run), Some("Ask"));
//!
//! let token = engine.open_tokens(&run)[0].to_string();
//! engine.send_task_success(&token, json!({"answer": 1})).unwrap();
//! engine.run_until_idle(&mut handler);
//! assert_eq!(engine.status(&run), Some(ExecutionStatus::Succeeded));
//! assert_eq!(engine.output(&run), Some(&json!({"answer": 1})));
//! ```

mod builtins;
pub mod choice;
pub mod clock;
pub mod context;
pub mod engine;
pub mod error;
pub mod handler;
pub mod hashing;
pub mod history;
pub mod intrinsics;
pub mod paths;
mod program;
pub mod retry;
pub mod rng;
mod run;

pub use engine::{
    execution_arn, state_machine_arn, Engine, ExecutionDescription, ExecutionMetrics,
    ExecutionStatus, StartResult, ThreadPosition, Waiting,
};
pub use error::{SfnError, StateError};
pub use handler::{Callback, Deferred, NoTasks, TaskCall, TaskHandler, TaskOutcome};
pub use history::{HistoryEvent, Payload, MAX_HISTORY_EVENTS};
pub use program::{pin, shared, Pinned};
