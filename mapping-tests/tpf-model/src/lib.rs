//! An executable reference model of TPF's durable coordinator (`QUEUE_ASYNC` mode) and its
//! action gateway, which the compiled drivers call.
//!
//! The model keeps TPF's record shapes, statuses, store conditions and DynamoDB attribute names
//! so that the mapping tests exercise the semantics the real coordinator has, and so that a
//! DynamoDB-backed store can replace [`store::InMemoryStore`] behind the same traits. Time is
//! always passed in (`now_ms`): nothing here reads a clock.
//!
//! TPF's record formats, keys and gateway documents are wire facts (`tpf-wire`); this crate
//! holds the behaviour. Modules: [`store`] (storage SPIs and the in-memory store), [`worker`] (runtime steps and a scripted
//! transition worker), [`coordinator`] (the flows), [`gateway`] (TPF's action gateway over a
//! control plane and the callback-binding table; [`coordinator::LocalControlPlane`] serves it
//! from the model; [`coordinator::remote`] is TPF's SQS transition worker, remote steps on their own
//! queue), [`transitions`] (the commit log the harness checks).
//!
//! Which TPF it models is [`CoordinatorConfig`]'s choice: the one the Action API specifies (the
//! default: item continuations as durable work items, `process-work-item` applying a passed
//! await deadline), or TPF as it is today (`ItemContinuations::InProcess`,
//! `process_applies_await_deadline = false`), against which the drivers must stay safe
//! (`docs/runtime.md`, "Changes TPF must make"). Keys, step ids, retry delays and release rows
//! are checked against values computed by TPF's own Java (`mapping-tests/tpf-sfn-mapping/tests/tpf_vectors.rs`).
//!
//! Where the model is simpler than TPF, on purpose:
//! - Execution and interaction ids are derived (UUIDv3; an execution's from its key and creation
//!   time) instead of random, so traces and snapshots are reproducible; await unit and
//!   correlation ids are TPF's own UUIDv3 formulas.
//! - TPF's in-process item-continuation attempts are spaced 100 ms and 200 ms apart on a
//!   scheduler; the model runs them at one instant.
//! - TPF's work queue and its work function's admission are modelled
//!   (`coordinator::LocalControlPlane`, `coordinator::admission`), but the model runs one item at
//!   a time, so the load a saturated worker or tenant quota sees is given by the caller. No
//!   circuit deferral, live awaits, payload chunking, resume tokens or await admission slots:
//!   they do not change what a driver observes through TPF's gateway.
//! - The scripted worker's payloads carry no business fields, so the matrix's awaits use no
//!   `idempotencyKeyFields` (the keys honour them; `tpf_vectors` checks it).

pub mod coordinator;
pub mod gateway;
pub mod store;
pub mod transitions;
pub mod worker;

pub use coordinator::{
    AwaitCompletion, AwaitCompletionResult, Coordinator, CoordinatorConfig, CoordinatorError,
    RedriveResult, SubmitRequest, SubmitResult, SweepResult, WorkItemOutcome, WorkItemStart,
};
pub use store::{AwaitStore, ExecutionStore, InMemoryStore, ReleaseRegistry, StoreError};
pub use transitions::{ActionCall, RecordTransition, TransitionLog};
pub use worker::{PipelineDef, ScriptedWorker, StepDef, StepOutcome};
