//! A contract step as TPF's runtime reads it (`PipelineBundleStepDescriptor`): the fields of a
//! `steps[]` entry of `pipeline-contract.json`, and what the compiler's contract model and the
//! reference model both take from one.

use crate::cardinality::Cardinality;

/// The keys of a `steps[]` entry, in the order TPF's generator writes them: August 2026's
/// (`awaitTransport`) and today's (`paging`, `deferredCompletion`) together, since a contract
/// of either shape is read.
pub const STEP_KEYS: &[&str] = &[
    "index",
    "authoredName",
    "kind",
    "cardinality",
    "inputTypeId",
    "outputTypeId",
    "runtimeClass",
    "clientClass",
    "paging",
    "deferredCompletion",
    "awaitTransport",
];

/// The components of August 2026's `PipelineBundleStepDescriptor`, in declaration order: what
/// that TPF's release registry writes for a step (Jackson, nulls included), whichever shape the
/// contract file had.
pub const AUGUST_DESCRIPTOR_STEP_COMPONENTS: &[&str] = &[
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
    /// An await boundary: a `deferredCompletion` (today's TPF) or `kind == "await"` (August
    /// 2026's; TPF tolerates case and surrounding whitespace).
    pub is_await: bool,
    pub cardinality: Cardinality,
    /// `cardinality` as the contract spells it (an await unit records it verbatim).
    pub cardinality_raw: &'a str,
    /// `awaitTransport`, when the contract names one.
    pub await_transport: Option<&'a str>,
    pub output_type_id: &'a str,
    /// `deferredCompletion.timeout` in milliseconds, when the contract carries it (today's TPF;
    /// August's contracts left it to the pipeline YAML).
    pub await_timeout_ms: Option<i64>,
    /// `deferredCompletion.correlationStrategy`, when the contract carries it.
    pub correlation_strategy: Option<&'a str>,
    /// `deferredCompletion.idempotencyKeyFields`, when the contract carries them.
    pub idempotency_key_fields: Option<&'a [String]>,
}
