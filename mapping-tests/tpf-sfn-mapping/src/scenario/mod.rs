//! Scenarios: the data model, the matrix derived from a contract, and the runner.

pub mod budget;
pub mod classes;
pub mod matrix;
pub mod model;
pub mod run;

pub use model::Scenario;
pub use run::{run, Metrics, Run, Subject};
