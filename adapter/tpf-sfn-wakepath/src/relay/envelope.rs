//! The queue binding's message body: `{"action", "tenantId", "executionId", "request", "taskToken"}`.

use serde_json::Value;
use tpf_wire::action::{envelope as field, path};

/// Which Action API v1 operation a message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionKind {
    ProcessWorkItem {
        tenant_id: String,
        execution_id: String,
    },
    SweepOnce,
}

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub action: ActionKind,
    pub request: Value,
    pub task_token: String,
}

/// Why a message body can never be relayed. Such a message is deleted: redelivery cannot fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed message: {0}")]
pub struct Malformed(pub String);

fn text(value: &Value, key: &str) -> Result<String, Malformed> {
    match value.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(Malformed(format!("`{key}` must be a non-empty string"))),
        None => Err(Malformed(format!("`{key}` is missing"))),
    }
}

impl Envelope {
    pub fn parse(body: &str) -> Result<Envelope, Malformed> {
        let value: Value =
            serde_json::from_str(body).map_err(|e| Malformed(format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(Malformed("not a JSON object".into()));
        }
        let task_token = text(&value, field::TASK_TOKEN)?;
        let request = match value.get(field::REQUEST) {
            Some(r @ Value::Object(_)) => r.clone(),
            _ => return Err(Malformed("`request` must be a JSON object".into())),
        };
        let action = match text(&value, field::ACTION)?.as_str() {
            path::PROCESS_WORK_ITEM => ActionKind::ProcessWorkItem {
                tenant_id: text(&value, field::TENANT_ID)?,
                execution_id: text(&value, field::EXECUTION_ID)?,
            },
            path::SWEEP_ONCE => ActionKind::SweepOnce,
            other => return Err(Malformed(format!("unknown action `{other}`"))),
        };
        Ok(Envelope {
            action,
            request,
            task_token,
        })
    }

    /// The Action API path, ids percent-encoded as path segments.
    pub fn path(&self) -> String {
        match &self.action {
            ActionKind::ProcessWorkItem {
                tenant_id,
                execution_id,
            } => process_work_item_path(tenant_id, execution_id),
            ActionKind::SweepOnce => sweep_once_path(),
        }
    }
}

/// `sweep-once`'s path.
pub fn sweep_once_path() -> String {
    format!("{}/{}", path::PREFIX, path::SWEEP_ONCE)
}

/// `process-work-item`'s path for one execution, ids percent-encoded as path segments.
pub fn process_work_item_path(tenant_id: &str, execution_id: &str) -> String {
    format!(
        "{}/tenants/{}/executions/{}/{}",
        path::PREFIX,
        segment(tenant_id),
        segment(execution_id),
        path::PROCESS_WORK_ITEM
    )
}

/// Percent-encodes everything outside RFC 3986's unreserved set, so an id cannot change the path.
fn segment(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_process_work_item_and_encodes_ids() {
        let e = Envelope::parse(
            r#"{"action":"process-work-item","tenantId":"t 1","executionId":"e/2","request":{"a":1},"taskToken":"tok"}"#,
        )
        .unwrap();
        assert_eq!(
            e.path(),
            "/tpf/actions/v1/tenants/t%201/executions/e%2F2/process-work-item"
        );
        assert_eq!(e.task_token, "tok");
    }

    #[test]
    fn sweep_once_needs_no_ids() {
        let e = Envelope::parse(
            r#"{"action":"sweep-once","tenantId":null,"executionId":null,"request":{},"taskToken":"t"}"#,
        )
        .unwrap();
        assert_eq!(e.path(), "/tpf/actions/v1/sweep-once");
    }

    #[test]
    fn rejects_bad_bodies() {
        for body in [
            "nope",
            "[]",
            r#"{"action":"x","request":{},"taskToken":"t"}"#,
            r#"{"action":"sweep-once","request":{}}"#,
            r#"{"action":"process-work-item","request":{},"taskToken":"t"}"#,
            r#"{"action":"sweep-once","request":"s","taskToken":"t"}"#,
        ] {
            assert!(Envelope::parse(body).is_err(), "{body}");
        }
    }
}
