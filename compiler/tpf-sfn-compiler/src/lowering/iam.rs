//! Trust policies of the roles a release stack or the wake-path stack creates, whichever
//! backend's: who may assume the role.

use serde_json::{json, Value};

/// The role may be assumed by `service`.
pub fn trust(service: &str) -> Value {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole"
        }]
    })
}

/// [`trust`] for a service that names the account it acts for (Step Functions, EventBridge
/// Scheduler): only on behalf of this stack's own account, so no other account's machine or
/// schedule can get the service to assume the role (the confused deputy). `account` is how the
/// flavour spells the deploying account. Lambda's execution roles keep the plain trust: Lambda
/// does not document `aws:SourceAccount` on the execution role's assumption.
pub fn trust_in_account(service: &str, account: Value) -> Value {
    let mut policy = trust(service);
    policy["Statement"][0]["Condition"] = json!({"StringEquals": {"aws:SourceAccount": account}});
    policy
}
