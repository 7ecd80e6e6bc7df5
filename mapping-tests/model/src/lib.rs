//! An executable reference model of TPF's durable coordinator (`QUEUE_ASYNC` mode) and the
//! Action API v1 the compiled drivers call.
//!
//! The model keeps TPF's record shapes, statuses, store conditions and DynamoDB attribute names
//! so that the mapping tests exercise the semantics the real coordinator has, and so that a
//! DynamoDB-backed store can replace [`store::InMemoryStore`] behind the same traits. Time is
//! always passed in (`now_ms`): nothing here reads a clock.
//!
//! TPF's record formats, keys and Action API types are wire facts (`tpf-wire`); this crate
//! holds the behaviour. Modules: [`store`] (storage SPIs and the in-memory store), [`worker`] (runtime steps and a scripted
//! transition worker), [`coordinator`] (the flows), [`actions`] (Action API v1), [`transitions`]
//! (the commit log the harness checks).
//!
//! Where the model is simpler than TPF, on purpose:
//! - Item continuations: TPF runs each item's suffix in a child execution and releases the
//!   parent to the first aggregate step. The model releases the parent to `stepIndex + 1` with
//!   the ordered item responses as its input once every item completed and dispatch is complete
//!   (`markAwaitItemContinuationsCompleted`). The wakeup semantics the drivers see are the same.
//! - Execution and interaction ids are derived (UUIDv3) instead of random, so traces and
//!   snapshots are reproducible; await unit and correlation ids are TPF's own UUIDv3 formulas.
//! - No work queue, admission limits, circuit deferral, live awaits, payload chunking, resume
//!   tokens or admission slots: the drivers replace the queue, and the rest does not change what
//!   a driver observes through the Action API.
//! - TPF requires every await to have a positive timeout; the model also allows none, because
//!   the Action API defines `deadlineAt: null`.

pub mod actions;
pub mod coordinator;
pub mod store;
pub mod transitions;
pub mod worker;

pub use actions::{ActionHost, Fault};
pub use coordinator::{
    AwaitCompletion, AwaitCompletionResult, Coordinator, CoordinatorConfig, CoordinatorError,
    RedriveResult, SubmitRequest, SubmitResult, SweepResult, WorkItemOutcome, WorkItemStart,
};
pub use store::{AwaitStore, ExecutionStore, InMemoryStore, ReleaseRegistry, StoreError};
pub use transitions::{ActionCall, RecordTransition, TransitionLog};
pub use worker::{PipelineDef, ScriptedWorker, StepDef, StepOutcome};
