//! An executable reference model of TPF's durable coordinator (`QUEUE_ASYNC` mode) and the
//! Action API v1 the compiled drivers call.
//!
//! The model keeps TPF's record shapes, statuses, store conditions and DynamoDB attribute names
//! so that the mapping tests exercise the semantics the real coordinator has, and so that a
//! DynamoDB-backed store can replace [`store::InMemoryStore`] behind the same traits. Time is
//! always passed in (`now_ms`): nothing here reads a clock.
//!
//! Modules: [`records`] (records and item mapping), [`ids`] (deterministic ids and keys),
//! [`store`] (storage SPIs and the in-memory store), [`worker`] (runtime steps and a scripted
//! transition worker), [`coordinator`] (the flows), [`actions`] (Action API v1), [`transitions`]
//! (the commit log the harness checks).

pub mod actions;
pub mod coordinator;
pub mod ids;
pub mod records;
pub mod store;
pub mod transitions;
pub mod worker;

pub use actions::{
    ActionError, ActionHost, ActionResponse, AwaitView, DueExecution, ProcessWorkItemRequest,
    ProcessWorkItemResponse, SweepOnceRequest, SweepOnceResponse,
};
pub use coordinator::{
    AwaitCompletion, AwaitCompletionResult, Coordinator, CoordinatorConfig, CoordinatorError,
    RedriveResult, SubmitRequest, SubmitResult, SweepResult, WorkItemOutcome, WorkItemStart,
};
pub use records::{
    AttrValue, AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    DeadLetterEnvelope, DynamoItem, ExecutionRecord, ExecutionStatus, Item, PipelineReleaseRecord,
    ReleaseActivationEvent, ReleaseStatus, ResultShape,
};
pub use store::{AwaitStore, ExecutionStore, InMemoryStore, ReleaseRegistry, StoreError};
pub use transitions::{ActionCall, RecordTransition, TransitionLog};
pub use worker::{PipelineDef, ScriptedWorker, StepDef, StepOutcome};
