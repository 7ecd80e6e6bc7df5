//! A contract step as TPF's runtime reads it (`PipelineBundleStepDescriptor`): the fields of a
//! `steps[]` entry of `pipeline-contract.json`, and what the compiler's contract model and the
//! reference model both take from one.

use crate::cardinality::Cardinality;

/// The keys of a `steps[]` entry, in the order TPF's generator writes them.
pub const STEP_KEYS: &[&str] = &[
    "index",
    "authoredName",
    "kind",
    "cardinality",
    "inputTypeId",
    "outputTypeId",
    "runtimeClass",
    "clientClass",
    "awaitTransport",
];

/// One contract step, borrowed: what TPF's runtime builds a step from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepFacts<'a> {
    pub authored_name: &'a str,
    /// `kind == "await"` (TPF tolerates case and surrounding whitespace).
    pub is_await: bool,
    pub cardinality: Cardinality,
    /// `cardinality` as the contract spells it (an await unit records it verbatim).
    pub cardinality_raw: &'a str,
    /// `awaitTransport`, when the contract names one.
    pub await_transport: Option<&'a str>,
    pub output_type_id: &'a str,
}
