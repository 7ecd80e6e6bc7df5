//! Names TPF's AWS durable host derives: durable execution names, the binding table's keys, and
//! the durable operation names of TPF's coordinator driver.

use sha2::{Digest, Sha256};

use super::validation::{positive_generation, required};
use crate::java_error::JavaError;

/// `AwsDurableExecutionNames.durableExecutionName`: `tpf-` + lowercase hex of the first 24
/// bytes of SHA-256 over the UTF-8 of `tenantId U+0000 idempotencyKey U+0000 generation`
/// (decimal, with a minus sign when negative: this function does not check the generation).
pub fn durable_execution_name(
    tenant_id: Option<&str>,
    idempotency_key: Option<&str>,
    generation: i64,
) -> Result<String, JavaError> {
    let tenant_id = required(tenant_id, "tenantId")?;
    let idempotency_key = required(idempotency_key, "idempotencyKey")?;
    let material = format!("{tenant_id}\u{0}{idempotency_key}\u{0}{generation}");
    let digest = Sha256::digest(material.as_bytes());
    Ok(format!("tpf-{}", hex::encode(&digest[..24])))
}

/// Java's `%020d` of a positive generation.
fn padded(generation: i64) -> Result<String, JavaError> {
    positive_generation(generation)?;
    Ok(format!("{generation:020}"))
}

/// A BINDING row's sort key: `GEN#` + the generation zero-padded to 20 digits.
pub fn generation_sort_key(generation: i64) -> Result<String, JavaError> {
    Ok(format!("{}{}", prefix::GENERATION, padded(generation)?))
}

/// A REGISTRATION row's sort key: `REGISTRATION#` + the 20-digit generation.
pub fn registration_sort_key(generation: i64) -> Result<String, JavaError> {
    Ok(format!("{}{}", prefix::REGISTRATION, padded(generation)?))
}

/// A DELIVERY row's sort key: `DELIVERED#` + the generation, not padded.
pub fn delivered_sort_key(generation: i64) -> String {
    format!("{}{generation}", prefix::DELIVERED)
}

/// A REGISTRATION row's partition key: `<tenantId>#<executionId>`.
pub fn registration_partition_key(tenant_id: &str, execution_id: &str) -> String {
    format!("{tenant_id}#{execution_id}")
}

/// A BINDING (and DELIVERY) row's partition key: `<tenantId>#<interactionId>`.
pub fn binding_partition_key(tenant_id: &str, interaction_id: &str) -> String {
    format!("{tenant_id}#{interaction_id}")
}

/// The sort-key prefixes, which the table's queries match with `begins_with`.
pub mod prefix {
    pub const GENERATION: &str = "GEN#";
    pub const REGISTRATION: &str = "REGISTRATION#";
    pub const DELIVERED: &str = "DELIVERED#";
}

/// The durable operation names of TPF's coordinator driver (`AwsDurableCoordinatorHandler`).
pub mod coordinator {
    /// The first step of generation 1: SUBMIT.
    pub const SUBMIT_STEP: &str = "submit-tpf-execution";
    /// The first step of a replacement generation: the checkpoint from the input, no call.
    pub const RESUME_STEP: &str = "resume-tpf-execution";
    /// The last step: RESULT.
    pub const RESULT_STEP: &str = "read-tpf-result";

    /// The `waitForCondition` polling SWEEP + STATUS before await round `n` (0, 1, …).
    pub fn wait_for_condition(n: u64) -> String {
        format!("wait-for-tpf-state-{n}")
    }

    /// The `waitForCallback` of await round `n`.
    pub fn wait_for_callback(n: u64) -> String {
        format!("await-completion-{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_tpfs_shape() {
        let n = durable_execution_name(Some("t"), Some("k"), 1).unwrap();
        assert_eq!(n.len(), 52);
        assert!(
            n.starts_with("tpf-")
                && n[4..]
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(n, durable_execution_name(Some("t"), Some("k"), 2).unwrap());
        assert_eq!(
            durable_execution_name(Some(" "), Some("k"), 1)
                .unwrap_err()
                .message,
            "tenantId must not be blank"
        );
    }

    #[test]
    fn sort_keys_pad_to_twenty_digits_and_refuse_zero() {
        assert_eq!(generation_sort_key(1).unwrap(), "GEN#00000000000000000001");
        assert_eq!(
            registration_sort_key(i64::MAX).unwrap(),
            "REGISTRATION#09223372036854775807"
        );
        assert!(generation_sort_key(0).is_err() && registration_sort_key(-1).is_err());
        assert_eq!(delivered_sort_key(12), "DELIVERED#12");
    }
}
