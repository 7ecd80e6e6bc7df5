//! The gateway driver's render context: TPF's coordinator protocol against TPF's action gateway
//! (`docs/gateway.md`, "The Step Functions driver"). Every request is the gateway's 15-key
//! document, laid out here from `tpf_wire::gateway::key` with `null` for every empty optional,
//! as TPF's caller writes it; the template only places the states.

use serde_json::{json, Map, Value};
use tpf_wire::gateway::host::{
    self, driver_error, step_retry, POLL_WAITS_SECONDS, REFUSED_LONGEST_FROM_GENERATION,
};
use tpf_wire::gateway::key::{self, checkpoint as ck, input, output, relay, request as rq};
use tpf_wire::gateway::Operation;
use tpf_wire::records::ExecutionStatus as S;

use crate::plan::{DriverPlan, GatewayPlan};
use crate::sfn::states::{fail_error, gateway as states};
use crate::sfn::SfnPlan;

/// Where the driver keeps things in its state data; the input's keys stay at the top.
mod data {
    /// TPF's checkpoint (`{checkpoint}`), from SUBMIT or from the input.
    pub const TPF: &str = "tpf";
    /// The poll loop: counter, ladder rung, whether this generation parked, the next wait.
    pub const LOOP: &str = "loop";
    pub const ITERATION: &str = "iteration";
    pub const RUNG: &str = "rung";
    pub const PARKED: &str = "parked";
    pub const SECONDS: &str = "seconds";
    /// STATUS's answer.
    pub const STATUS: &str = "status";
    /// RESULT's answer.
    pub const RESULT: &str = "result";
    /// The wake-up's callback signal.
    pub const SIGNAL: &str = "signal";
    /// The park's timeout error.
    pub const PARK_TIMEOUT: &str = "parkTimeout";
    /// The park's failure, when it hands over.
    pub const PARK_ERROR: &str = "parkError";
    /// The starter's answer for the next generation.
    pub const NEXT_GENERATION: &str = "nextGeneration";
}

/// Errors a Task sees when the call did not get through, per transport: retried as TPF's step
/// retries. A function error (TPF's exception class) is not among them: it fails the driver
/// under that name, except on SUBMIT, which TPF retries on any error.
const LAMBDA_TRANSPORT_ERRORS: [&str; 5] = [
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    STATES_TIMEOUT,
];
const QUEUE_TRANSPORT_ERRORS: [&str; 3] = [
    "SQS.SdkClientException",
    "SQS.AmazonSQSException",
    STATES_TIMEOUT,
];
const STATES_TIMEOUT: &str = "States.Timeout";

/// One retrier with TPF's step retry (6 attempts, 5 s, ×2, 60 s max, full jitter).
fn step_retrier(errors: &[&str], comment: &str) -> Value {
    json!({
        "ErrorEquals": errors,
        "IntervalSeconds": step_retry::FIRST_DELAY_SECONDS,
        "MaxAttempts": step_retry::RETRIES,
        "BackoffRate": step_retry::BACKOFF_RATE,
        "MaxDelaySeconds": step_retry::MAX_DELAY_SECONDS,
        "JitterStrategy": "FULL",
        "Comment": comment,
    })
}

const TRANSPORT_COMMENT: &str = "Transport only, retried as TPF's driver step is: the call did not reach the gateway or the gateway could not answer. TPF's exceptions arrive under their class name and fail the driver.";

fn checkpoint_path(field: &str) -> String {
    format!("$.{}.{}.{field}", data::TPF, key::response::CHECKPOINT)
}

fn loop_path(field: &str) -> String {
    format!("$.{}.{field}", data::LOOP)
}

fn input_path(field: &str) -> String {
    format!("$.{field}")
}

fn dynamic(obj: &mut Map<String, Value>, name: &str, expr: impl Into<String>) {
    obj.insert(format!("{name}.$"), Value::String(expr.into()));
}

/// A 15-key request: every key in TPF's order, `null` unless `set` gives it a path.
fn request(operation: Operation, set: &[(&str, String)]) -> Value {
    let mut body = Map::new();
    for k in rq::ALL {
        if k == rq::OPERATION {
            body.insert(k.into(), json!(operation.as_str()));
        } else if let Some((_, expr)) = set.iter().find(|(name, _)| *name == k) {
            dynamic(&mut body, k, expr.clone());
        } else {
            body.insert(k.into(), Value::Null);
        }
    }
    Value::Object(body)
}

/// `forExecution(operation, checkpoint)`: the checkpoint's five fields and the generation.
fn for_execution(operation: Operation, extra: &[(&str, String)]) -> Value {
    let mut set: Vec<(&str, String)> = ck::ALL.iter().map(|k| (*k, checkpoint_path(k))).collect();
    set.push((rq::GENERATION, input_path(input::GENERATION)));
    set.extend(extra.iter().cloned());
    request(operation, &set)
}

fn submit_request() -> Value {
    let set: Vec<(&str, String)> = [
        rq::TENANT_ID,
        rq::IDEMPOTENCY_KEY,
        rq::PIPELINE_ID,
        rq::CONTRACT_VERSION,
        rq::RELEASE_VERSION,
        rq::INPUT_JSON,
        rq::GENERATION,
    ]
    .into_iter()
    .map(|k| (k, input_path(k)))
    .collect();
    request(Operation::Submit, &set)
}

/// REGISTER_CALLBACK: the provider fields are this execution's name and ARN and its task
/// token, the callback id the wake-up answers.
fn register_request() -> Value {
    for_execution(
        Operation::RegisterCallback,
        &[
            (rq::PROVIDER_EXECUTION_NAME, "$$.Execution.Name".into()),
            (rq::PROVIDER_EXECUTION_ARN, "$$.Execution.Id".into()),
            (rq::PROVIDER_CALLBACK_ID, "$$.Task.Token".into()),
        ],
    )
}

/// The next generation's `AwsDurableExecutionInput`, as TPF's `resume` builds it: the
/// execution id as idempotency key and resume id, `{}` as input, the generation plus one.
fn next_generation_input() -> Value {
    let mut body = Map::new();
    dynamic(&mut body, input::TENANT_ID, checkpoint_path(ck::TENANT_ID));
    dynamic(
        &mut body,
        input::IDEMPOTENCY_KEY,
        checkpoint_path(ck::EXECUTION_ID),
    );
    for k in [
        input::PIPELINE_ID,
        input::CONTRACT_VERSION,
        input::RELEASE_VERSION,
    ] {
        dynamic(&mut body, k, checkpoint_path(k));
    }
    body.insert(
        input::INPUT_JSON.into(),
        json!(tpf_wire::gateway::start::RESUME_INPUT_JSON),
    );
    dynamic(
        &mut body,
        input::RESUME_EXECUTION_ID,
        checkpoint_path(ck::EXECUTION_ID),
    );
    dynamic(
        &mut body,
        input::GENERATION,
        format!("States.MathAdd({}, 1)", input_path(input::GENERATION)),
    );
    Value::Object(body)
}

/// A Task's call of the gateway over the binding's transport: `(Resource, Parameters)` and
/// where the response sits in the Task's result.
struct Transport<'a> {
    gateway: &'a GatewayPlan,
}

impl Transport<'_> {
    fn call(&self, request: Value, park: bool) -> (String, Value) {
        match &self.gateway.queue_url {
            None => {
                let resource = if park {
                    "arn:aws:states:::lambda:invoke.waitForTaskToken"
                } else {
                    "arn:aws:states:::lambda:invoke"
                };
                (
                    resource.into(),
                    json!({ "FunctionName": self.gateway.function_arn, "Payload": request }),
                )
            }
            Some(queue_url) => {
                let mut body = Map::new();
                body.insert(relay::GATEWAY_REQUEST.into(), request);
                dynamic(&mut body, relay::TASK_TOKEN, "$$.Task.Token");
                body.insert(relay::PARK.into(), json!(park));
                (
                    "arn:aws:states:::sqs:sendMessage.waitForTaskToken".into(),
                    json!({ "QueueUrl": queue_url, "MessageBody": body }),
                )
            }
        }
    }

    /// The relay answers the token with the gateway's response itself; Lambda wraps it in
    /// `Payload`.
    fn response_path(&self, field: &str) -> String {
        match self.gateway.queue_url {
            None => format!("$.Payload.{field}"),
            Some(_) => format!("$.{field}"),
        }
    }

    fn errors(&self) -> Vec<&'static str> {
        match self.gateway.queue_url {
            None => LAMBDA_TRANSPORT_ERRORS.to_vec(),
            Some(_) => QUEUE_TRANSPORT_ERRORS.to_vec(),
        }
    }

    fn gateway_call(&self, request: Value, selector: Option<Value>) -> Value {
        let (resource, parameters) = self.call(request, false);
        json!({
            "resource": resource,
            "parameters": parameters,
            "result_selector": selector,
            "retry": [step_retrier(&self.errors(), TRANSPORT_COMMENT)],
        })
    }

    /// REGISTER_CALLBACK and the park. Its timeout is the await deadline: caught, never
    /// retried. Only transport errors are retried: every attempt of a Step Functions task has a
    /// new task token, so a retry registers a second callback in the generation (TPF's durable
    /// submitter keeps its callback id across retries; Step Functions cannot), and TPF refuses
    /// it once the first one was written. A failed registration hands over instead (the Catch),
    /// after the ladder's wait at its generation (`host::refused_registration_wait_seconds`),
    /// and the next generation registers under its own key.
    fn park_call(&self) -> Value {
        let (resource, parameters) = self.call(register_request(), true);
        let mut errors = self.errors();
        errors.retain(|e| *e != STATES_TIMEOUT);
        json!({
            "resource": resource,
            "parameters": parameters,
            "result_selector": null,
            "retry": [step_retrier(&errors, TRANSPORT_COMMENT)],
        })
    }

    fn selector(&self, field: &str) -> Value {
        let mut sel = Map::new();
        dynamic(&mut sel, field, self.response_path(field));
        Value::Object(sel)
    }

    /// The starter is the wake-path stack's function, invoked directly on either transport.
    fn hand_over_call(&self) -> Value {
        use key::start_response as sr;
        let mut sel = Map::new();
        for f in [sr::DURABLE_EXECUTION_NAME, sr::STATUS_CODE] {
            dynamic(&mut sel, f, format!("$.Payload.{f}"));
        }
        json!({
            "resource": "arn:aws:states:::lambda:invoke",
            "parameters": { "FunctionName": self.gateway.starter_function_arn, "Payload": next_generation_input() },
            "result_selector": sel,
            "retry": [step_retrier(&LAMBDA_TRANSPORT_ERRORS, "Transport only: the starter answers an already started generation as started, so a repeated hand-over starts one.")],
        })
    }
}

/// The loop state's values: a literal start, the ladder's next rung, its last, after a park.
fn loop_state(iteration: Value, rung: Value, parked: Value, seconds: Value) -> Value {
    let mut p = Map::new();
    for (name, v) in [
        (data::ITERATION, iteration),
        (data::RUNG, rung),
        (data::PARKED, parked),
        (data::SECONDS, seconds),
    ] {
        match v {
            Value::String(expr) => dynamic(&mut p, name, expr),
            v => {
                p.insert(name.into(), v);
            }
        }
    }
    Value::Object(p)
}

fn increment(field: &str) -> Value {
    json!(format!("States.MathAdd({}, 1)", loop_path(field)))
}

/// The identity of TPF's execution, then `extra`: TPF's output, or the handed-over output.
fn output_of(result: Option<(&str, String)>) -> Value {
    let mut out = Map::new();
    for k in [
        output::TENANT_ID,
        output::EXECUTION_ID,
        output::PIPELINE_ID,
        output::CONTRACT_VERSION,
        output::RELEASE_VERSION,
    ] {
        dynamic(&mut out, k, checkpoint_path(k));
    }
    dynamic(&mut out, output::GENERATION, input_path(input::GENERATION));
    if let Some((k, expr)) = result {
        dynamic(&mut out, k, expr);
    }
    Value::Object(out)
}

fn resume_checkpoint() -> Value {
    let mut cp = Map::new();
    for k in ck::ALL {
        let from = if k == ck::EXECUTION_ID {
            input::RESUME_EXECUTION_ID
        } else {
            k
        };
        dynamic(&mut cp, k, input_path(from));
    }
    let mut out = Map::new();
    out.insert(key::response::CHECKPOINT.into(), Value::Object(cp));
    Value::Object(out)
}

/// How long a park may last: the longest await timeout plus one second, so TPF's own deadline
/// has passed when the driver sweeps.
pub fn park_timeout_seconds(gateway: &GatewayPlan) -> u64 {
    gateway.longest_await_seconds.saturating_add(1)
}

pub fn context(plan: &DriverPlan, sfn: &SfnPlan, gateway: &GatewayPlan) -> Value {
    let t = Transport { gateway };
    let id = &plan.identity;
    let ladder: Vec<String> = POLL_WAITS_SECONDS.iter().map(u64::to_string).collect();
    let last_rung = POLL_WAITS_SECONDS.len() - 1;
    let longest = POLL_WAITS_SECONDS.last().copied().unwrap_or(300);
    // The ladder's wait at the rung `index` evaluates to: the poll's rung, or a refused
    // registration's generation less one (`host::refused_registration_wait_seconds`).
    let wait_at = |index: String| {
        format!(
            "States.ArrayGetItem(States.Array({}), {index})",
            ladder.join(", ")
        )
    };
    let next_wait = wait_at(loop_path(data::RUNG));
    let refused_wait = wait_at(format!(
        "States.MathAdd({}, -1)",
        input_path(input::GENERATION)
    ));
    let kept = |field: &str| json!(loop_path(field));
    let after_park = loop_state(increment(data::ITERATION), json!(0), json!(true), json!(0));
    let signal = |f: &str| format!("$.{}.{f}", data::SIGNAL);
    let mut handed_over_output = output_of(None);
    if let Value::Object(m) = &mut handed_over_output {
        dynamic(
            m,
            key::HANDED_OVER_TO,
            format!(
                "$.{}.{}",
                data::NEXT_GENERATION,
                key::start_response::DURABLE_EXECUTION_NAME
            ),
        );
    }
    let submit = t.call(submit_request(), false);
    let transport = match gateway.queue_url {
        None => "lambda",
        Some(_) => "queue",
    };
    json!({
        "comment": format!(
            "{}{} release {} (contract {}), gateway protocol. TPF's records are authoritative: this machine runs TPF's coordinator protocol against TPF's action gateway (SUBMIT, SWEEP + STATUS, REGISTER_CALLBACK, RESULT) and follows what it answers.{}",
            super::render::DRIVER_COMMENT_PREFIX, id.pipeline_id, id.release_version, id.contract_version,
            gateway.scheduled_sweep.as_ref().map_or(String::new(), |s| format!(
                " TPF is swept on the wake-path stack's schedule ({}): this driver sweeps only at its start, while TPF waits to retry and after a park.",
                s.expression
            ))
        ),
        "states": {
            "start": states::START, "resume": states::RESUME, "submit": states::SUBMIT,
            "has_checkpoint": states::HAS_CHECKPOINT, "start_polling": states::START_POLLING,
            "sweep": states::SWEEP, "status": states::STATUS, "route": states::ROUTE,
            "poll_next": states::POLL_NEXT, "poll_longest": states::POLL_LONGEST, "wait": states::WAIT,
            "retry_next": states::RETRY_NEXT, "retry_longest": states::RETRY_LONGEST,
            "wait_to_sweep": states::WAIT_TO_SWEEP,
            "park": states::PARK, "check_signal": states::CHECK_SIGNAL, "woken": states::WOKEN,
            "deadline_passed": states::DEADLINE_PASSED, "refused": states::REFUSED,
            "refused_next": states::REFUSED_NEXT, "refused_longest": states::REFUSED_LONGEST,
            "wait_to_hand_over": states::WAIT_TO_HAND_OVER, "hand_over": states::HAND_OVER,
            "handed_over": states::HANDED_OVER, "generation_handed_over": states::GENERATION_HANDED_OVER,
            "result": states::RESULT, "has_result": states::HAS_RESULT, "output": states::OUTPUT,
            "succeeded": states::SUCCEEDED, "ended_failed": states::ENDED_FAILED,
            "ended_dlq": states::ENDED_DLQ, "ended_remote_unknown": states::ENDED_REMOTE_UNKNOWN,
            "identity_mismatch": states::IDENTITY_MISMATCH, "no_checkpoint": states::NO_CHECKPOINT,
            "no_result": states::NO_RESULT, "unexpected": states::UNEXPECTED,
        },
        "paths": {
            "resume_execution_id": input_path(input::RESUME_EXECUTION_ID),
            "generation": input_path(input::GENERATION),
            "tpf": format!("$.{}", data::TPF),
            "checkpoint": format!("$.{}.{}", data::TPF, key::response::CHECKPOINT),
            "checkpoint_tenant_id": checkpoint_path(ck::TENANT_ID),
            "checkpoint_execution_id": checkpoint_path(ck::EXECUTION_ID),
            "loop": format!("$.{}", data::LOOP),
            "iteration": loop_path(data::ITERATION),
            "rung": loop_path(data::RUNG),
            "parked": loop_path(data::PARKED),
            "seconds": loop_path(data::SECONDS),
            "status": format!("$.{}", data::STATUS),
            "execution_status": format!("$.{}.{}", data::STATUS, key::response::EXECUTION_STATUS),
            "result": format!("$.{}", data::RESULT),
            "result_json": format!("$.{}.{}", data::RESULT, key::response::RESULT_JSON),
            "signal": format!("$.{}", data::SIGNAL),
            "signal_tenant_id": signal(key::signal::TENANT_ID),
            "signal_execution_id": signal(key::signal::EXECUTION_ID),
            "signal_generation": signal(key::signal::GENERATION),
            "park_timeout": format!("$.{}", data::PARK_TIMEOUT),
            "park_error": format!("$.{}", data::PARK_ERROR),
            "next_generation": format!("$.{}", data::NEXT_GENERATION),
        },
        "status": {
            "succeeded": S::Succeeded.as_str(), "failed": S::Failed.as_str(), "dlq": S::Dlq.as_str(),
            "remote_outcome_unknown": S::RemoteOutcomeUnknown.as_str(),
            "waiting_external": S::WaitingExternal.as_str(), "queued": S::Queued.as_str(),
            "running": S::Running.as_str(), "wait_retry": S::WaitRetry.as_str(),
        },
        "errors": {
            "ended": driver_error::EXECUTION_ENDED,
            "identity_mismatch": driver_error::CALLBACK_IDENTITY_MISMATCH,
            "no_checkpoint": driver_error::NO_CHECKPOINT,
            "no_result": driver_error::NO_RESULT,
            "unexpected": fail_error::UNEXPECTED_OUTCOME,
        },
        "causes": {
            "failed": host::execution_ended_cause(S::Failed.as_str()),
            "dlq": host::execution_ended_cause(S::Dlq.as_str()),
            "remote_outcome_unknown": host::execution_ended_cause(S::RemoteOutcomeUnknown.as_str()),
            "identity_mismatch": host::CALLBACK_IDENTITY_MISMATCH_CAUSE,
            "no_checkpoint": host::NO_CHECKPOINT_CAUSE,
            "no_result": host::NO_RESULT_CAUSE,
        },
        "calls": {
            "submit": {
                // TPF retries its submit step on any error, function errors included.
                "resource": submit.0,
                "parameters": submit.1,
                "result_selector": t.selector(key::response::CHECKPOINT),
                "retry": [step_retrier(&["States.ALL"], "TPF's submit step: retried on any error (SUBMIT is idempotent by tenant and idempotency key).")],
            },
            "sweep": t.gateway_call(for_execution(Operation::Sweep, &[]), None),
            "status": t.gateway_call(
                for_execution(Operation::Status, &[]),
                Some(t.selector(key::response::EXECUTION_STATUS)),
            ),
            "result": t.gateway_call(
                for_execution(Operation::Result, &[]),
                Some(t.selector(key::response::RESULT_JSON)),
            ),
            "register": t.park_call(),
            "hand_over": t.hand_over_call(),
        },
        "scheduled_sweep": gateway.scheduled_sweep.is_some(),
        "wait_comment": gateway.scheduled_sweep.as_ref().map(|s| format!(
            "Sleeping costs no transitions. TPF's work is queued or running: the wake-path stack's scheduled SWEEP ({}) recovers what TPF's sweep recovers, so this poll reads STATUS only.",
            s.expression
        )),
        "call_timeout_seconds": plan.action_timeout_seconds,
        "park_timeout_seconds": park_timeout_seconds(gateway),
        "park_timeout_errors": [STATES_TIMEOUT],
        "resume_checkpoint": resume_checkpoint(),
        "loop_start": loop_state(json!(0), json!(0), json!(false), json!(0)),
        "loop_next": loop_state(increment(data::ITERATION), increment(data::RUNG), json!(loop_path(data::PARKED)), json!(next_wait)),
        "loop_longest": loop_state(increment(data::ITERATION), json!(loop_path(data::RUNG)), json!(loop_path(data::PARKED)), json!(longest)),
        "loop_after_park": after_park,
        "loop_refused_next": loop_state(kept(data::ITERATION), kept(data::RUNG), kept(data::PARKED), json!(refused_wait)),
        "loop_refused_longest": loop_state(kept(data::ITERATION), kept(data::RUNG), kept(data::PARKED), json!(longest)),
        "ladder": { "last_rung": last_rung, "refused_longest_from": REFUSED_LONGEST_FROM_GENERATION },
        "budget": { "max_iterations": sfn.budget.max_iterations },
        "output": output_of(Some((output::RESULT_JSON, format!("$.{}.{}", data::RESULT, key::response::RESULT_JSON)))),
        "handed_over_output": handed_over_output,
        "route_comment": format!(
            "Every branch is a function of the status TPF just returned. SUCCEEDED reads the result; FAILED, DLQ and REMOTE_OUTCOME_UNKNOWN end the driver as TPF's driver does; WAITING_EXTERNAL parks once per generation (a second await hands over, since TPF keys a registration by generation); QUEUED, RUNNING and WAIT_RETRY poll again. After {} polls this generation hands over, which keeps its history under {} events (proven by the validator).",
            sfn.budget.max_iterations, sfn.budget.event_budget
        ),
        "park_comment": format!(
            "REGISTER_CALLBACK with this execution's name and ARN and the task token as the callback id ({transport} transport), then park: no transitions while waiting. TPF's wake-up answers the token with AwsDurableCallbackSignal once the await completes; the park lasts at most the contract's longest await timeout plus a second ({} s).",
            park_timeout_seconds(gateway)
        ),
        "refused_comment": format!(
            "REGISTER_CALLBACK failed for good. TPF's driver paces every retry on its wait strategy, so this generation waits before it hands over: the ladder's rung at its generation less one ({} s for generation 1), the longest ({longest} s) from generation {} on.",
            POLL_WAITS_SECONDS[0], REFUSED_LONGEST_FROM_GENERATION
        ),
        "hand_over_comment": "Starts the next generation through the starter (TPF's replacement input: the execution id as idempotency key and resume id, `{}` as input, the generation plus one), named by TPF's recipe, which Step Functions cannot compute. This generation then ends.",
    })
}
