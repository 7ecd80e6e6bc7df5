//! Scenarios: the data model, the matrix derived from a contract, each scenario's budgets, the
//! await classes, and what every backend's runner shares.

pub mod budget;
pub mod classes;
pub mod matrix;
pub mod model;
pub mod run;

pub use model::Scenario;
pub use run::{Metrics, RunError};
