//! Amazon States Language: the typed model (crate `asl-model`), and parsing it with coded
//! diagnostics.

pub use asl_model::*;

use crate::diagnostic::{json_syntax, Diagnostic, Location};

/// Parses an ASL document. Syntax errors carry line and column; shape errors carry the JSON
/// pointer of the offending field.
// A Diagnostic is the project's one error type; parsing fails once per file, so its size
// does not matter.
#[allow(clippy::result_large_err)]
pub fn parse(file: &str, bytes: &[u8]) -> Result<StateMachine, Diagnostic> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| json_syntax("ASL_JSON_SYNTAX", file, &e))?;
    from_value(file, value)
}

/// Converts an already-parsed JSON value into the typed model.
#[allow(clippy::result_large_err)]
pub fn from_value(file: &str, value: serde_json::Value) -> Result<StateMachine, Diagnostic> {
    asl_model::from_value(value).map_err(|e| {
        Diagnostic::error(
            "ASL_SCHEMA",
            Location::pointer(file, crate::diagnostic::pointer(&e.path)),
            format!("not a valid state machine definition: {}", e.message),
        )
        .with_hint("every state needs a known \"Type\" and the fields that type requires (see the States Language spec)")
    })
}
