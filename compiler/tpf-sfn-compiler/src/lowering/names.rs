//! The names of a release's deployed resources, whichever backend runs them: a Step Functions
//! machine, a Lambda durable function. The bridge finds a release's driver by this name, so it
//! is one recipe for every backend.

use sha2::{Digest, Sha256};

/// The longest name this recipe gives: Step Functions' limit on machine names. With the roles in
/// use (`driver`, `durable`) the recipe stays within 64, Lambda's limit on function
/// names, because its parts are capped (20 + 24 + 10 characters and the role).
pub const MAX_RESOURCE_NAME: usize = 80;

/// A short, stable tag for disambiguation.
pub fn short_hash(parts: &[&str], len: usize) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    let mut hex = hex::encode(h.finalize());
    hex.truncate(len);
    hex
}

/// Lower-case `[a-z0-9-]` slug, at most `max` characters, for resource names.
pub fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            dash = true;
        }
        if out.len() >= max {
            break;
        }
    }
    out.truncate(max);
    out.trim_end_matches('-').to_string()
}

/// The last part of each resource name a release deploys, by what the resource is: the wake
/// path's IAM patterns match these, so every backend spells them from here.
pub mod role {
    /// A Step Functions release's driver machine.
    pub const DRIVER: &str = "driver";
    /// A Lambda durable functions release's driver function.
    pub const DURABLE: &str = "durable";
}

/// Deterministic resource names for one release: `<prefix>-<pipeline>-<tag>-<role>`.
///
/// `<pipeline>` is the last segment of the pipeline id (readable in the console list);
/// `<tag>` is a hash of (pipelineId, releaseVersion), which keeps two releases, or two pipelines
/// with the same last segment, apart. Execution, machine and function names allow only
/// `[A-Za-z0-9_-]` for CloudWatch Logs, which this stays within.
pub fn resource_name(prefix: &str, pipeline_id: &str, release_version: &str, role: &str) -> String {
    let tail = pipeline_id
        .rsplit(['.', '/', ':'])
        .next()
        .unwrap_or(pipeline_id);
    let mut readable = slug(tail, 24);
    if readable.is_empty() {
        readable = "pipeline".to_string();
    }
    let tag = short_hash(&[pipeline_id, release_version], 10);
    let name = format!("{}-{readable}-{tag}-{role}", slug(prefix, 20));
    // Counted in characters so that no role, however spelled, cuts a character in half.
    let cut: String = name.chars().take(MAX_RESOURCE_NAME).collect();
    cut.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_are_short_and_legal() {
        for role in ["driver", "durable"] {
            let n = resource_name(
                "a-prefix-of-twenty-characters-and-more",
                "org.pipelineframework.a-pipeline-with-a-long-last-segment",
                &format!("sha256:{}", "d".repeat(64)),
                role,
            );
            assert!(n.ends_with(&format!("-{role}")), "{n}");
            assert!(
                n.len() <= 64,
                "{n} is longer than a Lambda function name may be"
            );
            assert!(n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        }
        let n = resource_name(
            "tpf",
            "org.pipelineframework.restaurantapproval",
            &format!("sha256:{}", "d".repeat(64)),
            "driver",
        );
        assert!(n.starts_with("tpf-restaurantapproval-"), "{n}");
    }

    #[test]
    fn two_releases_get_two_names() {
        let a = resource_name("tpf", "p", "1", "driver");
        let b = resource_name("tpf", "p", "2", "driver");
        assert_ne!(a, b);
    }

    #[test]
    fn an_odd_role_is_cut_on_a_character_boundary() {
        let n = resource_name("tpf", "p", "1", &"é".repeat(100));
        assert!(n.chars().count() <= MAX_RESOURCE_NAME);
    }
}
