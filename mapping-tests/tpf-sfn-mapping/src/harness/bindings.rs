//! The Task handler that connects compiled drivers to the TPF model: action calls over each
//! binding (with injected transport faults), the wakeup table, and the queue relay.

use serde_json::{json, Value};

use tpf_sfn_wakeup::relay::{self, Answer, Reply, Unreachable};

use super::faults::{Fault, FaultState};
use super::trace::Entry;
use super::wakeup::WakeupTable;
use asl_interp::handler::{Callback, Deferred, TaskCall, TaskHandler, TaskOutcome};
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;
use tpf_sfn_wakeup::bridge::TokenRow;
use tpf_wire::action::{await_field, field, ActionError, ProcessWorkItemRequest, SweepOnceRequest};

/// Trace entries one task invocation produced, to be placed after its `TaskStarted` event.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub execution_arn: String,
    pub state_name: String,
    pub entries: Vec<Entry>,
}

/// A one-shot test hook: complete the await in the window between TPF parking the execution
/// and the driver registering its wakeup token (the early-completion race).
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub complete_before_park: Option<String>,
    /// Another TPF worker claims the execution's lease just before the driver's first call and
    /// dies holding it: the driver finds the lease taken until it expires.
    pub lease_taken_first: bool,
}

pub struct Bindings<'a> {
    pub host: &'a mut ActionHost<InMemoryStore>,
    pub wakeup: &'a mut WakeupTable,
    pub faults: &'a mut FaultState,
    pub calls: &'a mut Vec<CallRecord>,
    pub tokens: &'a mut Vec<TokenRow>,
    pub hooks: &'a mut Hooks,
    pub deferred: Vec<Deferred>,
}

/// The lease owner of the claimant that takes the lease and dies.
const LEASE_ELSEWHERE: &str = "worker-elsewhere";

/// Which action a Task calls, read from its effective input, whatever the binding.
struct ActionRequest {
    action: String,
    tenant_id: Option<String>,
    execution_id: Option<String>,
    request: Value,
}

fn http_request(input: &Value) -> Option<ActionRequest> {
    let endpoint = input.get("ApiEndpoint")?.as_str()?;
    let path = endpoint.split("/tpf/actions/v1/").nth(1)?;
    let parts: Vec<&str> = path.split('/').collect();
    let request = input.get("RequestBody").cloned().unwrap_or(Value::Null);
    match parts.as_slice() {
        ["tenants", t, "executions", e, action] => Some(ActionRequest {
            action: (*action).to_string(),
            tenant_id: Some((*t).to_string()),
            execution_id: Some((*e).to_string()),
            request,
        }),
        [action] => Some(ActionRequest {
            action: (*action).to_string(),
            tenant_id: None,
            execution_id: None,
            request,
        }),
        _ => None,
    }
}

fn envelope_request(body: &Value) -> Option<ActionRequest> {
    Some(ActionRequest {
        action: body.get("action")?.as_str()?.to_string(),
        tenant_id: body
            .get("tenantId")
            .and_then(Value::as_str)
            .map(str::to_string),
        execution_id: body
            .get("executionId")
            .and_then(Value::as_str)
            .map(str::to_string),
        request: body.get("request").cloned().unwrap_or(Value::Null),
    })
}

/// One delivery of process-work-item to TPF, whatever engine made it. Missing identity fields
/// are sent as empty strings: TPF compares the identity, so a driver that drops it is rejected
/// like any mismatch.
pub(crate) fn process_work_item(
    host: &mut ActionHost<InMemoryStore>,
    hooks: &mut Hooks,
    tenant: &str,
    exec: &str,
    mut body: Value,
    now_ms: i64,
) -> Result<Value, ActionError> {
    if let Some(obj) = body.as_object_mut() {
        for k in ["pipelineId", "contractVersion", "releaseVersion"] {
            obj.entry(k).or_insert(json!(""));
        }
    }
    let parsed: ProcessWorkItemRequest = serde_json::from_value(body)
        .map_err(|e| ActionError::Transport(format!("bad process-work-item request: {e}")))?;
    let response = host.process_work_item(tenant, exec, &parsed, now_ms)?;
    let value = response.to_json();
    maybe_complete_before_park(host, hooks, tenant, exec, &value, now_ms);
    Ok(value)
}

/// The `complete_before_park` hook: the await completes right after TPF parks the execution,
/// before the driver can register its wakeup.
fn maybe_complete_before_park(
    host: &mut ActionHost<InMemoryStore>,
    hooks: &mut Hooks,
    tenant: &str,
    exec: &str,
    response: &Value,
    now_ms: i64,
) {
    let Some(step) = hooks.complete_before_park.clone() else {
        return;
    };
    if response[field::STATUS] == "WAITING_EXTERNAL"
        && response[field::AWAIT][await_field::STEP_NAME] == step.as_str()
    {
        hooks.complete_before_park = None;
        let _ = super::actors::complete_await(host, tenant, exec, now_ms, "early");
    }
}

/// The `lease_taken_first` hook: before the driver's first process-work-item call reaches
/// TPF, another worker claims the lease (and never commits). Its trace entries come first.
pub(crate) fn take_lease_first(
    host: &mut ActionHost<InMemoryStore>,
    hooks: &mut Hooks,
    tenant: &str,
    exec: &str,
    now_ms: i64,
) -> Vec<Entry> {
    if !std::mem::take(&mut hooks.lease_taken_first) {
        return Vec::new();
    }
    let before = host.coordinator().log().transitions().len();
    let claimed = host
        .coordinator_mut()
        .claim_lease_as(tenant, exec, LEASE_ELSEWHERE, now_ms);
    let what = match claimed {
        Ok(Some(_)) => {
            format!("{LEASE_ELSEWHERE} claims the lease of {exec} and dies holding it")
        }
        Ok(None) => format!("{LEASE_ELSEWHERE} finds {exec} not claimable"),
        Err(e) => format!("{LEASE_ELSEWHERE} cannot claim {exec}: {e}"),
    };
    let mut out = vec![Entry::Actor {
        at_ms: now_ms,
        what,
    }];
    out.extend(super::actors::records_since(host, before));
    out
}

impl Bindings<'_> {
    fn log_len(&self) -> usize {
        self.host.coordinator().log().transitions().len()
    }

    fn records_since(&self, from: usize) -> Vec<Entry> {
        super::actors::records_since(self.host, from)
    }

    /// Calls TPF once.
    fn deliver(&mut self, req: &ActionRequest, now_ms: i64) -> Result<Value, ActionError> {
        match req.action.as_str() {
            "process-work-item" => process_work_item(
                self.host,
                self.hooks,
                req.tenant_id.as_deref().unwrap_or_default(),
                req.execution_id.as_deref().unwrap_or_default(),
                req.request.clone(),
                now_ms,
            ),
            "sweep-once" => {
                let parsed: SweepOnceRequest = serde_json::from_value(req.request.clone())
                    .map_err(|e| ActionError::Transport(format!("bad sweep-once request: {e}")))?;
                Ok(self.host.sweep_once(&parsed, now_ms)?.to_json())
            }
            other => Err(ActionError::Transport(format!("unknown action {other}"))),
        }
    }

    fn action_call(
        &mut self,
        call: &TaskCall<'_>,
        binding: &str,
        req: ActionRequest,
    ) -> TaskOutcome {
        let key = req
            .request
            .get("idempotencyKey")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut entries = self.take_lease_first(call, &req);
        let fault = self.faults.next(&format!("{}|{key}", req.action));
        let before = self.log_len();
        let mut answered: Option<Value> = None;
        let (outcome, shown) = match fault {
            Some(Fault::Unavailable) => (
                self.transport_failure(call, binding),
                "unavailable".to_string(),
            ),
            Some(Fault::LostReply) => {
                let applied = self.deliver(&req, call.now_ms);
                let shown = summary(&applied);
                if binding == "queue" {
                    // The relay applied the call but its answer never arrives: the task's
                    // TimeoutSeconds fires, and the driver retries with the same key.
                    (
                        TaskOutcome::Succeeded(json!({"MessageId": "lost-reply"})),
                        shown,
                    )
                } else {
                    (
                        TaskOutcome::failed("States.Timeout", "the action's reply was lost"),
                        shown,
                    )
                }
            }
            Some(Fault::Duplicate) => {
                let first = self.deliver(&req, call.now_ms);
                let second = self.deliver(&req, call.now_ms);
                let shown = format!("{} / {}", summary(&first), summary(&second));
                answered = second.as_ref().ok().cloned();
                if binding == "queue" {
                    self.answer_later(call, &first);
                }
                (self.answer(call, binding, second), shown)
            }
            None => {
                let result = self.deliver(&req, call.now_ms);
                let shown = summary(&result);
                answered = result.as_ref().ok().cloned();
                (self.answer(call, binding, result), shown)
            }
        };
        let identity = ["pipelineId", "contractVersion", "releaseVersion"].map(|k| {
            req.request
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        });
        entries.push(Entry::Call {
            at_ms: call.now_ms,
            execution: call.execution_name.to_string(),
            action: req.action.clone(),
            key: if key.is_empty() { None } else { Some(key) },
            identity: Some(identity),
            status: answered
                .as_ref()
                .and_then(|v| v.get(field::STATUS))
                .and_then(Value::as_str)
                .map(str::to_string),
            next_due_ms: answered
                .as_ref()
                .and_then(|v| v.get(field::NEXT_DUE_AT))
                .and_then(Value::as_str)
                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                .map(|t| t.timestamp_millis()),
            wake_in_s: answered
                .as_ref()
                .and_then(|v| v.get(field::AWAIT)?.get(await_field::WAKE_IN_SECONDS))
                .and_then(Value::as_i64),
            outcome: shown,
            fault: fault.map(|f| format!("{f:?}").to_lowercase()),
        });
        entries.extend(self.records_since(before));
        self.calls.push(CallRecord {
            execution_arn: call.execution_arn.to_string(),
            state_name: call.state_name.to_string(),
            entries,
        });
        outcome
    }

    fn take_lease_first(&mut self, call: &TaskCall<'_>, req: &ActionRequest) -> Vec<Entry> {
        if req.action != "process-work-item" {
            return Vec::new();
        }
        take_lease_first(
            self.host,
            self.hooks,
            req.tenant_id.as_deref().unwrap_or_default(),
            req.execution_id.as_deref().unwrap_or_default(),
            call.now_ms,
        )
    }

    fn transport_failure(&mut self, call: &TaskCall<'_>, binding: &str) -> TaskOutcome {
        match binding {
            "http" => TaskOutcome::failed("States.Http.StatusCode.503", "Service Unavailable"),
            "lambda" => TaskOutcome::failed(
                "Lambda.ServiceException",
                "Lambda was unable to run the function",
            ),
            _ => {
                self.relay_answer(
                    call,
                    Err(Unreachable("the relay could not reach TPF".to_string())),
                );
                TaskOutcome::Succeeded(json!({"MessageId": "relay"}))
            }
        }
    }

    fn answer(
        &mut self,
        call: &TaskCall<'_>,
        binding: &str,
        result: Result<Value, ActionError>,
    ) -> TaskOutcome {
        match (binding, result) {
            ("http", Ok(body)) => TaskOutcome::Succeeded(object([
                ("StatusCode", json!(200)),
                ("StatusText", json!("OK")),
                ("Headers", json!({})),
                ("ResponseBody", body),
            ])),
            ("http", Err(e)) => TaskOutcome::failed(
                format!("States.Http.StatusCode.{}", e.http_status()),
                e.body().to_string(),
            ),
            ("lambda", Ok(body)) => TaskOutcome::Succeeded(object([
                ("StatusCode", json!(200)),
                ("ExecutedVersion", json!("$LATEST")),
                ("Payload", body),
            ])),
            ("lambda", Err(e)) => TaskOutcome::failed(e.error_type(), e.body().to_string()),
            (_, result) => {
                self.answer_later(call, &result);
                TaskOutcome::Succeeded(json!({"MessageId": "relay"}))
            }
        }
    }

    /// The queue relay answers through the task token, with the real relay's decision.
    fn answer_later(&mut self, call: &TaskCall<'_>, result: &Result<Value, ActionError>) {
        let reply = match result {
            Ok(body) => Reply {
                status: 200,
                body: body.to_string(),
            },
            Err(e) => Reply {
                status: e.http_status(),
                body: e.body().to_string(),
            },
        };
        self.relay_answer(call, Ok(reply));
    }

    fn relay_answer(&mut self, call: &TaskCall<'_>, reply: Result<Reply, Unreachable>) {
        let token = call.token.to_string();
        let callback = match relay::answer(reply) {
            Answer::Success { output } => Callback::Success {
                token,
                output: serde_json::from_str(&output).unwrap_or(Value::Null),
            },
            Answer::Failure { error, cause } => Callback::Failure {
                token,
                error,
                cause,
            },
        };
        self.deferred.push(Deferred {
            at_ms: call.now_ms,
            callback,
        });
    }
}

/// A JSON object of owned members, in order: `json!` would serialise a `Value` member again,
/// member by member, which cost several times a move on every action call's answer.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

pub(crate) fn summary(result: &Result<Value, ActionError>) -> String {
    match result {
        Ok(v) if v.get(field::STATUS).is_some() => {
            let mut s = format!(
                "{} v{}",
                v[field::STATUS].as_str().unwrap_or("?"),
                v[field::VERSION]
            );
            if v[field::CLAIMED] == true {
                s.push_str(" claimed");
            }
            if let Some(n) = v[field::AWAIT][await_field::STEP_NAME].as_str() {
                s.push_str(&format!(" await \"{n}\""));
            }
            if let Some(c) = v[field::ERROR_CODE].as_str() {
                s.push_str(&format!(" error {c}"));
            }
            s
        }
        Ok(v) => format!(
            "{} due, {} timed out",
            v[field::DUE].as_array().map_or(0, Vec::len),
            v[field::TIMED_OUT_AWAITS].as_array().map_or(0, Vec::len)
        ),
        Err(e) => format!("{} {}", e.http_status(), e.code()),
    }
}

impl TaskHandler for Bindings<'_> {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        let input = call.input;
        match call.resource {
            "arn:aws:states:::http:invoke" => match http_request(input) {
                Some(req) => self.action_call(call, "http", req),
                None => TaskOutcome::failed("States.Http.StatusCode.404", "no such action path"),
            },
            "arn:aws:states:::lambda:invoke" => {
                match input.get("Payload").and_then(envelope_request) {
                    Some(req) => self.action_call(call, "lambda", req),
                    None => TaskOutcome::failed("TPF.BadRequest", "payload names no action"),
                }
            }
            "arn:aws:states:::sqs:sendMessage.waitForTaskToken" => {
                match input.get("MessageBody").and_then(envelope_request) {
                    Some(req) => self.action_call(call, "queue", req),
                    None => TaskOutcome::failed("TPF.BadRequest", "message names no action"),
                }
            }
            "arn:aws:states:::dynamodb:putItem" | "arn:aws:states:::aws-sdk:dynamodb:putItem" => {
                self.wakeup.put(input.get("Item").unwrap_or(&Value::Null));
                TaskOutcome::Succeeded(json!({}))
            }
            "arn:aws:states:::aws-sdk:dynamodb:putItem.waitForTaskToken" => {
                if self.faults.next_registration_fails() {
                    return TaskOutcome::failed(
                        "DynamoDb.ResourceNotFoundException",
                        "Requested resource not found (injected fault)",
                    );
                }
                if let Some((pk, _)) = self.wakeup.put(input.get("Item").unwrap_or(&Value::Null)) {
                    let (tenant, exec) = pk.split_once('#').unwrap_or((pk.as_str(), ""));
                    if let Some(row) = self.wakeup.token(tenant, exec) {
                        self.tokens.push(row);
                    }
                }
                TaskOutcome::Succeeded(json!({}))
            }
            "arn:aws:states:::dynamodb:getItem" | "arn:aws:states:::aws-sdk:dynamodb:getItem" => {
                TaskOutcome::Succeeded(self.wakeup.get(input.get("Key").unwrap_or(&Value::Null)))
            }
            other => TaskOutcome::failed(
                "States.TaskFailed",
                format!("no binding for resource {other}"),
            ),
        }
    }

    fn deferred(&mut self) -> Vec<Deferred> {
        std::mem::take(&mut self.deferred)
    }
}
