//! The Terraform (JSON) spelling every backend's export shares: literal text that Terraform must
//! not interpolate, the trust of a role limited to the deploying account, the module's provider
//! requirement, and the ARN prefixes of the deploying account's resources.

use serde_json::{json, Value};

use crate::lowering::iam::trust_in_account;

/// Terraform interpolates `${...}` and `%{...}` in every string; compiled text must stay literal.
pub fn literal(s: &str) -> String {
    s.replace("${", "$${").replace("%{", "%%{")
}

/// A JSON document as a literal Terraform string.
pub fn json_literal(v: &Value) -> String {
    literal(&v.to_string())
}

/// The deploying account, as Terraform reads it.
pub const ACCOUNT_ID: &str = "${data.aws_caller_identity.current.account_id}";
pub const PARTITION: &str = "${data.aws_partition.current.partition}";
pub const REGION: &str = "${data.aws_region.current.name}";

/// `arn:<partition>:<service>:<region>:<account>:`, the deploying account's resources of
/// `service` (the module declares the three data sources).
pub fn arn_prefix(service: &str) -> String {
    format!("arn:{PARTITION}:{service}:{REGION}:{ACCOUNT_ID}:")
}

/// The data sources [`ACCOUNT_ID`], [`PARTITION`] and [`REGION`] read.
pub fn account_data() -> Value {
    json!({
        "aws_partition": {"current": {}},
        "aws_region": {"current": {}},
        "aws_caller_identity": {"current": {}}
    })
}

/// A trust policy limited to the deploying account: the policy's text is a literal except for
/// the account, which Terraform fills in.
pub fn account_trust(service: &str) -> String {
    // A marker with nothing `literal` escapes stands in for the interpolation.
    const MARKER: &str = "TPF_SFN_ACCOUNT_ID_MARKER";
    json_literal(&trust_in_account(service, json!(MARKER))).replace(MARKER, ACCOUNT_ID)
}

/// The module's `terraform` block: the AWS provider at `version` or later.
pub fn header(version: &str) -> Value {
    json!({"required_providers": {"aws": {"source": "hashicorp/aws", "version": version}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_interpolations() {
        assert_eq!(literal("a ${b} %{c} $d"), "a $${b} %%{c} $d");
    }

    #[test]
    fn the_account_trust_interpolates_the_account_only() {
        let t = account_trust("states.amazonaws.com");
        assert!(
            t.contains(&format!("\"aws:SourceAccount\":\"{ACCOUNT_ID}\"")),
            "{t}"
        );
        assert_eq!(t.matches("${").count(), 1, "{t}");
    }
}
