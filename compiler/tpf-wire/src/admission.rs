//! TPF's admission identities: the key that scopes a client's idempotency key
//! (`NativeExecutionAdmission.key`) and the fingerprint of an admission intent
//! (`ExecutionAdmissionIntent.fingerprint`). Both hash length-framed UTF-8: a 4-byte big-endian
//! byte count (`DataOutputStream.writeInt`), then the bytes. Nothing is trimmed or normalised.

use sha2::{Digest, Sha256};

use crate::java_error::JavaError;
use crate::java_text::is_java_blank;

/// The admission key's prefix.
pub const KEY_PREFIX: &str = "execution-admission:v1:";
/// The only intent schema version.
pub const INTENT_SCHEMA_VERSION: i32 = 1;

fn framed(out: &mut Vec<u8>, bytes: &[u8]) {
    // Java arrays are at most i32::MAX long; a longer Rust slice cannot come from TPF.
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// `execution-admission:v1:` + lowercase hex SHA-256 of tenant, pipeline and client key, each
/// framed. A null or blank part is refused.
pub fn admission_key(
    tenant_id: Option<&str>,
    pipeline_id: Option<&str>,
    client_key: Option<&str>,
) -> Result<String, JavaError> {
    let mut material = Vec::new();
    for part in [tenant_id, pipeline_id, client_key] {
        match part {
            Some(p) if !is_java_blank(p) => framed(&mut material, p.as_bytes()),
            _ => {
                return Err(JavaError::illegal_argument(
                    "Admission scope must not be blank",
                ))
            }
        }
    }
    Ok(format!(
        "{KEY_PREFIX}{}",
        hex::encode(Sha256::digest(&material))
    ))
}

/// `ExecutionAdmissionIntent`: what a client asked to admit, compared whole on replay.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionIntent {
    pub schema_version: i32,
    /// tenantId, pipelineId, clientKey, contractVersion, releaseVersion, inputShape,
    /// payloadTypeId, payloadEncoding, in TPF's order.
    pub metadata: [String; 8],
    /// The exact submitted bytes, not a reserialisation.
    pub input_bytes: Vec<u8>,
    pub output_streaming: bool,
}

/// The metadata components' names, in TPF's order.
pub const INTENT_METADATA: [&str; 8] = [
    "tenantId",
    "pipelineId",
    "clientKey",
    "contractVersion",
    "releaseVersion",
    "inputShape",
    "payloadTypeId",
    "payloadEncoding",
];

impl AdmissionIntent {
    /// The constructor's rules: schema version 1, then every metadata text non-blank.
    pub fn new(
        schema_version: i32,
        metadata: [Option<&str>; 8],
        input_bytes: Vec<u8>,
        output_streaming: bool,
    ) -> Result<Self, JavaError> {
        if schema_version != INTENT_SCHEMA_VERSION {
            return Err(JavaError::illegal_argument(
                "Unsupported execution admission intent schema version",
            ));
        }
        let mut texts: [String; 8] = Default::default();
        for ((slot, value), name) in texts.iter_mut().zip(metadata).zip(INTENT_METADATA) {
            match value {
                Some(v) if !is_java_blank(v) => *slot = v.to_owned(),
                _ => {
                    return Err(JavaError::illegal_argument(format!(
                        "{name} must not be blank"
                    )))
                }
            }
        }
        Ok(Self {
            schema_version,
            metadata: texts,
            input_bytes,
            output_streaming,
        })
    }

    /// Lowercase hex SHA-256 of the schema version (4 bytes), the eight framed texts, the
    /// framed input bytes and one boolean byte.
    pub fn fingerprint(&self) -> String {
        let mut material = Vec::new();
        material.extend_from_slice(&self.schema_version.to_be_bytes());
        for text in &self.metadata {
            framed(&mut material, text.as_bytes());
        }
        framed(&mut material, &self.input_bytes);
        material.push(u8::from(self.output_streaming));
        hex::encode(Sha256::digest(&material))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_separates_what_concatenation_would_merge() {
        let a = admission_key(Some("ab"), Some("c"), Some("d")).unwrap();
        let b = admission_key(Some("a"), Some("bc"), Some("d")).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX) && a.len() == KEY_PREFIX.len() + 64);
        assert_eq!(
            admission_key(None, Some("p"), Some("k"))
                .unwrap_err()
                .message,
            "Admission scope must not be blank"
        );
    }

    #[test]
    fn the_last_byte_is_output_streaming() {
        let meta = [Some("x"); 8];
        let off = AdmissionIntent::new(1, meta, vec![1], false).unwrap();
        let on = AdmissionIntent::new(1, meta, vec![1], true).unwrap();
        assert_ne!(off.fingerprint(), on.fingerprint());
        assert!(AdmissionIntent::new(2, meta, vec![], false).is_err());
        let mut blank = meta;
        blank[5] = Some(" ");
        assert_eq!(
            AdmissionIntent::new(1, blank, vec![], false)
                .unwrap_err()
                .message,
            "inputShape must not be blank"
        );
    }
}
