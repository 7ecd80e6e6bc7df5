//! Amazon States Language: the typed model, parsing with coded diagnostics, and canonical
//! serialisation.

pub mod model;

pub use model::*;

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
    serde_path_to_error::deserialize::<_, StateMachine>(value).map_err(|e| {
        let pointer = path_to_pointer(e.path());
        Diagnostic::error(
            "ASL_SCHEMA",
            Location::pointer(file, pointer),
            format!("not a valid state machine definition: {}", e.inner()),
        )
        .with_hint("every state needs a known \"Type\" and the fields that type requires (see the States Language spec)")
    })
}

/// Renders a `serde_path_to_error` path as an RFC 6901 JSON pointer.
pub fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut tokens = Vec::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => tokens.push(index.to_string()),
            Segment::Map { key } => tokens.push(key.clone()),
            Segment::Enum { variant } => tokens.push(variant.clone()),
            Segment::Unknown => tokens.push("?".to_string()),
        }
    }
    crate::diagnostic::pointer(tokens)
}

/// The canonical text of a definition: pretty-printed with two-space indents, keys in model
/// order, and a trailing newline. Hashes, snapshots and `--check` all compare this text.
pub fn to_canonical_json(machine: &StateMachine) -> String {
    // Serialising a model made only of strings, numbers, maps and vectors cannot fail.
    let mut text = serde_json::to_string_pretty(machine).unwrap_or_default();
    text.push('\n');
    text
}
