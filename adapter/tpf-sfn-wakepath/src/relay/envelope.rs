//! What a relay message that can never succeed is ([`Malformed`]), and the Action API v1 paths
//! the durable driver function's v1 client still calls.

use tpf_wire::action::path;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed message: {0}")]
pub struct Malformed(pub String);

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
    fn paths_encode_ids() {
        assert_eq!(
            process_work_item_path("t 1", "e/2"),
            "/tpf/actions/v1/tenants/t%201/executions/e%2F2/process-work-item"
        );
        assert_eq!(sweep_once_path(), "/tpf/actions/v1/sweep-once");
    }
}
