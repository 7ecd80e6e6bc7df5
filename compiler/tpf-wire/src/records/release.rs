//! `PipelineReleaseRecord` and `ReleaseActivationEvent` and their rows in
//! `tpf_release_registry`, and the descriptor forms TPF's registry keeps.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::item::{DynamoItem, Item, ItemError, Reader, Writer};
use super::*;
use crate::ids;
use crate::java_text::jackson_compact;

/// `PipelineReleaseRecord`, field for field: TPF's record constructor turns a null artifact string
/// into `""`, a release that was never activated has `activatedAtEpochMs` 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineReleaseRecord {
    pub tenant_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub status: ReleaseStatus,
    /// The `pipeline-release.json`; rows carry it as TPF's `PipelineReleaseDescriptor`
    /// ([`release_descriptor_form`]).
    pub descriptor: Value,
    pub primary_artifact_id: String,
    pub primary_artifact_digest: String,
    pub primary_artifact_uri: String,
    pub primary_artifact_size_bytes: i64,
    pub primary_artifact_checksum: String,
    /// TPF's `PipelineContractDescriptor` of the release's contract ([`contract_descriptor_form`]),
    /// when the registration read one from the artifact.
    pub contract: Option<Value>,
    pub created_at_epoch_ms: i64,
    pub updated_at_epoch_ms: i64,
    /// 0 unless this is the active release.
    pub activated_at_epoch_ms: i64,
}

impl PipelineReleaseRecord {
    /// The metadata that must match on an idempotent re-register (`PipelineReleaseRegistry`).
    pub fn same_immutable_metadata(&self, other: &Self) -> bool {
        self.contract_version == other.contract_version
            && release_descriptor_form(&self.descriptor)
                == release_descriptor_form(&other.descriptor)
            && self.primary_artifact_id == other.primary_artifact_id
            && self.primary_artifact_digest == other.primary_artifact_digest
            && self.primary_artifact_uri == other.primary_artifact_uri
            && self.contract == other.contract
    }

    /// The record as the registry returns it when `event` is the latest activation of its
    /// pipeline (`toReleaseRecord`): ACTIVE with the event's time if the event names this
    /// release, REGISTERED with 0 otherwise.
    pub fn with_latest_activation(mut self, event: Option<&ReleaseActivationEvent>) -> Self {
        match event.filter(|e| e.release_version == self.release_version) {
            Some(e) => {
                self.status = ReleaseStatus::Active;
                self.activated_at_epoch_ms = e.activated_at_epoch_ms;
            }
            None => {
                self.status = ReleaseStatus::Registered;
                self.activated_at_epoch_ms = 0;
            }
        }
        self
    }
}

fn string_field<'a>(obj: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// A `pipeline-release.json` as TPF's `PipelineReleaseDescriptor` record reads and writes it:
/// its components in record order (`schemaVersion`, `pipelineId`, `contractVersion`,
/// `releaseVersion`, today's `compiledTruthArtifactId`, `artifacts`), each artifact's `stepIds`
/// and `capabilities` defaulting to `[]`, nothing else. A descriptor that carries
/// `compiledTruthArtifactId` is today's and keeps it (a release row written for it must not
/// lose the key); one without is August 2026's record, which has no such component. `None`
/// when TPF's constructor would refuse it (schema version other than 1, a missing id, a
/// `compiledTruthArtifactId` that is not text, an artifact without
/// `artifactId`/`kind`/`uri`/`digest`).
pub fn release_descriptor_form(descriptor: &Value) -> Option<Value> {
    let d = descriptor.as_object()?;
    if d.get("schemaVersion").and_then(Value::as_i64) != Some(1) {
        return None;
    }
    let mut out = serde_json::Map::new();
    out.insert("schemaVersion".into(), Value::from(1));
    for key in ["pipelineId", "contractVersion", "releaseVersion"] {
        out.insert(key.into(), Value::from(string_field(d, key)?));
    }
    const COMPILED_TRUTH: &str = "compiledTruthArtifactId";
    if d.contains_key(COMPILED_TRUTH) {
        // Today's record requires it non-null; August's has no such component at all.
        out.insert(
            COMPILED_TRUTH.into(),
            Value::from(string_field(d, COMPILED_TRUTH)?),
        );
    }
    let artifacts = match d.get("artifacts") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| {
                let a = a.as_object()?;
                let mut art = serde_json::Map::new();
                for key in ["artifactId", "kind", "uri", "digest"] {
                    art.insert(key.into(), Value::from(string_field(a, key)?));
                }
                for key in ["stepIds", "capabilities"] {
                    let list = match a.get(key) {
                        None | Some(Value::Null) => Value::Array(Vec::new()),
                        Some(v @ Value::Array(_)) => v.clone(),
                        Some(_) => return None,
                    };
                    art.insert(key.into(), list);
                }
                Some(Value::Object(art))
            })
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    out.insert("artifacts".into(), Value::Array(artifacts));
    Some(Value::Object(out))
}

/// A `pipeline-contract.json` document as August 2026 TPF's `PipelineContractDescriptor` record
/// renders it through Jackson (`contract_json`; today's record has more components, which this
/// form does not write yet): record component order, absent values written as `null`,
/// `capabilities` before `canonicalTypes`, the empty composition
/// `{"rootDefinitionId":"","definitions":[]}` when there is none. `None` when the descriptor's
/// constructor would refuse the document (schema version outside 1..=3, a missing id or hash).
pub fn contract_descriptor_form(document: &Value) -> Option<Value> {
    let d = document.as_object()?;
    let schema = d.get("schemaVersion").and_then(Value::as_i64)?;
    if !(1..=3).contains(&schema) {
        return None;
    }
    let text_or_null = |key: &str| {
        d.get(key)
            .filter(|v| v.is_string())
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut out = serde_json::Map::new();
    out.insert("schemaVersion".into(), Value::from(schema));
    for key in ["pipelineId", "contractVersion", "contractHash"] {
        out.insert(key.into(), Value::from(string_field(d, key)?));
    }
    for key in ["platform", "transport", "module"] {
        out.insert(key.into(), text_or_null(key));
    }
    out.insert(
        "pluginHost".into(),
        Value::Bool(
            d.get("pluginHost")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    out.insert("runtimeLayout".into(), text_or_null("runtimeLayout"));
    let steps: Vec<Value> = d
        .get("steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(Value::as_object)
                .map(|s| {
                    let mut step = serde_json::Map::new();
                    step.insert(
                        "index".into(),
                        s.get("index").cloned().unwrap_or(Value::from(0)),
                    );
                    for &key in &crate::step::AUGUST_DESCRIPTOR_STEP_COMPONENTS[1..] {
                        step.insert(
                            key.into(),
                            s.get(key)
                                .filter(|v| v.is_string())
                                .cloned()
                                .unwrap_or(Value::Null),
                        );
                    }
                    Value::Object(step)
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("steps".into(), Value::Array(steps));
    let capabilities = d.get("capabilities").and_then(Value::as_object);
    let mut caps = serde_json::Map::new();
    caps.insert(
        "localTransitionExecution".into(),
        Value::Bool(
            capabilities
                .and_then(|c| c.get("localTransitionExecution"))
                .and_then(Value::as_bool)
                .unwrap_or(true),
        ),
    );
    caps.insert(
        "transitionWorkerProtocols".into(),
        capabilities
            .and_then(|c| c.get("transitionWorkerProtocols"))
            .filter(|v| v.is_array())
            .cloned()
            .unwrap_or_else(|| serde_json::json!(["local", "rest", "grpc", "sqs"])),
    );
    out.insert("capabilities".into(), Value::Object(caps));
    out.insert(
        "canonicalTypes".into(),
        d.get("canonicalTypes")
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
    );
    out.insert(
        "canonicalCatalogFingerprint".into(),
        Value::from(string_field(d, "canonicalCatalogFingerprint").unwrap_or("")),
    );
    out.insert(
        "composition".into(),
        d.get("composition")
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"rootDefinitionId": "", "definitions": []})),
    );
    Some(Value::Object(out))
}

/// One append-only activation event; the latest one names the active release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseActivationEvent {
    pub tenant_id: String,
    pub pipeline_id: String,
    pub release_version: String,
    pub activated_at_epoch_ms: i64,
}

impl ReleaseActivationEvent {
    /// `ActivationEvent`'s checks: a non-blank release version, a positive activation time.
    pub fn check(&self) -> Result<(), ActivationRefused> {
        if self.release_version.trim().is_empty() {
            return Err(ActivationRefused::BlankReleaseVersion);
        }
        if self.activated_at_epoch_ms <= 0 {
            return Err(ActivationRefused::ActivationTimeNotPositive);
        }
        Ok(())
    }
}

/// Why TPF's `ActivationEvent` refuses an event; the text is TPF's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivationRefused {
    BlankReleaseVersion,
    ActivationTimeNotPositive,
}

impl fmt::Display for ActivationRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActivationRefused::BlankReleaseVersion => "releaseVersion must not be blank",
            ActivationRefused::ActivationTimeNotPositive => "activatedAtEpochMs must be positive",
        })
    }
}

impl std::error::Error for ActivationRefused {}

/// Release rows live in `tpf_release_registry` under `registry_key = tenant#pipelineId`,
/// `registry_sort = release:<releaseVersion>`, `record_type = RELEASE`, exactly as
/// `DynamoPipelineReleaseRegistry.toReleaseItem` writes them: all 17 attributes, artifact
/// strings `""` when empty, `contract_json` the text `null` without a contract. The status is not
/// stored (`activated_at_epoch_ms` is written but never read): it is folded from activation
/// events on read ([`PipelineReleaseRecord::with_latest_activation`]). The reader requires what
/// `toReleaseRecord` requires, so a row it accepts is one TPF can read: one unreadable row
/// breaks TPF's `active()` and `list()` for its whole pipeline.
impl DynamoItem for PipelineReleaseRecord {
    const TABLE: &'static str = "tpf_release_registry";

    fn attribute_names() -> &'static [&'static str] {
        &[
            attr::REGISTRY_KEY,
            attr::REGISTRY_SORT,
            "record_type",
            attr::TENANT_ID,
            attr::PIPELINE_ID,
            attr::CONTRACT_VERSION,
            attr::RELEASE_VERSION,
            "primary_artifact_id",
            "primary_artifact_digest",
            "primary_artifact_uri",
            "primary_artifact_size_bytes",
            "primary_artifact_checksum",
            "descriptor_json",
            "contract_json",
            attr::CREATED_AT_EPOCH_MS,
            attr::UPDATED_AT_EPOCH_MS,
            "activated_at_epoch_ms",
        ]
    }

    fn to_item(&self) -> Item {
        let descriptor = release_descriptor_form(&self.descriptor).unwrap_or(Value::Null);
        let contract = self
            .contract
            .as_ref()
            .map_or_else(|| "null".to_owned(), jackson_compact);
        Writer::default()
            .s(
                attr::REGISTRY_KEY,
                &ids::registry_key(&self.tenant_id, &self.pipeline_id),
            )
            .s(
                attr::REGISTRY_SORT,
                &ids::release_sort_key(&self.release_version),
            )
            .s("record_type", RELEASE_RECORD)
            .s(attr::TENANT_ID, &self.tenant_id)
            .s(attr::PIPELINE_ID, &self.pipeline_id)
            .s(attr::CONTRACT_VERSION, &self.contract_version)
            .s(attr::RELEASE_VERSION, &self.release_version)
            .s("primary_artifact_id", &self.primary_artifact_id)
            .s("primary_artifact_digest", &self.primary_artifact_digest)
            .s("primary_artifact_uri", &self.primary_artifact_uri)
            .n(
                "primary_artifact_size_bytes",
                self.primary_artifact_size_bytes,
            )
            .s("primary_artifact_checksum", &self.primary_artifact_checksum)
            .s("descriptor_json", &jackson_compact(&descriptor))
            .s("contract_json", &contract)
            .n(attr::CREATED_AT_EPOCH_MS, self.created_at_epoch_ms)
            .n(attr::UPDATED_AT_EPOCH_MS, self.updated_at_epoch_ms)
            .n("activated_at_epoch_ms", self.activated_at_epoch_ms)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        let release_version = r.tpf_s(attr::RELEASE_VERSION)?;
        let descriptor_text = r.tpf_s("descriptor_json")?;
        let descriptor = serde_json::from_str(&descriptor_text)
            .ok()
            .and_then(|d| release_descriptor_form(&d))
            .ok_or_else(|| Reader::err("descriptor_json", "not a release descriptor"))?;
        let contract_text = r.tpf_s("contract_json")?;
        let contract = match serde_json::from_str::<Value>(&contract_text) {
            Ok(Value::Null) => None,
            Ok(document) => Some(
                contract_descriptor_form(&document)
                    .ok_or_else(|| Reader::err("contract_json", "not a contract descriptor"))?,
            ),
            Err(_) => return Err(Reader::err("contract_json", "not JSON")),
        };
        Ok(Self {
            tenant_id: r.tpf_s(attr::TENANT_ID)?,
            pipeline_id: r.tpf_s(attr::PIPELINE_ID)?,
            contract_version: r.tpf_s(attr::CONTRACT_VERSION)?,
            release_version,
            status: ReleaseStatus::Registered,
            descriptor,
            primary_artifact_id: r.tpf_s("primary_artifact_id")?,
            primary_artifact_digest: r.tpf_s("primary_artifact_digest")?,
            primary_artifact_uri: r.artifact_uri()?,
            primary_artifact_size_bytes: r.tpf_n("primary_artifact_size_bytes")?,
            primary_artifact_checksum: r.tpf_s("primary_artifact_checksum")?,
            contract,
            created_at_epoch_ms: r.tpf_n(attr::CREATED_AT_EPOCH_MS)?,
            updated_at_epoch_ms: r.tpf_n(attr::UPDATED_AT_EPOCH_MS)?,
            activated_at_epoch_ms: 0,
        })
    }
}

/// `record_type` of a release row and of an activation row.
pub const RELEASE_RECORD: &str = "RELEASE";
pub const ACTIVATION_RECORD: &str = "ACTIVATION";

/// An activation row as `toActivationItem` writes it (7 attributes); `latestActivation` reads
/// back only its release version and time.
impl DynamoItem for ReleaseActivationEvent {
    const TABLE: &'static str = "tpf_release_registry";

    fn attribute_names() -> &'static [&'static str] {
        &[
            attr::REGISTRY_KEY,
            attr::REGISTRY_SORT,
            "record_type",
            attr::TENANT_ID,
            attr::PIPELINE_ID,
            attr::RELEASE_VERSION,
            "activated_at_epoch_ms",
        ]
    }

    fn to_item(&self) -> Item {
        Writer::default()
            .s(
                attr::REGISTRY_KEY,
                &ids::registry_key(&self.tenant_id, &self.pipeline_id),
            )
            .s(
                attr::REGISTRY_SORT,
                &ids::activation_sort_key(self.activated_at_epoch_ms, &self.release_version),
            )
            .s("record_type", ACTIVATION_RECORD)
            .s(attr::TENANT_ID, &self.tenant_id)
            .s(attr::PIPELINE_ID, &self.pipeline_id)
            .s(attr::RELEASE_VERSION, &self.release_version)
            .n("activated_at_epoch_ms", self.activated_at_epoch_ms)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        let event = Self {
            tenant_id: r.opt_s(attr::TENANT_ID)?.unwrap_or_default(),
            pipeline_id: r.opt_s(attr::PIPELINE_ID)?.unwrap_or_default(),
            release_version: r.tpf_s(attr::RELEASE_VERSION)?,
            activated_at_epoch_ms: r.tpf_n("activated_at_epoch_ms")?,
        };
        event
            .check()
            .map_err(|_| Reader::err("activated_at_epoch_ms", "not a valid activation"))?;
        Ok(event)
    }
}
