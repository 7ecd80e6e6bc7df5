//! The queue binding's message body: `{"action", "tenantId", "executionId", "request", "taskToken"}`.

use serde_json::Value;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed message: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

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
        let task_token = text(&value, "taskToken")?;
        let request = match value.get("request") {
            Some(r @ Value::Object(_)) => r.clone(),
            _ => return Err(Malformed("`request` must be a JSON object".into())),
        };
        let action = match text(&value, "action")?.as_str() {
            "process-work-item" => ActionKind::ProcessWorkItem {
                tenant_id: text(&value, "tenantId")?,
                execution_id: text(&value, "executionId")?,
            },
            "sweep-once" => ActionKind::SweepOnce,
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
            } => format!(
                "/tpf/actions/v1/tenants/{}/executions/{}/process-work-item",
                segment(tenant_id),
                segment(execution_id)
            ),
            ActionKind::SweepOnce => "/tpf/actions/v1/sweep-once".into(),
        }
    }
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
