//! The vector families of TPF's own AWS durable host: its action gateway (`action-gateway`),
//! durable execution names and binding keys (`durable-names`), and admission keys
//! (`admission-key`), run through `tpf_wire::gateway`, `tpf_wire::admission` and the model's
//! gateway (`tpf_model::gateway`).

mod gateway;
mod names;

use serde_json::Value;
use tpf_wire::java_error::JavaError;

use super::{error_message, same, str_of, Check, Runner};

pub fn runners() -> Vec<Runner<'static>> {
    let mut out = gateway::runners();
    out.extend(names::runners());
    out
}

/// A Java failure against a vector's `{error, errorClass, [rootCause]}`. Jackson's messages
/// name source positions, so for its exceptions the class and the root cause are compared;
/// every other message is compared whole.
fn same_error(what: &str, got: &JavaError, want: &Value) -> Check {
    same(
        &format!("{what}: errorClass"),
        Some(got.class),
        str_of(want, "errorClass"),
    )?;
    if let Some(cause) = str_of(want, "rootCause") {
        return same(
            &format!("{what}: rootCause"),
            got.root_cause().to_string().as_str(),
            cause,
        );
    }
    if got.class.starts_with("com.fasterxml.jackson.") {
        return Ok(());
    }
    same(
        &format!("{what}: error"),
        Some(got.message.as_str()),
        error_message(want),
    )
}

/// A result against a vector that holds either the value or an error.
fn same_outcome(what: &str, got: Result<String, JavaError>, want: &Value) -> Check {
    match (got, want.get("error")) {
        (Err(e), Some(_)) => same_error(what, &e, want),
        (Err(e), None) => Err(format!("{what}: refused ({e}), TPF answers {want}")),
        (Ok(v), Some(_)) => Err(format!("{what}: answered {v:?}, TPF throws {want}")),
        (Ok(v), None) => same(what, Some(v.as_str()), want.as_str()),
    }
}
