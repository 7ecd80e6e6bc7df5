//! The gateway's readers never panic, whatever JSON they are handed, and what they accept obeys
//! TPF's record rules and writes back to itself.

use proptest::prelude::*;
use serde_json::{Map, Value};
use tpf_wire::gateway::records::AwaitIdentity;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};
use tpf_wire::java_text::is_java_blank;

/// Keys the readers know (in several spellings), so generated objects reach past unknown keys.
const KEYS: &[&str] = &[
    "operation",
    "OPERATION",
    "tenantId",
    "tenantid",
    "executionId",
    "idempotencyKey",
    "pipelineId",
    "contractVersion",
    "releaseVersion",
    "inputJson",
    "awaitIdentity",
    "interactionId",
    "correlationId",
    "providerExecutionName",
    "providerExecutionArn",
    "providerCallbackId",
    "expectedVersion",
    "reason",
    "generation",
    "checkpoint",
    "duplicate",
    "executionStatus",
    "resultJson",
    "awaitCheckpoint",
    "awaitCheckpoints",
    "bindingCreated",
    "unitId",
    "stepId",
    "status",
    "resumeExecutionId",
    "other",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop_oneof![
            Just("SUBMIT".to_owned()),
            Just("STATUS".to_owned()),
            Just("BIND_CALLBACK".to_owned()),
            Just("status".to_owned()),
            Just(" \u{2028}".to_owned()),
            Just("\u{a0}".to_owned()),
            Just("12".to_owned()),
            Just("-1".to_owned()),
            ".{0,12}",
        ]
        .prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..10).prop_map(|pairs| {
                Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// A valid STATUS request with random keys laid over it, so most cases are accepted and the
/// properties below are exercised, not skipped.
fn near_request() -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(KEYS), json()), 0..5).prop_map(|pairs| {
        let mut base: Map<String, Value> = serde_json::from_str(
            r#"{"operation":"STATUS","tenantId":"t","executionId":"e","generation":1}"#,
        )
        .unwrap_or_default();
        for (k, v) in pairs {
            base.insert(k.to_owned(), v);
        }
        Value::Object(base)
    })
}

fn identity_ok(i: &AwaitIdentity) -> bool {
    [
        &i.tenant_id,
        &i.execution_id,
        &i.interaction_id,
        &i.correlation_id,
    ]
    .iter()
    .all(|t| !is_java_blank(t))
        && i.generation >= 1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_read_request_obeys_the_record_rules_and_writes_back_to_itself(
        doc in prop_oneof![json(), near_request()]
    ) {
        let text = doc.to_string();
        if let Ok(request) = ActionRequest::read(&text) {
            prop_assert!(!is_java_blank(&request.tenant_id));
            prop_assert!(request.generation >= 1);
            let optionals = [
                &request.execution_id, &request.idempotency_key, &request.pipeline_id,
                &request.contract_version, &request.release_version, &request.input_json,
                &request.provider_execution_name, &request.provider_execution_arn,
                &request.provider_callback_id, &request.reason,
            ];
            prop_assert!(optionals.iter().all(|o| o.as_deref().is_none_or(|t| !is_java_blank(t))));
            prop_assert!(request.await_identity.as_ref().is_none_or(identity_ok));
            prop_assert_eq!(ActionRequest::read(&request.to_json()), Ok(request));
        }
    }

    #[test]
    fn responses_and_start_payloads_never_panic(doc in json()) {
        let text = doc.to_string();
        if let Ok(response) = ActionResponse::read(&text) {
            prop_assert_eq!(ActionResponse::read(&response.to_json()), Ok(response));
        }
        if let Ok(input) = ExecutionInput::read(&text) {
            prop_assert!(input.generation >= 1);
            prop_assert_eq!(ExecutionInput::read(&input.to_json()), Ok(input));
        }
    }

    #[test]
    fn any_text_is_read_without_panicking(text in ".{0,64}") {
        let _ = ActionRequest::read(&text);
        let _ = ActionResponse::read(&text);
        let _ = ExecutionInput::read(&text);
    }
}
