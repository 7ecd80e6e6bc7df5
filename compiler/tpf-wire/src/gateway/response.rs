//! `AwsDurableActionResponse`: always the same eight keys in TPF's order, empty optionals as
//! `null`, `awaitCheckpoints` an array (never null). A failed operation is no response at all:
//! Lambda answers with a function error ([`FunctionError`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{bind, instantiation, mismatched, parse, Kind, Mapper};
use super::records::{java, AwaitCheckpoint, AwaitIdentity, ExecutionCheckpoint};
use super::validation::{optional, required};
use crate::java_error::JavaError;

/// The `executionStatus` SWEEP answers (TPF's spelling).
pub const SWEEPED: &str = "SWEEPED";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ActionResponse {
    pub checkpoint: Option<ExecutionCheckpoint>,
    pub duplicate: bool,
    pub execution_status: Option<String>,
    pub result_json: Option<String>,
    pub await_identity: Option<AwaitIdentity>,
    pub await_checkpoint: Option<AwaitCheckpoint>,
    pub await_checkpoints: Vec<AwaitCheckpoint>,
    pub binding_created: bool,
}

const PROPS: &[(&str, Kind)] = &[
    ("checkpoint", Kind::Nested),
    ("duplicate", Kind::Bool),
    ("executionStatus", Kind::Text),
    ("resultJson", Kind::Text),
    ("awaitIdentity", Kind::Nested),
    ("awaitCheckpoint", Kind::Nested),
    ("awaitCheckpoints", Kind::List),
    ("bindingCreated", Kind::Bool),
];

impl ActionResponse {
    /// The all-empty response (QUERY_PENDING_AWAIT with nothing pending).
    pub fn empty() -> Self {
        Self {
            checkpoint: None,
            duplicate: false,
            execution_status: None,
            result_json: None,
            await_identity: None,
            await_checkpoint: None,
            await_checkpoints: Vec::new(),
            binding_created: false,
        }
    }

    /// `submitted(checkpoint, duplicate)`.
    pub fn submitted(checkpoint: ExecutionCheckpoint, duplicate: bool) -> Self {
        Self {
            checkpoint: Some(checkpoint),
            duplicate,
            ..Self::empty()
        }
    }

    /// `status(status)`: the status must be non-blank.
    pub fn status(status: &str) -> Result<Self, JavaError> {
        Ok(Self {
            execution_status: Some(required(Some(status), "status")?.to_owned()),
            ..Self::empty()
        })
    }

    /// `result(resultJson)`: the JSON text must be non-blank.
    pub fn result(result_json: &str) -> Result<Self, JavaError> {
        Ok(Self {
            result_json: Some(required(Some(result_json), "resultJson")?.to_owned()),
            ..Self::empty()
        })
    }

    /// `pendingAwait(identity)`.
    pub fn pending_await(identity: AwaitIdentity) -> Self {
        Self {
            await_identity: Some(identity),
            ..Self::empty()
        }
    }

    /// `awaitCheckpoint(checkpoint)`.
    pub fn await_checkpoint(checkpoint: AwaitCheckpoint) -> Self {
        Self {
            await_checkpoint: Some(checkpoint),
            ..Self::empty()
        }
    }

    /// `awaitCheckpoints(list)`.
    pub fn await_checkpoints(checkpoints: Vec<AwaitCheckpoint>) -> Self {
        Self {
            await_checkpoints: checkpoints,
            ..Self::empty()
        }
    }

    /// `bound(created)`: REGISTER_CALLBACK and BIND_CALLBACK.
    pub fn bound(created: bool) -> Self {
        Self {
            binding_created: created,
            ..Self::empty()
        }
    }

    /// The exact bytes the gateway answers.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The response as TPF's caller reads it ([`Mapper::Caller`]: exact keys, an unknown key
    /// fails, a missing `awaitCheckpoints` fails the record's `requireNonNull`).
    pub fn read(text: &str) -> Result<Self, JavaError> {
        let value = parse(text)?;
        let mapper = Mapper::Caller;
        let (mut checkpoint, mut await_identity, mut await_checkpoint) = (None, None, None);
        let mut list: Option<Vec<AwaitCheckpoint>> = None;
        let bound = bind(
            &value,
            java::ACTION_RESPONSE,
            PROPS,
            mapper,
            &mut |name, raw| {
                match name {
                    "checkpoint" => checkpoint = Some(ExecutionCheckpoint::read(raw, mapper)?),
                    "awaitIdentity" => await_identity = Some(AwaitIdentity::read(raw, mapper)?),
                    "awaitCheckpoint" => {
                        await_checkpoint = Some(AwaitCheckpoint::read(raw, mapper)?)
                    }
                    _ => {
                        let Value::Array(items) = raw else {
                            return Err(mismatched("java.util.List", raw));
                        };
                        list = Some(
                            items
                                .iter()
                                .map(|i| AwaitCheckpoint::read(i, mapper))
                                .collect::<Result<_, _>>()?,
                        );
                    }
                }
                Ok(())
            },
        )?;
        // A property written as null binds nothing.
        let keep = |name: &str| bound.raw(name).is_some();
        let checkpoint = checkpoint.filter(|_| keep("checkpoint"));
        let await_identity = await_identity.filter(|_| keep("awaitIdentity"));
        let await_checkpoint = await_checkpoint.filter(|_| keep("awaitCheckpoint"));
        let list = list.filter(|_| keep("awaitCheckpoints"));
        let execution_status = bound.text("executionStatus");
        let result_json = bound.text("resultJson");
        let build = || -> Result<Self, JavaError> {
            optional(execution_status.as_deref(), "executionStatus")?;
            optional(result_json.as_deref(), "resultJson")?;
            let await_checkpoints =
                list.ok_or_else(|| JavaError::null_pointer("awaitCheckpoints"))?;
            Ok(Self {
                checkpoint,
                duplicate: bound.boolean("duplicate"),
                execution_status,
                result_json,
                await_identity,
                await_checkpoint,
                await_checkpoints,
                binding_created: bound.boolean("bindingCreated"),
            })
        };
        build().map_err(|e| instantiation(java::ACTION_RESPONSE, e))
    }
}

/// The gateway's message for READ_AWAIT_CHECKPOINT of an interaction TPF has no checkpoint of
/// (an `IllegalStateException`): the in-process read's empty answer, as the gateway says it.
pub const AWAIT_CHECKPOINT_UNAVAILABLE: &str = "Await semantic checkpoint is not available";

/// A Lambda function error document, the gateway's answer when an operation throws: the
/// exception's message and class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionError {
    pub error_message: String,
    pub error_type: String,
}

impl From<&JavaError> for FunctionError {
    fn from(e: &JavaError) -> Self {
        Self {
            error_message: e.message.clone(),
            error_type: e.class.to_owned(),
        }
    }
}

impl FunctionError {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Lambda's `X-Amz-Function-Error` value for an exception out of the handler.
pub const FUNCTION_ERROR_UNHANDLED: &str = "Unhandled";

/// What TPF's caller throws on any function error: the `errorType` is lost.
pub fn caller_failure(function_error: &str) -> JavaError {
    JavaError::illegal_state(format!("TPF action Lambda failed: {function_error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java_error::class;

    #[test]
    fn eight_keys_in_tpf_order_and_read_back() {
        let r = ActionResponse::status("RUNNING").unwrap();
        let text = r.to_json();
        assert_eq!(
            text,
            r#"{"checkpoint":null,"duplicate":false,"executionStatus":"RUNNING","resultJson":null,"awaitIdentity":null,"awaitCheckpoint":null,"awaitCheckpoints":[],"bindingCreated":false}"#
        );
        assert_eq!(ActionResponse::read(&text).unwrap(), r);
    }

    #[test]
    fn the_caller_refuses_unknown_keys_and_a_missing_list() {
        let e = ActionResponse::read(r#"{"awaitCheckpoints":[],"extra":1}"#).unwrap_err();
        assert_eq!(e.class, class::UNRECOGNIZED_PROPERTY);
        let e = ActionResponse::read(r#"{"duplicate":true}"#).unwrap_err();
        assert_eq!(
            e.root_cause().to_string(),
            "NullPointerException: awaitCheckpoints"
        );
        let e = ActionResponse::read(r#"{"awaitCheckpoints":null}"#).unwrap_err();
        assert_eq!(e.class, class::VALUE_INSTANTIATION);
        let e =
            ActionResponse::read(r#"{"executionStatus":" ","awaitCheckpoints":[]}"#).unwrap_err();
        assert_eq!(e.root_cause().message, "executionStatus must not be blank");
    }

    #[test]
    fn status_and_result_refuse_blank_text() {
        assert_eq!(
            ActionResponse::status(" ").unwrap_err().message,
            "status must not be blank"
        );
        assert!(ActionResponse::result("").is_err());
    }

    #[test]
    fn a_function_error_keeps_class_and_message_and_the_caller_loses_them() {
        let e = JavaError::illegal_state("Await semantic checkpoint is not available");
        assert_eq!(
            FunctionError::from(&e).to_json(),
            r#"{"errorMessage":"Await semantic checkpoint is not available","errorType":"java.lang.IllegalStateException"}"#
        );
        assert_eq!(
            caller_failure(FUNCTION_ERROR_UNHANDLED).to_string(),
            "IllegalStateException: TPF action Lambda failed: Unhandled"
        );
    }
}
