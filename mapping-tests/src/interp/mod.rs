//! A deterministic, virtual-time interpreter for Amazon States Language (Standard workflows,
//! JSONPath dialect), used by the mapping tests to run compiled drivers many times per second.
//!
//! [`Engine`] is Step Functions: it registers machines, starts executions, keeps their
//! histories, and answers its own integrations (nested StartExecution, DescribeExecution,
//! SendTask*). Every other Task resource goes to the harness's [`TaskHandler`]. Time moves only
//! when the harness advances it; randomness (retry jitter, `States.UUID`,
//! `States.MathRandom`) comes from the engine seed.

mod builtins;
pub mod choice;
pub mod clock;
pub mod context;
pub mod engine;
pub mod error;
pub mod handler;
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
pub use history::{HistoryEvent, MAX_HISTORY_EVENTS};
