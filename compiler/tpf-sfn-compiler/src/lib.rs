//! The tpf-sfn compiler: TPF pipeline contracts in, validated wakeup drivers out, for the backend
//! chosen (`backend::Backend`).
//!
//! Stages, each with its own module:
//! `contract`/`release`/`config` (inputs) → `plan` (backend-neutral driver plan) → a backend's
//! lowering, each a sibling that uses the neutral parts in `lowering` and no other backend:
//! `sfn` (Step Functions: handlebars templates → typed ASL → loop sizing and validation →
//! policies, graph, manifest, exports) and `durable` (Lambda durable functions: the driver
//! function's spec, its operation budget, manifest and release stack). `compile::compile` runs
//! them in order.
//! The compiler does no I/O beyond what its caller hands it: files are read and written by the
//! adapter's CLI.

// Diagnostics are the compiler's error values and are deliberately rich (code, location, message,
// hint); they travel on cold paths only, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod backend;
pub mod bundled;
pub mod compile;
pub mod config;
pub mod contract;
pub mod diagnostic;
pub mod durable;
mod json_fields;
pub mod lowering;
pub mod plan;
pub mod release;
pub mod sfn;

pub use backend::Backend;
pub use diagnostic::{Diagnostic, Diagnostics, Location, Severity};
