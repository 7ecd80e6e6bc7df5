//! TPF pipeline contracts: model, loading, hash verification and TPF's own constraints.

pub mod model;

pub use model::*;
