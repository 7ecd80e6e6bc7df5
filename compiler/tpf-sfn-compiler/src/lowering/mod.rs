//! What every backend's lowering shares, so that backends are siblings that depend on this and
//! never on each other: the release's resource names (`names.rs`), the content hash a release's
//! tags carry (`hash.rs`), the manifest's backend-neutral parts and the tags every deployed
//! resource of a release carries (`manifest.rs`), the IAM trust policies of the roles a release
//! stack creates (`iam.rs`), the Lambda runtime the functions' `bootstrap` targets
//! (`runtime.rs`), what every export refuses (`export.rs`), the alarms and log retention every
//! stack declares (`monitoring.rs`) and the Terraform spelling every backend's export shares
//! (`terraform.rs`).
//!
//! Nothing here names an engine's state, error or resource type: that is each backend's own
//! module (`crate::sfn`, `crate::durable`).

pub mod export;
pub mod hash;
pub mod iam;
pub mod manifest;
pub mod monitoring;
pub mod names;
pub mod runtime;
pub mod terraform;

/// A release's JSON file as the compiler writes it: pretty-printed, newline-terminated.
pub fn json_file<T: serde::Serialize>(value: &T) -> String {
    // Serialising our own types (string keys, finite numbers) cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
