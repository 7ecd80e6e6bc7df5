//! TPF's `pipeline-contract.json`, schema versions 1–3 (TPF `PipelineContractDescriptor`).

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
    pub capabilities: Capabilities,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub index: u32,
    pub authored_name: String,
    /// `kind` verbatim (`internal`, `await`, `command`, `query`, ...).
    pub kind: String,
    /// `cardinality` verbatim, as TPF wrote it (`EXPANSION` stays `EXPANSION` here).
    pub cardinality_raw: String,
    pub cardinality: Cardinality,
    pub input_type_id: String,
    pub output_type_id: String,
    pub runtime_class: String,
    pub client_class: String,
    pub await_transport: Option<AwaitTransport>,
}

impl Step {
    /// TPF decides await boundaries by `kind == "await"`; case and surrounding whitespace are
    /// tolerated like everywhere else TPF compares kinds.
    pub fn is_await(&self) -> bool {
        self.kind.trim().eq_ignore_ascii_case("await")
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
        }
    }
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
