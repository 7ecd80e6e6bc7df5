//! The tpf-sfn compiler: TPF pipeline contracts in, validated Step Functions wakeup drivers out.
//!
//! Stages, each with its own module:
//! `contract`/`release`/`config` (inputs) → `plan` (backend-neutral driver plan) →
//! `render` (handlebars templates → ASL text) → `asl` (typed model, canonical JSON) →
//! `validate` (coded diagnostics, history budget proof) → `iam`, `graph`, `manifest` (outputs).
//! The compiler does no I/O beyond what its caller hands it: files are read and written by the
//! adapter's CLI.

// Diagnostics are the compiler's error values and are deliberately rich (code, location, message,
// hint); they travel on cold paths only, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod asl;
pub mod compile;
pub mod config;
pub mod contract;
pub mod diagnostic;
pub mod export;
pub mod graph;
pub mod iam;
mod json_fields;
pub mod manifest;
pub mod plan;
pub mod release;
pub mod render;
pub mod validate;

pub use diagnostic::{Diagnostic, Diagnostics, Location, Severity};
