//! Deterministic identifiers and key formats, byte-compatible with TPF's.
//!
//! TPF derives await unit ids and correlation ids with Java's `UUID.nameUUIDFromBytes`
//! (`RT/awaitable/AwaitCoordinator.deriveUnitId`), a type-3 (MD5) UUID. The drivers and the
//! DynamoDB bridge key wakeups by those ids, so the model must mint the very same strings; MD5 comes
//! from the `md-5` crate the interpreter's `States.Hash` already uses.

use sha2::{Digest, Sha256};

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

/// Correlation id: UUIDv3(`tenant:execution:stepId:idempotencyKey`) (`AwaitCoordinator`).
pub fn correlation_id(
    tenant_id: &str,
    execution_id: &str,
    step_id: &str,
    idempotency_key: &str,
) -> String {
    name_uuid_v3(&format!(
        "{tenant_id}:{execution_id}:{step_id}:{idempotency_key}"
    ))
}

/// Interaction id. TPF uses a random UUID (dedup is by lookup keys); the model derives it from the
/// correlation id so that traces are reproducible.
pub fn interaction_id(correlation_id: &str) -> String {
    name_uuid_v3(&format!("interaction:{correlation_id}"))
}

/// Execution id. TPF uses `UUID.randomUUID()`; the model derives it from the scoped execution key
/// so that traces and snapshots are reproducible. One key still maps to one execution.
pub fn execution_id(tenant_id: &str, execution_key: &str) -> String {
    name_uuid_v3(&format!(
        "execution:{}",
        scoped_execution_key(tenant_id, execution_key)
    ))
}

/// `tpf_execution_key` hash key: `len(tenant):tenant:len(key):key` (`DynamoExecutionStateStore`).
pub fn scoped_execution_key(tenant_id: &str, execution_key: &str) -> String {
    format!(
        "{}:{}:{}:{}",
        tenant_id.len(),
        tenant_id,
        execution_key.len(),
        execution_key
    )
}

/// `tpf_await_interaction_key` idempotency lookup key.
pub fn idempotency_lookup_key(tenant_id: &str, step_id: &str, idempotency_key: &str) -> String {
    format!(
        "idempotency:{}:{}:{}:{}:{}",
        tenant_id.len(),
        tenant_id,
        step_id.len(),
        step_id,
        idempotency_key
    )
}

/// `tpf_await_interaction_key` correlation lookup key.
pub fn correlation_lookup_key(tenant_id: &str, correlation_id: &str) -> String {
    format!(
        "correlation:{}:{}:{}:{}",
        tenant_id.len(),
        tenant_id,
        correlation_id.len(),
        correlation_id
    )
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

/// Derived submit key (`ExecutionInputPolicy.resolveExecutionKey`):
/// base64url-without-padding of sha256(`tenantId:` + JSON(input)).
pub fn derived_execution_key(tenant_id: &str, input_json: &str) -> String {
    let digest = Sha256::digest(format!("{tenant_id}:{input_json}").as_bytes());
    base64url_no_pad(&digest)
}

fn base64url_no_pad(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
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
    fn base64url_has_no_padding() {
        assert_eq!(base64url_no_pad(b"f"), "Zg");
        assert_eq!(base64url_no_pad(b"fo"), "Zm8");
        assert_eq!(base64url_no_pad(b"foo"), "Zm9v");
        assert_eq!(base64url_no_pad(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn scoped_key_is_length_prefixed() {
        assert_eq!(scoped_execution_key("t1", "k"), "2:t1:1:k");
    }
}
