//! TPF's `pipeline-contract.json`, schema versions 1–3 (TPF `PipelineContractDescriptor`), in
//! both shapes TPF has written: August 2026's (an await is `kind: "await"` with
//! `awaitTransport`) and today's split-repository generator's (an await is any step carrying a
//! `deferredCompletion` object; schema 3 adds `importedDefinitions` and `capabilityImports`).

use indexmap::IndexMap;
use serde_json::Value;

/// A loaded, checked contract. Raw strings TPF writes verbatim are kept verbatim next to their
/// normalised form, because the hash and the console both need the original text.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    pub schema_version: u8,
    pub pipeline_id: String,
    pub contract_version: String,
    pub contract_hash: String,
    pub platform: Option<String>,
    pub transport: Option<String>,
    pub module: Option<String>,
    pub plugin_host: bool,
    pub runtime_layout: Option<String>,
    pub steps: Vec<Step>,
    /// Schema ≥ 2 type catalogue, kept as JSON: the driver never decodes payloads.
    pub canonical_types: IndexMap<String, Value>,
    pub canonical_catalog_fingerprint: String,
    pub composition: Option<Composition>,
    /// Schema-3 imported Block definitions (today's TPF), kept as JSON: the driver never runs
    /// them, and the hash covers them as written.
    pub imported_definitions: Vec<Value>,
    /// Schema-3 connector capability imports (today's TPF), kept as JSON for the same reason.
    pub capability_imports: Vec<Value>,
    pub capabilities: Capabilities,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub index: u32,
    pub authored_name: String,
    /// `kind` verbatim: `internal` or `await` (August 2026), `command`, `query` or `internal`
    /// (today's TPF, which infers it and has no `await` kind).
    pub kind: String,
    /// `cardinality` verbatim, as TPF wrote it (`EXPANSION` stays `EXPANSION` here).
    pub cardinality_raw: String,
    pub cardinality: Cardinality,
    pub input_type_id: String,
    pub output_type_id: String,
    pub runtime_class: String,
    pub client_class: String,
    /// The completion transport: August's `awaitTransport`, or today's
    /// `deferredCompletion.transportType` when that is not blank.
    pub await_transport: Option<AwaitTransport>,
    /// `paging` (today's TPF): `{maxRecords}` for a step whose YAML pages its output.
    pub paging: Option<Paging>,
    /// `deferredCompletion` (today's TPF): present, and non-empty, on an await step.
    pub deferred_completion: Option<DeferredCompletion>,
}

impl Step {
    /// Whether the step is an await boundary. Today's TPF makes a step an await iff it carries
    /// `deferredCompletion`; August's decided by `kind == "await"` (case and surrounding
    /// whitespace tolerated like everywhere else TPF compares kinds).
    pub fn is_await(&self) -> bool {
        self.deferred_completion.is_some() || self.kind.trim().eq_ignore_ascii_case("await")
    }

    /// Callback (human/API, or a connector callback) or broker completion ingress.
    pub fn ingress(&self) -> &'static str {
        match (&self.await_transport, &self.deferred_completion) {
            (Some(t), _) => t.ingress(),
            (None, Some(d)) if d.callback => "callback",
            _ => "unspecified",
        }
    }

    /// What TPF's runtime builds this step from (the reference model takes these).
    pub fn facts(&self) -> tpf_wire::step::StepFacts<'_> {
        tpf_wire::step::StepFacts {
            authored_name: &self.authored_name,
            is_await: self.is_await(),
            cardinality: self.cardinality,
            cardinality_raw: &self.cardinality_raw,
            await_transport: self.await_transport.as_ref().map(AwaitTransport::as_str),
            output_type_id: &self.output_type_id,
            await_timeout_ms: self.deferred_completion.as_ref().map(|d| d.timeout_ms),
            correlation_strategy: self
                .deferred_completion
                .as_ref()
                .map(|d| d.correlation_strategy.as_str()),
            idempotency_key_fields: self
                .deferred_completion
                .as_ref()
                .map(|d| d.idempotency_key_fields.as_slice()),
        }
    }
}

/// A step's `paging` object (TPF `PipelineStepPaging`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paging {
    /// At least 1.
    pub max_records: u64,
}

/// A step's `deferredCompletion` object: how TPF parks at the step and what completes it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeferredCompletion {
    /// `timeout` verbatim (Java `Duration.toString()`, e.g. `PT30M`).
    pub timeout: String,
    /// `timeout` in milliseconds (Java `Duration.toMillis()`), positive.
    pub timeout_ms: i64,
    /// `correlationStrategy` (e.g. `interactionId`).
    pub correlation_strategy: String,
    /// `idempotencyKeyFields`, in authored order.
    pub idempotency_key_fields: Vec<String>,
    /// `transportType` verbatim; blank for a connector callback.
    pub transport_type: String,
    /// `operationOutputTypeId`: what the step's own operation returns before the await.
    pub operation_output_type_id: String,
    /// `finalOutputTypeId`: the value after the await (= the step's `outputTypeId`).
    pub final_output_type_id: String,
    /// A `callback` object is present (connector callback completion).
    pub callback: bool,
    /// `mode`, when written (only with `callback`, e.g. `CONNECTOR_CALLBACK`).
    pub mode: Option<String>,
    /// `fingerprint` as written.
    pub fingerprint: String,
}

pub use tpf_wire::cardinality::Cardinality;

/// `awaitTransport`: how completions reach TPF. Unknown values are kept, not guessed at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AwaitTransport {
    InteractionApi,
    Webhook,
    Kafka,
    Sqs,
    Other(String),
}

impl AwaitTransport {
    pub fn as_str(&self) -> &str {
        match self {
            AwaitTransport::InteractionApi => "interaction-api",
            AwaitTransport::Webhook => "webhook",
            AwaitTransport::Kafka => "kafka",
            AwaitTransport::Sqs => "sqs",
            AwaitTransport::Other(s) => s,
        }
    }

    /// Human or API callback vs. broker completion (TPF's await transports: human/API callback ingress vs broker ingress).
    pub fn ingress(&self) -> &'static str {
        match self {
            AwaitTransport::InteractionApi | AwaitTransport::Webhook => "callback",
            AwaitTransport::Kafka | AwaitTransport::Sqs => "broker",
            AwaitTransport::Other(_) => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    pub local_transition_execution: bool,
    pub transition_worker_protocols: Vec<String>,
}

/// Schema-3 local composition (`PipelineCompositionDescriptor`).
#[derive(Debug, Clone, PartialEq)]
pub struct Composition {
    pub root_definition_id: String,
    pub definitions: Vec<CompositionDefinition>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompositionDefinition {
    pub definition_id: String,
    pub definition_fingerprint: String,
    pub input_contract_id: String,
    pub output_contract_id: String,
    pub nodes: Vec<CompositionNode>,
    pub continuations: Vec<CompositionContinuation>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompositionNode {
    pub index: u32,
    pub node_id: String,
    /// `direct` or `pipeline`.
    pub kind: String,
    pub input_contract_id: String,
    pub output_contract_id: String,
    pub cardinality: String,
    pub target_definition_id: String,
    pub accepted_contract_ids: Vec<String>,
    pub terminal: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompositionContinuation {
    pub node_id: String,
    /// `NEXT_LOCAL`, `RETURN` or `ROOT_TERMINAL`.
    pub kind: String,
    pub next_node_id: String,
}

/// Whether `contractHash` was recomputed and matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashCheck {
    Verified,
    /// The hash did not match and the caller allowed it; the manifest records this.
    Unverified {
        expected: String,
        computed: String,
    },
}

/// What `load_contract` returns on success: the contract, its hash verdict and any warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedContract {
    pub contract: Contract,
    pub hash: HashCheck,
    pub warnings: Vec<crate::Diagnostic>,
}

/// Options for loading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContractOptions {
    /// Downgrade a `contractHash` mismatch from an error to a warning.
    pub allow_unverified_hash: bool,
}
