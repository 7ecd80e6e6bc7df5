//! Cardinality normalisation, exactly as TPF's `CardinalitySemantics.fromString`: one copy, in
//! `tpf-wire`, shared with the reference model.

pub use tpf_wire::cardinality::{Cardinality, ACCEPTED_CARDINALITIES};
