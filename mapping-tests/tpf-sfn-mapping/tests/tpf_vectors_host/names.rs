//! `durable-names` and `admission-key`.

use std::path::Path;

use serde_json::Value;
use tpf_wire::admission::{admission_key, AdmissionIntent, INTENT_METADATA};
use tpf_wire::gateway::names::{
    coordinator, durable_execution_name, generation_sort_key, registration_sort_key,
};
use tpf_wire::gateway::start::{
    ExecutionInput, ReleaseIdentity, StartResponse, INVOCATION_TYPE, STARTED_STATUS,
};
use tpf_wire::gateway::AwaitIdentity;

use super::super::{same, str_of, Check, Runner};
use super::same_outcome;

pub fn runners() -> Vec<Runner<'static>> {
    vec![
        Runner::new(
            "durable-names",
            Some("durableExecutionName"),
            &["durableExecutionName", "error", "errorClass"],
            &durable_name_case,
        ),
        Runner::new(
            "durable-names",
            Some("generationSortKeys"),
            &["generationSortKey", "registrationSortKey"],
            &sort_keys_case,
        ),
        Runner::new(
            "durable-names",
            Some("coordinatorOperationNames"),
            &[
                "resumeStep",
                "submitStep",
                "waitForCondition",
                "waitForCallback",
                "resultStep",
            ],
            &operation_names_case,
        ),
        Runner::new(
            "durable-names",
            Some("startDurableExecution"),
            &["invoke", "response", "durableSerdesReadsPayloadEqual"],
            &start_case,
        ),
        Runner::new(
            "admission-key",
            Some("admissionKey"),
            &["key", "error", "errorClass"],
            &admission_key_case,
        ),
        Runner::new(
            "admission-key",
            Some("intentFingerprint"),
            &["fingerprint", "error", "errorClass"],
            &fingerprint_case,
        ),
    ]
}

/// The expected value, or the expected object itself when it is an error.
fn value_or_error<'a>(expected: &'a Value, key: &str) -> &'a Value {
    if expected.get("error").is_some() {
        expected
    } else {
        &expected[key]
    }
}

fn durable_name_case(_: &Path, case: &Value) -> Check {
    let (input, expected) = (&case["input"], &case["expected"]);
    let got = durable_execution_name(
        str_of(input, "tenantId"),
        str_of(input, "idempotencyKey"),
        input["generation"].as_i64().ok_or("no generation")?,
    );
    same_outcome(
        "durableExecutionName",
        got,
        value_or_error(expected, "durableExecutionName"),
    )
}

fn sort_keys_case(_: &Path, case: &Value) -> Check {
    let generation = case["input"]["generation"]
        .as_i64()
        .ok_or("no generation")?;
    let expected = &case["expected"];
    same_outcome(
        "generationSortKey",
        generation_sort_key(generation),
        &expected["generationSortKey"],
    )?;
    same_outcome(
        "registrationSortKey",
        registration_sort_key(generation),
        &expected["registrationSortKey"],
    )
}

fn operation_names_case(_: &Path, case: &Value) -> Check {
    let n = case["input"]["awaitIndex"]
        .as_u64()
        .ok_or("no awaitIndex")?;
    let expected = &case["expected"];
    let want = |k: &str| str_of(expected, k).unwrap_or_default().to_owned();
    same(
        "resumeStep",
        coordinator::RESUME_STEP.to_owned(),
        want("resumeStep"),
    )?;
    same(
        "submitStep",
        coordinator::SUBMIT_STEP.to_owned(),
        want("submitStep"),
    )?;
    same(
        "resultStep",
        coordinator::RESULT_STEP.to_owned(),
        want("resultStep"),
    )?;
    same(
        "waitForCondition",
        coordinator::wait_for_condition(n),
        want("waitForCondition"),
    )?;
    same(
        "waitForCallback",
        coordinator::wait_for_callback(n),
        want("waitForCallback"),
    )
}

/// The starter's configuration and the release the vectors' harness starts under: inputs of
/// TPF's starter that the case's `input` does not repeat.
const FUNCTION_NAME: &str = "tpf-coordinator";
const QUALIFIER: &str = "live";
const RELEASE: ReleaseIdentity<'static> = ReleaseIdentity {
    pipeline_id: Some("org.pipelineframework.restaurantapproval"),
    contract_version: Some("sha256:abc"),
    release_version: Some("2026.12.1"),
};
const FIRST_INPUT_JSON: &str = r#"{"requestId":"9b2e"}"#;

fn start_case(_: &Path, case: &Value) -> Check {
    let (input, expected) = (&case["input"], &case["expected"]);
    let execution = match input.get("resumeFrom") {
        Some(from) => {
            let identity = AwaitIdentity::new(
                str_of(from, "tenantId"),
                str_of(from, "executionId"),
                Some("interaction"),
                Some("correlation"),
                from["generation"].as_i64().ok_or("no generation")?,
            )
            .map_err(|e| e.to_string())?;
            ExecutionInput::resume(&identity, RELEASE)
        }
        None => ExecutionInput::new(
            str_of(input, "tenantId"),
            str_of(input, "idempotencyKey"),
            RELEASE,
            Some(FIRST_INPUT_JSON),
            None,
            input["generation"].as_i64().ok_or("no generation")?,
        ),
    }
    .map_err(|e| e.to_string())?;
    let invoke = &expected["invoke"];
    let name = execution.durable_execution_name();
    let payload = execution.to_json();
    for (key, got) in [
        ("functionName", FUNCTION_NAME),
        ("qualifier", QUALIFIER),
        ("invocationType", INVOCATION_TYPE),
        ("durableExecutionName", name.as_str()),
        ("payload", payload.as_str()),
    ] {
        same(&format!("invoke.{key}"), Some(got), str_of(invoke, key))?;
    }
    let response = StartResponse {
        durable_execution_name: name,
        status_code: STARTED_STATUS,
    };
    same(
        "response",
        serde_json::to_value(&response).map_err(|e| e.to_string())?,
        expected["response"].clone(),
    )?;
    let read_back =
        ExecutionInput::read(&payload).map_err(|e| format!("payload does not read back: {e}"))?;
    same(
        "durableSerdesReadsPayloadEqual",
        Some(read_back == execution),
        expected["durableSerdesReadsPayloadEqual"].as_bool(),
    )
}

fn admission_key_case(_: &Path, case: &Value) -> Check {
    let input = &case["input"];
    let got = admission_key(
        str_of(input, "tenantId"),
        str_of(input, "pipelineId"),
        str_of(input, "clientKey"),
    );
    same_outcome("key", got, value_or_error(&case["expected"], "key"))
}

fn fingerprint_case(_: &Path, case: &Value) -> Check {
    let input = &case["input"];
    let meta = INTENT_METADATA.map(|k| str_of(input, k));
    let bytes = hex::decode(str_of(input, "inputBytesHex").ok_or("no inputBytesHex")?)
        .map_err(|e| e.to_string())?;
    let schema = input["schemaVersion"]
        .as_i64()
        .and_then(|v| i32::try_from(v).ok())
        .ok_or("no schemaVersion")?;
    let got = AdmissionIntent::new(
        schema,
        meta,
        bytes,
        input["outputStreaming"]
            .as_bool()
            .ok_or("no outputStreaming")?,
    )
    .map(|intent| intent.fingerprint());
    same_outcome(
        "fingerprint",
        got,
        value_or_error(&case["expected"], "fingerprint"),
    )
}
