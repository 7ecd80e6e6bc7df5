//! TPF's deterministic identifiers and store keys, built the way its Java code builds them.
//!
//! TPF derives await unit ids and correlation ids with Java's `UUID.nameUUIDFromBytes`
//! (`RT/awaitable/AwaitCoordinator.deriveUnitId`), a type-3 (MD5) UUID; its store keys are
//! length-prefixed with Java's `String.length()` (UTF-16 code units, [`utf16_len`]). The drivers
//! and the wake path key awaits by these ids, so the model must mint the very same strings. `mapping-tests/fixtures/tpf-vectors/keys.json` and `step-ids.json` (computed by TPF's
//! own Java) check every function here. MD5 comes from the `md-5` crate the interpreter's
//! `States.Hash` already uses.

use std::fmt;

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::java_text::{as_text, jackson_compact, utf16_len};

/// MD5 (RFC 1321). Only used for name-based UUIDs, never for security.
pub fn md5(input: &[u8]) -> [u8; 16] {
    use md5::Digest as _;
    md5::Md5::digest(input).into()
}

/// Java's `UUID.nameUUIDFromBytes(name.getBytes(UTF_8)).toString()`.
pub fn name_uuid_v3(name: &str) -> String {
    let mut bytes = md5(name.as_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x30;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A key TPF refuses to build: the message of the `IllegalArgumentException` it throws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(pub String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

/// Await unit id: `AwaitCoordinator.deriveUnitId` = UUIDv3(`tenant:execution:stepId:stepIndex`).
pub fn await_unit_id(
    tenant_id: &str,
    execution_id: &str,
    step_id: &str,
    step_index: u32,
) -> String {
    name_uuid_v3(&format!(
        "{tenant_id}:{execution_id}:{step_id}:{step_index}"
    ))
}

/// `AwaitStepDescriptor`'s correlation strategy: blank means `interactionId`.
pub fn normalize_correlation_strategy(strategy: Option<&str>) -> &str {
    match strategy {
        Some(s) if !s.trim().is_empty() => s,
        _ => "interactionId",
    }
}

/// Correlation id (`AwaitCoordinator.deriveCorrelationId`): UUIDv3 of
/// `tenant:execution:stepId:idempotencyKey`; strategies other than `interactionId` and
/// `signedResumeToken` prefix that basis with `<strategy>:`.
pub fn correlation_id(
    strategy: Option<&str>,
    tenant_id: &str,
    execution_id: &str,
    step_id: &str,
    idempotency_key: &str,
) -> String {
    let basis = format!("{tenant_id}:{execution_id}:{step_id}:{idempotency_key}");
    match normalize_correlation_strategy(strategy) {
        "interactionId" | "signedResumeToken" => name_uuid_v3(&basis),
        other => name_uuid_v3(&format!("{other}:{basis}")),
    }
}

/// An await interaction's idempotency key (`AwaitCoordinator.deriveIdempotencyKey` plus the
/// item suffix of `createInteraction`): `executionId:stepId` without `idempotencyKeyFields`;
/// with them `stepId` + `:field=value` per field (the execution id left out, so it dedupes across
/// executions), a value being `JsonNode.asText()` of the request payload's field or `<null>`.
pub fn await_idempotency_key(
    execution_id: &str,
    step_id: &str,
    key_fields: &[String],
    request_payload: &Value,
    item_index: Option<u32>,
) -> String {
    let mut key = if key_fields.is_empty() {
        format!("{execution_id}:{step_id}")
    } else {
        let mut key = step_id.to_owned();
        for field in key_fields {
            let value = match request_payload.get(field) {
                None | Some(Value::Null) => "<null>".to_owned(),
                Some(v) => as_text(v),
            };
            key.push_str(&format!(":{field}={value}"));
        }
        key
    };
    if let Some(i) = item_index {
        key.push_str(&format!(":item={i}"));
    }
    key
}

/// Interaction id. TPF uses a random UUID (dedup is by lookup keys); the model derives it from the
/// correlation id so that traces are reproducible.
pub fn interaction_id(correlation_id: &str) -> String {
    name_uuid_v3(&format!("interaction:{correlation_id}"))
}

/// Execution id. TPF uses `UUID.randomUUID()`; the model derives it from the scoped execution key
/// and the creation instant, so traces are reproducible and a key submitted again after its
/// record expired gets a new id (and a new driver name) as it would in TPF.
pub fn execution_id(tenant_id: &str, execution_key: &str, created_at_epoch_ms: i64) -> String {
    name_uuid_v3(&format!(
        "execution:{}:{created_at_epoch_ms}",
        scoped_execution_key(tenant_id, execution_key)
    ))
}

/// `len:left:len:right`, lengths in UTF-16 code units.
fn length_prefixed(left: &str, right: &str) -> String {
    format!("{}:{left}:{}:{right}", utf16_len(left), utf16_len(right))
}

/// `tpf_execution_key` hash key (`DynamoExecutionStateStore.scopedExecutionKey`):
/// `len(tenant):tenant:len(key):key`.
pub fn scoped_execution_key(tenant_id: &str, execution_key: &str) -> String {
    length_prefixed(tenant_id, execution_key)
}

/// The execution key a root execution is stored under
/// (`PipelineRunSubmissionPlan.scopedRootExecutionKey`):
/// `len(pipelineId):pipelineId:len(releaseVersion):releaseVersion:executionKey:<key>`, so one
/// client key names one execution per pipeline release.
pub fn scoped_root_execution_key(
    pipeline_id: &str,
    release_version: &str,
    execution_key: &str,
) -> Result<String, KeyError> {
    for (name, value) in [
        ("pipelineId", pipeline_id),
        ("releaseVersion", release_version),
        ("executionKey", execution_key),
    ] {
        if value.trim().is_empty() {
            return Err(KeyError(format!("{name} must not be blank")));
        }
    }
    Ok(format!(
        "{}:executionKey:{execution_key}",
        length_prefixed(pipeline_id, release_version)
    ))
}

/// The client key inside a root execution's stored key: the inverse of
/// [`scoped_root_execution_key`] for the record's own pipeline and release; `None` for a key
/// of another scope (a child execution's, or another release's).
pub fn client_execution_key<'a>(
    pipeline_id: &str,
    release_version: &str,
    scoped: &'a str,
) -> Option<&'a str> {
    let prefix = format!(
        "{}:executionKey:",
        length_prefixed(pipeline_id, release_version)
    );
    scoped
        .strip_prefix(prefix.as_str())
        .filter(|k| !k.trim().is_empty())
}

/// `DynamoAwaitInteractionStore.lookupKey`: `kind:len(tenant):tenant:len(key):key`.
pub fn lookup_key(kind: &str, tenant_id: &str, key: &str) -> String {
    format!("{kind}:{}", length_prefixed(tenant_id, key))
}

/// `tpf_await_interaction_key` idempotency lookup key: the key is `stepId:idempotencyKey`.
pub fn idempotency_lookup_key(tenant_id: &str, step_id: &str, idempotency_key: &str) -> String {
    lookup_key(
        "idempotency",
        tenant_id,
        &format!("{step_id}:{idempotency_key}"),
    )
}

/// `tpf_await_interaction_key` correlation lookup key.
pub fn correlation_lookup_key(tenant_id: &str, correlation_id: &str) -> String {
    lookup_key("correlation", tenant_id, correlation_id)
}

/// `tpf_release_registry` hash key: `tenant#pipelineId`.
pub fn registry_key(tenant_id: &str, pipeline_id: &str) -> String {
    format!("{tenant_id}#{pipeline_id}")
}

/// Release row sort key.
pub fn release_sort_key(release_version: &str) -> String {
    format!("release:{release_version}")
}

/// Activation event sort key: `activation:%019d(activatedAt):<releaseVersion>`, so the latest
/// activation is the greatest key.
pub fn activation_sort_key(activated_at_epoch_ms: i64, release_version: &str) -> String {
    format!("activation:{activated_at_epoch_ms:019}:{release_version}")
}

/// The exact text `ExecutionInputPolicy.deriveServerExecutionKey` hashes for a payload:
/// Jackson's `writeValueAsBytes` of the input snapshot's payload (the item, or the item list of
/// a `MULTI` input).
pub fn server_key_payload(payload: &Value) -> String {
    jackson_compact(payload)
}

/// `ExecutionInputPolicy.deriveServerExecutionKey`: base64url without padding of
/// sha256(UTF-8(tenant) + `:` + [`server_key_payload`]).
pub fn derive_server_execution_key(tenant_id: &str, payload: &Value) -> String {
    let mut digest = Sha256::new();
    digest.update(tenant_id.as_bytes());
    digest.update(b":");
    digest.update(server_key_payload(payload).as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.finalize())
}

/// `ItemContinuationKey`: names the child execution that carries one item of an itemized await
/// through the steps after the await.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemContinuationKey {
    pub tenant_id: String,
    pub parent_execution_id: String,
    pub parent_execution_key: String,
    pub unit_id: String,
    pub item_index: u32,
}

/// What separates a parent's key from the item part of a child execution key.
const AWAIT_ITEM: &str = ":await-item:";

impl ItemContinuationKey {
    /// The record's checks: every id non-blank, the index non-negative.
    pub fn new(
        tenant_id: &str,
        parent_execution_id: &str,
        parent_execution_key: &str,
        unit_id: &str,
        item_index: i64,
    ) -> Result<Self, KeyError> {
        for (name, value) in [
            ("tenantId", tenant_id),
            ("parentExecutionId", parent_execution_id),
            ("parentExecutionKey", parent_execution_key),
            ("unitId", unit_id),
        ] {
            if value.trim().is_empty() {
                return Err(KeyError(format!("Item continuation key requires {name}")));
            }
        }
        let item_index = u32::try_from(item_index).map_err(|_| {
            KeyError(format!(
                "Item continuation index must be non-negative: {item_index}"
            ))
        })?;
        Ok(Self {
            tenant_id: tenant_id.to_owned(),
            parent_execution_id: parent_execution_id.to_owned(),
            parent_execution_key: parent_execution_key.to_owned(),
            unit_id: unit_id.to_owned(),
            item_index,
        })
    }

    /// `<parentExecutionKey>:await-item:<unitId>:<itemIndex>`: the child's execution key.
    pub fn child_execution_key(&self) -> String {
        format!(
            "{}{AWAIT_ITEM}{}:{}",
            self.parent_execution_key, self.unit_id, self.item_index
        )
    }

    /// `tenant::parentExecutionId::unitId::itemIndex` (TPF's in-process dispatch claim).
    pub fn dispatch_claim_key(&self) -> String {
        format!(
            "{}::{}::{}::{}",
            self.tenant_id, self.parent_execution_id, self.unit_id, self.item_index
        )
    }

    /// `<parentExecutionId>:segment:await-item:<unitId>:<itemIndex>`.
    pub fn segment_id(&self) -> String {
        format!(
            "{}:segment{AWAIT_ITEM}{}:{}",
            self.parent_execution_id, self.unit_id, self.item_index
        )
    }

    /// `await-item-continuation:<unitId>:<itemIndex>`: the child's success transition key.
    pub fn transition_key(&self) -> String {
        item_continuation_transition_key(&self.unit_id, self.item_index)
    }
}

/// `await-item-continuation:<unitId>:<itemIndex>` (`ItemizedAwaitContinuationFlow`).
pub fn item_continuation_transition_key(unit_id: &str, item_index: u32) -> String {
    format!("await-item-continuation:{unit_id}:{item_index}")
}

/// The unit id and item index a child execution key names, or `None` for a root execution's
/// key. The last `:await-item:` counts, so a parent key that itself contains one still parses.
pub fn parse_child_execution_key(execution_key: &str) -> Option<(String, u32)> {
    let (_, item) = execution_key.rsplit_once(AWAIT_ITEM)?;
    let (unit_id, index) = item.rsplit_once(':')?;
    if unit_id.is_empty() || unit_id.contains(':') {
        return None;
    }
    Some((unit_id.to_owned(), index.parse().ok()?))
}

/// `NamingPolicy.stripProcessPrefix`: only a literal leading `"Process "` goes.
pub fn strip_process_prefix(name: &str) -> &str {
    name.strip_prefix("Process ").unwrap_or(name)
}

/// `NamingPolicy.formatForClassName`: split on runs of anything but ASCII letters and digits,
/// each word lower-cased with its first character upper-cased, joined.
pub fn format_for_class_name(input: &str) -> String {
    input
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The runtime step id of a YAML step (`ModelExtractionPhase.toYamlServiceName`), which TPF
/// hashes into await unit ids, correlation ids and lookup keys:
/// `"Process" + formatForClassName(stripProcessPrefix(name)) + "Service"`, or
/// `ProcessStepService` when nothing is left.
pub fn step_id(authored_name: &str) -> String {
    let formatted = format_for_class_name(strip_process_prefix(authored_name));
    if formatted.is_empty() {
        "ProcessStepService".to_owned()
    } else {
        format!("Process{formatted}Service")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_matches_rfc_1321_vectors() {
        assert_eq!(hex::encode(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex::encode(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex::encode(md5(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        let long = "1234567890".repeat(8);
        assert_eq!(
            hex::encode(md5(long.as_bytes())),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn name_uuid_matches_java() {
        // Java: UUID.nameUUIDFromBytes("abc".getBytes()) == 90015098-3cd2-3fb0-9696-3f7d28e17f72
        assert_eq!(name_uuid_v3("abc"), "90015098-3cd2-3fb0-9696-3f7d28e17f72");
    }

    #[test]
    fn scoped_key_is_length_prefixed_in_utf16_units() {
        assert_eq!(scoped_execution_key("t1", "k"), "2:t1:1:k");
        assert_eq!(scoped_execution_key("t", "\u{1f600}"), "1:t:2:\u{1f600}");
    }

    #[test]
    fn child_keys_parse_back() {
        let key = ItemContinuationKey::new("t", "p", "k:await-item:u0:1", "u1", 7).unwrap();
        assert_eq!(
            parse_child_execution_key(&key.child_execution_key()),
            Some(("u1".to_owned(), 7))
        );
        assert_eq!(parse_child_execution_key("order-1"), None);
        assert_eq!(parse_child_execution_key("k:await-item:u:x"), None);
    }

    #[test]
    fn step_ids_lower_the_rest_of_each_word() {
        assert_eq!(step_id("Await SMS Reply"), "ProcessAwaitSmsReplyService");
        assert_eq!(step_id("ProcessPayment"), "ProcessProcesspaymentService");
        assert_eq!(step_id("Process "), "ProcessStepService");
    }
}
