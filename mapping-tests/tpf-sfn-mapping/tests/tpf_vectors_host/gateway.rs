//! `action-gateway`: TPF's request and response bytes, the gateway's reading of request
//! documents, TPF's caller's reading of responses, the factories' refusals, and the dispatch of
//! each operation against a control plane and binding table that answer from the case's
//! `planeAnswers` and record what the gateway asked them.

use std::cell::RefCell;
use std::path::Path;

use serde_json::{json, Value};
use tpf_model::gateway::{
    Accepted, AwaitSemanticCheckpoint, BindingStore, ControlPlane, Delivery, Gateway, RedriveCall,
    RequestedRelease,
};
use tpf_wire::gateway::binding::{CallbackBinding, CallbackRegistration, ProviderFields};
use tpf_wire::gateway::response::{caller_failure, FUNCTION_ERROR_UNHANDLED};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, DriverCheckpoint, ExecutionCheckpoint, FunctionError, Operation,
    ProviderCallback,
};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{AwaitInteractionStatus, ExecutionStatus};

use super::super::{same, str_of, Check, Runner};
use super::same_error;

pub fn runners() -> Vec<Runner<'static>> {
    vec![
        Runner::new(
            "action-gateway",
            Some("roundTrip"),
            &[
                "requestJson",
                "serverReadsRequestEqual",
                "responseJson",
                "clientReadsResponse",
                "controlPlaneCalls",
                "registeredBinding",
                "boundBinding",
                "serverError",
                "clientError",
            ],
            &round_trip_case,
        ),
        Runner::new(
            "action-gateway",
            Some("requestDocument"),
            &[
                "accepted",
                "normalizedJson",
                "dispatch",
                "error",
                "errorClass",
                "rootCause",
            ],
            &request_document_case,
        ),
        Runner::new(
            "action-gateway",
            Some("responseDocument"),
            &["accepted", "error", "errorClass", "rootCause"],
            &response_document_case,
        ),
        Runner::new(
            "action-gateway",
            Some("factory"),
            &["error", "errorClass"],
            &factory_case,
        ),
    ]
}

/// The release the vectors' harness answers await checkpoints with (TPF's control plane takes
/// it from the parent execution).
const PIPELINE: &str = "org.pipelineframework.restaurantapproval";
const CONTRACT: &str = "sha256:3f1c5e0a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e";
const RELEASE: &str = "2026.12.1";
/// The clock the dispatch runs at; a recorded `sweepOnce(now)` shows it as `<now>`.
const NOW: i64 = 1_796_020_800_000;

/// The harness's representative answers when a case has none of its own (request documents).
fn default_answers() -> Value {
    json!({
        "executePipelineAsync": {"executionId": "exec-0001", "duplicate": false},
        "executionStatus": "RUNNING",
        "resultPayload": null,
        "redriveStatus": "QUEUED",
        "awaitCheckpoints": [],
        "registrationCreated": true,
        "existingRegistrationGeneration": 1,
        "bindingCreated": true,
    })
}

/// A control plane that answers from `planeAnswers` and records every call as the vectors
/// list them (`[method, args…]`).
struct RecordingPlane {
    answers: Value,
    calls: Vec<Value>,
}

fn status(text: Option<&str>) -> Result<ExecutionStatus, JavaError> {
    text.and_then(ExecutionStatus::parse)
        .ok_or_else(|| JavaError::illegal_state(format!("no status answer {text:?}")))
}

impl RecordingPlane {
    fn execution_id(&self) -> String {
        str_of(&self.answers["executePipelineAsync"], "executionId")
            .unwrap_or_default()
            .to_owned()
    }

    /// `{interactionId, status, stepId}` → the harness's checkpoint: correlation
    /// `corr-<interaction>`, unit `unit-<interaction>`, the parent's release.
    fn checkpoints(&self, tenant_id: &str) -> Vec<AwaitSemanticCheckpoint> {
        let execution_id = self.execution_id();
        self.answers["awaitCheckpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| {
                let interaction = str_of(a, "interactionId")?;
                Some(AwaitSemanticCheckpoint {
                    tenant_id: tenant_id.to_owned(),
                    execution_id: execution_id.clone(),
                    interaction_id: interaction.to_owned(),
                    correlation_id: format!("corr-{interaction}"),
                    unit_id: format!("unit-{interaction}"),
                    step_id: str_of(a, "stepId")?.to_owned(),
                    status: AwaitInteractionStatus::parse(str_of(a, "status")?)?,
                    pipeline_id: PIPELINE.to_owned(),
                    contract_version: CONTRACT.to_owned(),
                    release_version: RELEASE.to_owned(),
                })
            })
            .collect()
    }
}

impl ControlPlane for RecordingPlane {
    fn execute_pipeline_async(
        &mut self,
        input_json: &str,
        tenant_id: &str,
        idempotency_key: &str,
        output_streaming: bool,
        release: RequestedRelease<'_>,
        _: i64,
    ) -> Result<Accepted, JavaError> {
        self.calls.push(json!([
            "executePipelineAsync",
            input_json,
            tenant_id,
            idempotency_key,
            output_streaming,
            release.pipeline_id,
            release.contract_version,
            release.release_version
        ]));
        let a = &self.answers["executePipelineAsync"];
        Ok(Accepted {
            execution_id: self.execution_id(),
            duplicate: a["duplicate"].as_bool().unwrap_or(false),
        })
    }

    fn get_execution_status(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        _: i64,
    ) -> Result<ExecutionStatus, JavaError> {
        self.calls
            .push(json!(["getExecutionStatus", tenant_id, execution_id]));
        status(str_of(&self.answers, "executionStatus"))
    }

    fn get_execution_result_payload(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        _: i64,
    ) -> Result<Value, JavaError> {
        self.calls.push(json!([
            "getExecutionResultPayload",
            tenant_id,
            execution_id
        ]));
        Ok(self.answers["resultPayload"].clone())
    }

    fn redrive_execution(
        &mut self,
        call: &RedriveCall<'_>,
        _: i64,
    ) -> Result<ExecutionStatus, JavaError> {
        self.calls.push(json!([
            "redriveExecution",
            call.tenant_id,
            call.execution_id,
            call.expected_version,
            call.allow_failed,
            call.reason
        ]));
        status(str_of(&self.answers, "redriveStatus"))
    }

    fn sweep_once(&mut self, now_epoch_ms: i64) -> Result<(), JavaError> {
        let now = if now_epoch_ms == NOW {
            json!("<now>")
        } else {
            json!(now_epoch_ms)
        };
        self.calls.push(json!(["sweepOnce", now]));
        Ok(())
    }

    fn get_await_semantic_checkpoints(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        limit: usize,
        _: i64,
    ) -> Result<Vec<AwaitSemanticCheckpoint>, JavaError> {
        self.calls.push(json!([
            "getAwaitSemanticCheckpoints",
            tenant_id,
            execution_id,
            limit
        ]));
        Ok(self.checkpoints(tenant_id))
    }

    fn get_await_semantic_checkpoint(
        &mut self,
        tenant_id: &str,
        interaction_id: &str,
        _: i64,
    ) -> Result<Option<AwaitSemanticCheckpoint>, JavaError> {
        self.calls.push(json!([
            "getAwaitSemanticCheckpoint",
            tenant_id,
            interaction_id
        ]));
        Ok(self
            .checkpoints(tenant_id)
            .into_iter()
            .find(|c| c.interaction_id == interaction_id))
    }
}

/// A binding table that answers from `planeAnswers` and records the writes' keys.
struct RecordingBindings {
    answers: Value,
    /// A cell: the table's reads take `&self`.
    calls: RefCell<Vec<Value>>,
    registered: Option<CallbackRegistration>,
    bound: Option<CallbackBinding>,
}

impl BindingStore for RecordingBindings {
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError> {
        self.calls.borrow_mut().push(json!([
            "bindings.register",
            registration.partition_key(),
            registration.sort_key()
        ]));
        self.registered = Some(registration.clone());
        Ok(self.answers["registrationCreated"]
            .as_bool()
            .unwrap_or(false))
    }

    fn find_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        self.calls.borrow_mut().push(json!([
            "bindings.findRegistration",
            tenant_id,
            execution_id,
            generation
        ]));
        if self.answers["existingRegistrationGeneration"].as_i64() != Some(generation) {
            return Ok(None);
        }
        let execution = ExecutionCheckpoint::new(
            Some(tenant_id),
            Some(execution_id),
            Some(PIPELINE),
            Some(CONTRACT),
            Some(RELEASE),
        )?;
        Ok(Some(CallbackRegistration::new(
            DriverCheckpoint::new(execution, generation)?,
            ProviderFields::new(Some("tpf-registered"), Some("arn"), Some("callback"))?,
            NOW,
            CallbackRegistration::expiry_after(NOW, 60),
        )?))
    }

    fn find_latest_registration(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        Ok(None)
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        self.calls.borrow_mut().push(json!([
            "bindings.bind",
            binding.partition_key(),
            binding.sort_key()
        ]));
        self.bound = Some(binding.clone());
        Ok(self.answers["bindingCreated"].as_bool().unwrap_or(false))
    }

    fn find_binding(&self, _: &str, _: &str, _: i64) -> Result<Option<CallbackBinding>, JavaError> {
        Ok(None)
    }

    fn find_latest_binding(&self, _: &str, _: &str) -> Result<Option<CallbackBinding>, JavaError> {
        Ok(None)
    }

    fn delivered(&self, _: &CallbackBinding) -> Result<bool, JavaError> {
        Ok(false)
    }

    fn record_delivered(&mut self, _: &CallbackBinding, _: Delivery) -> Result<(), JavaError> {
        Ok(())
    }
}

/// One dispatch against the recording plane and table; the calls in order.
fn dispatch(
    request: &ActionRequest,
    answers: &Value,
) -> (
    Result<ActionResponse, JavaError>,
    Vec<Value>,
    RecordingBindings,
) {
    let mut gateway = Gateway::new(
        RecordingPlane {
            answers: answers.clone(),
            calls: Vec::new(),
        },
        RecordingBindings {
            answers: answers.clone(),
            calls: RefCell::new(Vec::new()),
            registered: None,
            bound: None,
        },
    );
    let answer = gateway.dispatch(request, NOW);
    let mut calls = gateway.plane.calls;
    calls.append(gateway.bindings.calls.get_mut());
    (answer, calls, gateway.bindings)
}

/// The request TPF's factory for the operation builds from the request's own fields: the
/// project's factories must write TPF's exact bytes.
fn rebuilt(request: &ActionRequest) -> Result<ActionRequest, JavaError> {
    let r = request;
    let checkpoint = || {
        DriverCheckpoint::new(
            ExecutionCheckpoint::new(
                Some(&r.tenant_id),
                r.execution_id.as_deref(),
                r.pipeline_id.as_deref(),
                r.contract_version.as_deref(),
                r.release_version.as_deref(),
            )?,
            r.generation,
        )
    };
    let provider = ProviderCallback {
        execution_name: r.provider_execution_name.as_deref(),
        execution_arn: r.provider_execution_arn.as_deref(),
        callback_id: r.provider_callback_id.as_deref(),
    };
    let identity = || {
        r.await_identity
            .as_ref()
            .ok_or_else(|| JavaError::null_pointer("awaitIdentity"))
    };
    match r.operation {
        Operation::Submit => ActionRequest::submit(&ExecutionInput::new(
            Some(&r.tenant_id),
            r.idempotency_key.as_deref(),
            ReleaseIdentity {
                pipeline_id: r.pipeline_id.as_deref(),
                contract_version: r.contract_version.as_deref(),
                release_version: r.release_version.as_deref(),
            },
            r.input_json.as_deref(),
            None,
            r.generation,
        )?),
        Operation::Redrive => ActionRequest::redrive(
            &checkpoint()?,
            r.expected_version.unwrap_or(-1),
            r.reason.as_deref(),
        ),
        Operation::ReadAwaitCheckpoint => ActionRequest::await_checkpoint(identity()?),
        Operation::RegisterCallback => ActionRequest::register(&checkpoint()?, provider),
        Operation::BindCallback => ActionRequest::bind(identity()?, provider),
        op => ActionRequest::for_execution(op, &checkpoint()?),
    }
}

fn round_trip_case(_: &Path, case: &Value) -> Check {
    let (input, expected) = (&case["input"], &case["expected"]);
    let request_json = str_of(expected, "requestJson").ok_or("no requestJson")?;
    // The gateway reads TPF's caller's bytes back to the same request.
    let request = ActionRequest::read(request_json).map_err(|e| format!("refused: {e}"))?;
    same(
        "operation",
        Some(request.operation.as_str()),
        str_of(input, "operation"),
    )?;
    same(
        "serverReadsRequestEqual",
        Some(request.to_json() == request_json),
        expected["serverReadsRequestEqual"].as_bool(),
    )?;
    let factory = rebuilt(&request).map_err(|e| format!("TPF's factory refuses: {e}"))?;
    same(
        "requestJson (factory)",
        factory.to_json().as_str(),
        request_json,
    )?;

    let (answer, calls, bindings) = dispatch(&request, &input["planeAnswers"]);
    same(
        "controlPlaneCalls",
        Value::from(calls),
        expected["controlPlaneCalls"].clone(),
    )?;
    let response_json = str_of(expected, "responseJson").ok_or("no responseJson")?;
    match answer {
        Ok(response) => {
            same("responseJson", response.to_json().as_str(), response_json)?;
            let read = ActionResponse::read(response_json)
                .map_err(|e| format!("TPF's caller refuses the response: {e}"))?;
            same("client reads what was sent", &read, &response)?;
            same(
                "clientReadsResponse",
                json!({
                    "ok": true,
                    "executionStatus": read.execution_status,
                    "duplicate": read.duplicate,
                    "bindingCreated": read.binding_created,
                    "awaitCheckpoints": read.await_checkpoints.len(),
                }),
                expected["clientReadsResponse"].clone(),
            )?;
        }
        Err(e) => {
            same_error("serverError", &e, &expected["serverError"])?;
            same(
                "responseJson (function error)",
                FunctionError::from(&e).to_json().as_str(),
                response_json,
            )?;
            same_error(
                "clientError",
                &caller_failure(FUNCTION_ERROR_UNHANDLED),
                &expected["clientError"],
            )?;
        }
    }
    if let Some(want) = expected.get("registeredBinding") {
        let r = bindings.registered.as_ref().ok_or("nothing registered")?;
        same(
            "registeredBinding",
            json!({"partitionKey": r.partition_key(), "sortKey": r.sort_key()}),
            want.clone(),
        )?;
    }
    if let Some(want) = expected.get("boundBinding") {
        let b = bindings.bound.as_ref().ok_or("nothing bound")?;
        same(
            "boundBinding",
            json!({"partitionKey": b.partition_key(), "sortKey": b.sort_key(), "status": b.status.as_str()}),
            want.clone(),
        )?;
    }
    Ok(())
}

fn request_document_case(_: &Path, case: &Value) -> Check {
    let expected = &case["expected"];
    let text = str_of(&case["input"], "requestJson").ok_or("no requestJson")?;
    let read = ActionRequest::read(text);
    same(
        "accepted",
        Some(read.is_ok()),
        expected["accepted"].as_bool(),
    )?;
    let request = match read {
        Err(e) => return same_error("request", &e, expected),
        Ok(r) => r,
    };
    same(
        "normalizedJson",
        Some(request.to_json().as_str()),
        str_of(expected, "normalizedJson"),
    )?;
    let want = &expected["dispatch"];
    match dispatch(&request, &default_answers()).0 {
        Ok(response) if want["ok"] == true => same(
            "dispatch",
            Some(response.to_json().as_str()),
            str_of(want, "responseJson"),
        ),
        Err(e) if want.get("error").is_some() => same_error("dispatch", &e, want),
        got => Err(format!("dispatch: got {got:?}, TPF {want}")),
    }
}

fn response_document_case(_: &Path, case: &Value) -> Check {
    let expected = &case["expected"];
    let text = str_of(&case["input"], "responseJson").ok_or("no responseJson")?;
    let read = ActionResponse::read(text);
    same(
        "accepted",
        Some(read.is_ok()),
        expected["accepted"].as_bool(),
    )?;
    match read {
        Err(e) => same_error("response", &e, expected),
        Ok(_) => Ok(()),
    }
}

/// The factories TPF's vectors call, by case id.
fn factory_case(_: &Path, case: &Value) -> Check {
    let execution = ExecutionCheckpoint::new(
        Some("tenant-a"),
        Some("exec-0001"),
        Some(PIPELINE),
        Some(CONTRACT),
        Some(RELEASE),
    )
    .map_err(|e| e.to_string())?;
    let got = match str_of(case, "id") {
        Some("factory-redrive-negative-version") => {
            let checkpoint = DriverCheckpoint::new(execution, 1).map_err(|e| e.to_string())?;
            ActionRequest::redrive(&checkpoint, -1, Some("retry")).map(|_| ())
        }
        Some("factory-generation-zero") => DriverCheckpoint::new(execution, 0).map(|_| ()),
        other => return Err(format!("no factory call for case {other:?}")),
    };
    match got {
        Err(e) => same_error("factory", &e, &case["expected"]),
        Ok(()) => Err(format!("accepted; TPF throws {}", case["expected"])),
    }
}
