//! The tpf-sfn compiler: TPF pipeline contracts in, validated Step Functions wakeup drivers out.
//!
//! Stages, each with its own module:
//! `contract`/`release`/`config` (inputs) → `plan` (backend-neutral driver plan) →
//! `render` (handlebars templates → ASL text) → `asl` (typed model, canonical JSON) →
//! `validate` (coded diagnostics, history budget proof) → `iam`, `graph`, `manifest` (outputs).
//! The compiler does no I/O beyond what its caller hands it: files are read and written by the
//! adapter's CLI.

pub mod asl;
pub mod compile;
pub mod config;
pub mod contract;
pub mod diagnostic;
pub mod graph;
pub mod iam;
pub mod manifest;
pub mod plan;
mod json_fields;
pub mod release;
pub mod render;
pub mod validate;

pub use diagnostic::{Diagnostic, Diagnostics, Location, Severity};
