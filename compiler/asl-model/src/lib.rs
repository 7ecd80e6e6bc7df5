//! Amazon States Language as types: the model (`model.rs`), reading a JSON value into it with
//! the path of what did not fit, and its canonical serialisation.
//!
//! Its own crate because two sides read it: the compiler (render → parse → validate → emit)
//! and the interpreter that runs the definitions (`asl-interp`), which needs the model and
//! nothing else of the compiler.

pub mod model;

pub use model::*;

use serde_json::Value;

/// A JSON value that is not a state machine definition: where (the path's keys and indexes,
/// outermost first) and what the model expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SchemaError {
    pub path: Vec<String>,
    pub message: String,
}

/// Converts an already-parsed JSON value into the typed model.
pub fn from_value(value: Value) -> Result<StateMachine, SchemaError> {
    serde_path_to_error::deserialize::<_, StateMachine>(value).map_err(|e| {
        use serde_path_to_error::Segment;
        let path = e
            .path()
            .iter()
            .map(|seg| match seg {
                Segment::Seq { index } => index.to_string(),
                Segment::Map { key } => key.clone(),
                Segment::Enum { variant } => variant.clone(),
                Segment::Unknown => "?".to_string(),
            })
            .collect();
        SchemaError {
            path,
            message: e.inner().to_string(),
        }
    })
}

/// The canonical text of a definition: pretty-printed with two-space indents, keys in model
/// order, and a trailing newline. Hashes, snapshots and `--check` all compare this text.
pub fn to_canonical_json(machine: &StateMachine) -> String {
    // Serialising a model made only of strings, numbers, maps and vectors cannot fail.
    let mut text = serde_json::to_string_pretty(machine).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_value_that_does_not_fit_names_the_path_to_what_did_not() {
        let err = super::from_value(json!({
            "StartAt": "A",
            "States": {"A": {"Type": "Wait", "Seconds": "soon", "End": true}}
        }))
        .expect_err("Seconds is a number");
        // A state is read by its "Type" tag, so the path ends at the state that did not fit.
        assert_eq!(err.path, ["States", "A"]);
        assert!(err.message.contains("invalid type"), "{}", err.message);
    }

    #[test]
    fn a_definition_round_trips_to_canonical_json() {
        let text = "{\n  \"StartAt\": \"A\",\n  \"States\": {\n    \"A\": {\n      \"Type\": \"Succeed\"\n    }\n  }\n}\n";
        let machine = super::from_value(serde_json::from_str(text).expect("json")).expect("valid");
        assert_eq!(super::to_canonical_json(&machine), text);
    }
}
