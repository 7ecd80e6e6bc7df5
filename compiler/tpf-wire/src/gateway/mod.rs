//! TPF's action gateway (`aws-durable-action`) as TPF's own classes read and write it: the one
//! request shape ([`request`]), the one response shape ([`response`]), the records they nest
//! ([`records`]), the record rules ([`validation`]), how each side's Jackson mapper binds the
//! JSON ([`json`]), the durable execution names and binding-table keys ([`names`]), the
//! binding table's rows ([`binding`]), how TPF's host starts a coordinator execution
//! ([`start`]), what its driver returns and fails with ([`host`]), and every key for code that
//! lays the documents out key by key ([`key`]).
//!
//! Every type here serialises with its fields in TPF's component order, so `to_json` writes
//! the bytes TPF's classes write. Failures are [`JavaError`](crate::java_error::JavaError)s:
//! the class and message a caller of TPF's gateway would see.

pub mod binding;
pub mod host;
pub mod items;
pub mod json;
pub mod key;
pub mod names;
pub mod operation;
pub mod records;
pub mod request;
pub mod response;
pub mod start;
pub mod validation;

pub use json::Mapper;
pub use operation::Operation;
pub use records::{
    AwaitCheckpoint, AwaitIdentity, CallbackSignal, DriverCheckpoint, ExecutionCheckpoint,
};
pub use request::{ActionRequest, ProviderCallback};
pub use response::{ActionResponse, FunctionError};
