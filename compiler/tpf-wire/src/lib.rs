//! TPF's wire facts, each defined once: what crosses a boundary between TPF, the compiled
//! drivers, the wake path and the tools that read TPF's tables.
//!
//! - [`identity`]: the pinned identity every action call carries;
//! - [`gateway`]: TPF's action gateway — its ten operations' request and response exactly as
//!   TPF's classes write them, the record rules, durable execution names and the callback-binding
//!   table's rows;
//! - [`admission`]: TPF's admission key and intent fingerprint;
//! - [`java_error`]: a failure as TPF's Java reports it (exception class and message);
//! - [`records`]: TPF's durable records with their DynamoDB attribute names;
//! - [`cardinality`]: TPF's cardinality normalisation, itemized awaits and result shape;
//! - [`step`]: a contract step's fields as TPF's runtime reads them;
//! - [`ids`]: TPF's deterministic ids, store keys and runtime step ids;
//! - [`java_text`]: how TPF's Java renders values into key text (UTF-16 lengths, Jackson JSON,
//!   `Double.toString`).
//!
//! Nothing here does I/O or makes a decision: the crates above read these facts, and the
//! templates get every name through the compiler's render context.

pub mod admission;
pub mod cardinality;
pub mod gateway;
pub mod identity;
pub mod ids;
pub mod java_error;
pub mod java_text;
pub mod records;
pub mod step;

pub use identity::Identity;
