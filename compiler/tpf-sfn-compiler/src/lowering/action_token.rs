//! The Action API's bearer token in the exported stacks: never the token itself, only the name
//! of the SSM SecureString parameter that holds it. The functions that call TPF (the relay, a
//! durable release's driver and sweeper) read it at run time with `ssm:GetParameter`
//! (WithDecryption) on exactly that parameter's ARN, so rotating the token is `ssm
//! put-parameter --overwrite`, not a new release: a published version freezes its environment,
//! and the environment holds only the name.
//!
//! A SecureString under the AWS managed key (`alias/aws/ssm`) needs nothing more: that key's
//! policy lets any principal of the account decrypt through Parameter Store. A customer managed
//! key needs `kms:Decrypt` on the key, which the stacks grant only through Parameter Store
//! (`kms:ViaService`) and only for this parameter (its `PARAMETER_ARN` encryption context),
//! when the key's ARN is given.

use serde_json::{json, Value};

/// The functions' setting that names the parameter (`tpf_sfn_lambda::config::var`).
pub const PARAMETER_ENV: &str = "TPF_SFN_ACTION_TOKEN_PARAMETER";

/// CloudFormation's `AllowedPattern` and Terraform's validation of the name: a path from the
/// root (the leading `/` makes `parameter<name>` its ARN), of the characters SSM allows.
pub const NAME_PATTERN: &str = "^/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$";
/// SSM's limit on a parameter name.
pub const NAME_MAX_LENGTH: usize = 1011;

pub const CLOUDFORMATION_PARAMETER: &str = "ActionTokenParameter";
pub const CLOUDFORMATION_KEY_PARAMETER: &str = "ActionTokenKmsKeyArn";
pub const CLOUDFORMATION_KEY_CONDITION: &str = "HasActionTokenKmsKey";
pub const TERRAFORM_VARIABLE: &str = "action_token_parameter";
pub const TERRAFORM_KEY_VARIABLE: &str = "action_token_kms_key_arn";

/// The statement ids the checks look for.
pub const READ_SID: &str = "ReadActionToken";
pub const DECRYPT_SID: &str = "DecryptActionToken";

/// Why a parameter name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("`{0}` does not start with `/`: name the parameter by its full path, e.g. /tpf/action-token")]
    NotAPath(String),
    #[error("`{0}` has an empty path segment or a character SSM does not allow in a name (letters, digits, `_`, `.`, `-`, `/`)")]
    Characters(String),
    #[error("the name is {0} characters; SSM allows at most {NAME_MAX_LENGTH}")]
    TooLong(usize),
    #[error("`{0}` starts with `aws` or `ssm`, which SSM reserves")]
    Reserved(String),
}

/// Checks a parameter name as [`NAME_PATTERN`] does, plus SSM's length limit and reserved
/// prefixes.
pub fn check_name(name: &str) -> Result<(), NameError> {
    let Some(path) = name.strip_prefix('/') else {
        return Err(NameError::NotAPath(name.to_owned()));
    };
    if name.chars().count() > NAME_MAX_LENGTH {
        return Err(NameError::TooLong(name.chars().count()));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    if path
        .split('/')
        .any(|s| s.is_empty() || !s.chars().all(allowed))
    {
        return Err(NameError::Characters(name.to_owned()));
    }
    let first = path.split('/').next().unwrap_or("").to_ascii_lowercase();
    if first.starts_with("aws") || first.starts_with("ssm") {
        return Err(NameError::Reserved(name.to_owned()));
    }
    Ok(())
}

/// The parameter's ARN for a name that passed [`check_name`].
pub fn parameter_arn(partition: &str, region: &str, account: &str, name: &str) -> String {
    format!("arn:{partition}:ssm:{region}:{account}:parameter{name}")
}

/// `kms:Decrypt` on `key`, through Parameter Store in `region` only, for `parameter_arn` only.
pub fn decrypt_statement(key: Value, region_service: Value, parameter_arn: Value) -> Value {
    json!({
        "Sid": DECRYPT_SID,
        "Effect": "Allow",
        "Action": ["kms:Decrypt"],
        "Resource": [key],
        "Condition": {"StringEquals": {
            "kms:ViaService": region_service,
            "kms:EncryptionContext:PARAMETER_ARN": parameter_arn
        }}
    })
}

/// The CloudFormation spelling both stacks share (the wake path's relay, a durable release's
/// functions).
pub mod cloudformation {
    use super::*;

    /// `arn:…:parameter${ActionTokenParameter}`.
    pub fn parameter_arn() -> Value {
        json!({"Fn::Sub": format!(
            "arn:${{AWS::Partition}}:ssm:${{AWS::Region}}:${{AWS::AccountId}}:parameter${{{CLOUDFORMATION_PARAMETER}}}"
        )})
    }

    /// The two parameters: the name (required) and the customer managed key (empty for the
    /// AWS managed key).
    /// `who` names the callers with their verb ("the relay sends").
    pub fn parameters(who: &str) -> [(&'static str, Value); 2] {
        [
            (
                CLOUDFORMATION_PARAMETER,
                json!({
                    "Type": "String",
                    "AllowedPattern": NAME_PATTERN,
                    "MaxLength": NAME_MAX_LENGTH,
                    "ConstraintDescription": "the full path of an SSM parameter, starting with /",
                    "Description": format!("Name of the SSM SecureString parameter holding the bearer token {who} to TPF's Action API (read at run time: rotate it with put-parameter --overwrite)")
                }),
            ),
            (
                CLOUDFORMATION_KEY_PARAMETER,
                json!({
                    "Type": "String",
                    "Default": "",
                    "AllowedPattern": "^$|^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/.+$",
                    "Description": "ARN of the customer managed KMS key the token parameter is encrypted with; empty for the AWS managed key (alias/aws/ssm), which needs no grant"
                }),
            ),
        ]
    }

    pub fn key_condition() -> (&'static str, Value) {
        (
            CLOUDFORMATION_KEY_CONDITION,
            json!({"Fn::Not": [{"Fn::Equals": [{"Ref": CLOUDFORMATION_KEY_PARAMETER}, ""]}]}),
        )
    }

    /// The read statement: `ssm:GetParameter` on the parameter's ARN, nothing else.
    pub fn read_statement() -> Value {
        json!({"Sid": READ_SID, "Effect": "Allow", "Action": ["ssm:GetParameter"], "Resource": [parameter_arn()]})
    }

    /// The key's statement when a customer managed key is given, nothing otherwise.
    pub fn decrypt_statement_if_keyed() -> Value {
        json!({"Fn::If": [
            CLOUDFORMATION_KEY_CONDITION,
            super::decrypt_statement(
                json!({"Ref": CLOUDFORMATION_KEY_PARAMETER}),
                json!({"Fn::Sub": "ssm.${AWS::Region}.amazonaws.com"}),
                parameter_arn(),
            ),
            {"Ref": "AWS::NoValue"}
        ]})
    }
}

/// The Terraform spelling both modules share (the wake path's relay, a durable release's
/// functions).
pub mod terraform {
    use super::*;
    use crate::lowering::terraform::{arn_prefix, REGION};

    /// The local holding the parameter's ARN, and how policies refer to it.
    pub const PARAMETER_ARN_LOCAL: &str = "action_token_parameter_arn";
    pub const PARAMETER_ARN: &str = "${local.action_token_parameter_arn}";
    /// How the functions' environment names the parameter.
    pub const PARAMETER_NAME: &str = "${var.action_token_parameter}";

    /// The two variables: the name (required, validated as CloudFormation's pattern checks it)
    /// and the customer managed key (empty for the AWS managed key). `who` names the callers
    /// with their verb ("the relay sends").
    pub fn variables(who: &str) -> [(&'static str, Value); 2] {
        [
            (
                TERRAFORM_VARIABLE,
                json!({
                    "type": "string",
                    "description": format!("Name of the SSM SecureString parameter holding the bearer token {who} to TPF's Action API (read at run time: rotate it with put-parameter --overwrite)"),
                    "validation": {
                        "condition": format!(
                            "${{can(regex(\"{NAME_PATTERN}\", var.{v})) && length(var.{v}) <= {NAME_MAX_LENGTH}}}",
                            v = TERRAFORM_VARIABLE
                        ),
                        "error_message": "The token parameter is the full path of an SSM parameter, starting with /."
                    }
                }),
            ),
            (
                TERRAFORM_KEY_VARIABLE,
                json!({"type": "string", "default": "", "description": "ARN of the customer managed KMS key the token parameter is encrypted with; empty for the AWS managed key (alias/aws/ssm), which needs no grant"}),
            ),
        ]
    }

    /// The local [`PARAMETER_ARN`] refers to.
    pub fn parameter_arn_local() -> (&'static str, Value) {
        (
            PARAMETER_ARN_LOCAL,
            json!(format!(
                "{}parameter${{var.{TERRAFORM_VARIABLE}}}",
                arn_prefix("ssm")
            )),
        )
    }

    /// The read statement: `ssm:GetParameter` on the parameter's ARN, nothing else.
    pub fn read_statement() -> Value {
        json!({"Sid": READ_SID, "Effect": "Allow", "Action": ["ssm:GetParameter"], "Resource": [PARAMETER_ARN]})
    }

    /// The role policy `name` of role resource `role` granting the key's decrypt, created only
    /// when a customer managed key is given: decrypt through Parameter Store, for the token only.
    pub fn key_policy(name: &str, role: &str) -> Value {
        let decrypt = super::decrypt_statement(
            json!(format!("${{var.{TERRAFORM_KEY_VARIABLE}}}")),
            json!(format!("ssm.{REGION}.amazonaws.com")),
            json!(PARAMETER_ARN),
        );
        json!({
            "count": format!("${{var.{TERRAFORM_KEY_VARIABLE} == \"\" ? 0 : 1}}"),
            "name": name,
            "role": format!("${{aws_iam_role.{role}.id}}"),
            "policy": json!({"Version": "2012-10-17", "Statement": [decrypt]}).to_string()
        })
    }
}

/// Every statement of a template's or a Terraform policy's documents that grants an `ssm:` or
/// `kms:` action on anything but the token parameter (or, for `kms:`, without the Parameter
/// Store conditions). `expected_arn` is the parameter's ARN as the document spells it.
pub fn least_privilege_problems(statements: &[Value], expected_arn: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut reads = 0;
    for s in statements {
        // A conditional statement (`Fn::If`) is checked by its granting branch.
        let s = s.get("Fn::If").and_then(|a| a.get(1)).unwrap_or(s);
        let actions: Vec<&str> = match &s["Action"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let sid = s["Sid"].as_str().unwrap_or("(no Sid)");
        let resources: Vec<&Value> = match &s["Resource"] {
            Value::Array(r) => r.iter().collect(),
            other => vec![other],
        };
        for a in &actions {
            if a.starts_with("ssm:") {
                if *a != "ssm:GetParameter" {
                    problems.push(format!(
                        "{sid} grants {a}; the token needs ssm:GetParameter only"
                    ));
                }
                if resources != [expected_arn] {
                    problems.push(format!(
                        "{sid} grants {a} on {}; only the token parameter {expected_arn} is needed",
                        s["Resource"]
                    ));
                }
                reads += 1;
            }
            if a.starts_with("kms:") {
                let condition = &s["Condition"]["StringEquals"];
                if *a != "kms:Decrypt"
                    || resources.iter().any(|r| r.as_str() == Some("*"))
                    || condition["kms:ViaService"].is_null()
                    || condition["kms:EncryptionContext:PARAMETER_ARN"] != *expected_arn
                {
                    problems.push(format!(
                        "{sid} grants {a} beyond decrypting the token parameter through Parameter Store"
                    ));
                }
            }
        }
    }
    if reads == 0 {
        problems.push("no statement grants ssm:GetParameter on the token parameter".into());
    }
    problems
}

/// `statements` with the token's read widened to every parameter: the mutant the tests show
/// [`least_privilege_problems`] reporting.
pub fn with_wildcard_read(statements: &[Value]) -> Vec<Value> {
    let mut wide = statements.to_vec();
    for s in &mut wide {
        if s["Sid"] == READ_SID {
            s["Resource"] = json!(["*"]);
        }
    }
    wide
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_full_paths_ssm_accepts() {
        for ok in ["/tpf/action-token", "/a", "/prod/tpf_2.x/token-1"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        assert!(matches!(
            check_name("tpf/token"),
            Err(NameError::NotAPath(_))
        ));
        assert!(matches!(check_name(""), Err(NameError::NotAPath(_))));
        for bad in ["/", "/tpf//token", "/tpf/", "/tpf token", "/tpf/tök"] {
            assert!(
                matches!(check_name(bad), Err(NameError::Characters(_))),
                "{bad}"
            );
        }
        assert!(matches!(check_name("/aws/x"), Err(NameError::Reserved(_))));
        assert!(matches!(check_name("/SSMx/y"), Err(NameError::Reserved(_))));
        let long = format!("/{}", "a".repeat(NAME_MAX_LENGTH));
        assert!(matches!(check_name(&long), Err(NameError::TooLong(_))));
    }

    #[test]
    fn the_arn_is_parameter_followed_by_the_path() {
        assert_eq!(
            parameter_arn("aws", "eu-west-1", "210987654321", "/tpf/action-token"),
            "arn:aws:ssm:eu-west-1:210987654321:parameter/tpf/action-token"
        );
    }

    #[test]
    fn the_check_refuses_a_wildcard_and_accepts_the_exact_arn() {
        let arn = cloudformation::parameter_arn();
        let good = vec![
            cloudformation::read_statement(),
            cloudformation::decrypt_statement_if_keyed(),
        ];
        assert_eq!(least_privilege_problems(&good, &arn), Vec::<String>::new());
        let mut wildcard = cloudformation::read_statement();
        wildcard["Resource"] = json!(["*"]);
        assert_eq!(least_privilege_problems(&[wildcard], &arn).len(), 1);
        let mut broader = cloudformation::read_statement();
        broader["Action"] = json!(["ssm:GetParameter", "ssm:GetParametersByPath"]);
        assert!(!least_privilege_problems(&[broader], &arn).is_empty());
        let mut any_key = cloudformation::decrypt_statement_if_keyed();
        any_key["Fn::If"][1]["Condition"] = Value::Null;
        assert!(
            !least_privilege_problems(&[cloudformation::read_statement(), any_key], &arn)
                .is_empty()
        );
        assert!(!least_privilege_problems(&[], &arn).is_empty());
    }
}
