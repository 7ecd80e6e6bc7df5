//! Renders a [`DriverPlan`] into ASL text with the handlebars templates in `templates/`.
//!
//! Templates are compiled into the binary, so a compile needs no files beside the contract.
//! HTML escaping is off and every interpolated value goes through the `json` helper, which emits
//! a JSON literal: a template can produce broken layout, but never an injection through a step
//! name or a URL. The output is text; `compile` parses it into the typed model.

use handlebars::{
    no_escape, Context, Handlebars, Helper, HelperResult, Output, RenderContext, RenderErrorReason,
};
use serde_json::{json, Map, Value};
use tpf_wire::{action, wakeup};

use crate::diagnostic::{Diagnostic, Location};
use crate::plan::{AwaitPoint, BindingPlan, DriverPlan, GatewayPlan};
use crate::sfn::states::{driver as states, fail_error, sweeper as sweeper_states};
use crate::sfn::{binding, SfnPlan};

const TEMPLATES: &[(&str, &str)] = &[
    (
        "driver",
        include_str!("../../../../templates/driver.asl.json.hbs"),
    ),
    (
        "sweeper",
        include_str!("../../../../templates/sweeper.asl.json.hbs"),
    ),
    (
        "action-http",
        include_str!("../../../../templates/partials/action-http.hbs"),
    ),
    (
        "action-lambda",
        include_str!("../../../../templates/partials/action-lambda.hbs"),
    ),
    (
        "action-queue",
        include_str!("../../../../templates/partials/action-queue.hbs"),
    ),
    (
        "gateway-driver",
        include_str!("../../../../templates/gateway-driver.asl.json.hbs"),
    ),
    (
        "gateway-call",
        include_str!("../../../../templates/partials/gateway-call.hbs"),
    ),
    (
        "await-state",
        include_str!("../../../../templates/partials/await-state.hbs"),
    ),
    (
        "transport-retry",
        include_str!("../../../../templates/partials/transport-retry.hbs"),
    ),
];

/// How a compiled driver's and sweeper's top-level `Comment` starts; `validate` recognises the
/// tool's own output by it.
pub const DRIVER_COMMENT_PREFIX: &str = "tpf-sfn wakeup driver for TPF pipeline ";
pub const SWEEPER_COMMENT_PREFIX: &str = "tpf-sfn sweeper for TPF pipeline ";

pub struct Renderer {
    hb: Handlebars<'static>,
}

impl Renderer {
    /// The process-wide renderer. Compiling the templates costs far more than rendering them, so
    /// it happens once.
    pub fn shared() -> Result<&'static Renderer, Diagnostic> {
        static SHARED: std::sync::OnceLock<Result<Renderer, Diagnostic>> =
            std::sync::OnceLock::new();
        SHARED
            .get_or_init(Renderer::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn new() -> Result<Renderer, Diagnostic> {
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_escape_fn(no_escape);
        hb.register_helper("json", Box::new(json_helper));
        for (name, text) in TEMPLATES {
            hb.register_template_string(name, *text).map_err(|e| {
                Diagnostic::error(
                    "TEMPLATE_SYNTAX",
                    Location::file(format!("templates/{name}")),
                    e.to_string(),
                )
                .with_hint("the bundled templates are broken; this is a tpf-sfn bug")
            })?;
        }
        Ok(Renderer { hb })
    }

    pub fn driver(&self, plan: &DriverPlan, sfn: &SfnPlan) -> Result<String, Diagnostic> {
        self.render("driver", &context(plan, sfn))
    }

    /// The gateway protocol's driver (`crate::sfn::gateway`).
    pub fn gateway_driver(
        &self,
        plan: &DriverPlan,
        sfn: &SfnPlan,
        gateway: &GatewayPlan,
    ) -> Result<String, Diagnostic> {
        self.render(
            "gateway-driver",
            &crate::sfn::gateway::context(plan, sfn, gateway),
        )
    }

    pub fn sweeper(&self, plan: &DriverPlan, sfn: &SfnPlan) -> Result<String, Diagnostic> {
        self.render("sweeper", &context(plan, sfn))
    }

    fn render(&self, name: &str, ctx: &Value) -> Result<String, Diagnostic> {
        self.hb.render(name, ctx).map_err(|e| {
            Diagnostic::error(
                "TEMPLATE_RENDER",
                Location::file(format!("templates/{name}")),
                e.to_string(),
            )
            .with_hint("the bundled templates do not fit the driver plan; this is a tpf-sfn bug")
        })
    }
}

fn json_helper(
    h: &Helper,
    _: &Handlebars,
    _: &Context,
    _: &mut RenderContext,
    out: &mut dyn Output,
) -> HelperResult {
    let param = h
        .param(0)
        .ok_or(RenderErrorReason::ParamNotFoundForIndex("json", 0))?;
    let text = serde_json::to_string(param.value())
        .map_err(|e| RenderErrorReason::Other(e.to_string()))?;
    out.write(&text)?;
    Ok(())
}

/// Escapes text for a single-quoted intrinsic-function string literal: `'`, `{`, `}` and `\`
/// are special there (States Language spec, "Intrinsic Functions").
pub fn intrinsic_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\'' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn await_comment(a: &AwaitPoint) -> String {
    let transport = a.transport.as_deref().unwrap_or("unspecified");
    let shape = if a.itemized {
        ", itemized over a stream"
    } else {
        ""
    };
    format!(
        "Contract step {} \"{}\" · kind {} · cardinality {}{} · await transport {} ({} completion). Parks on a task token: no transitions while waiting. TPF's completeAwait admits the completion; the bridge then wakes this state, and the await deadline wakes it too.",
        a.step_index, a.authored_name, a.kind, a.cardinality, shape, transport, a.ingress
    )
}

/// Where the driver keeps things in its state data.
mod data {
    /// TPF's last answer (and the loop counter read back from it).
    pub const TPF: &str = "tpf";
    /// The counter of the next action call, read back from TPF's echo of the request.
    pub const NEXT_ITERATION: &str = "nextIteration";
    /// What ended the last park: the bridge's output or the Catch's error.
    pub const WAKEUP: &str = "wakeup";
    /// The back-off after a missed await deadline: `{seconds, unitId}`, where `unitId` is the
    /// await unit it backs off for, under the outcome's own field name.
    pub const BACKOFF: &str = "backoff";
    pub const BACKOFF_SECONDS: &str = "seconds";
    pub const BACKOFF_UNIT_ID: &str = super::action::await_field::UNIT_ID;
}

/// `$.tpf.<field>`.
fn tpf_path(field: &str) -> String {
    format!("$.{}.{field}", data::TPF)
}

/// `$.tpf.await.<field>`.
fn await_path(field: &str) -> String {
    format!("$.{}.{}.{field}", data::TPF, action::field::AWAIT)
}

/// The result-selector prefix of a binding: where the Action API's body sits in the Task result.
fn result_prefix(binding: &BindingPlan) -> &'static str {
    match binding {
        BindingPlan::Http { .. } => "$.ResponseBody.",
        BindingPlan::Lambda { .. } | BindingPlan::Gateway(_) => "$.Payload.",
        BindingPlan::Queue { .. } => "$.",
    }
}

/// `"<name>.$": <expr>` as a template entry.
fn dynamic(obj: &mut Map<String, Value>, name: &str, expr: impl Into<String>) {
    obj.insert(format!("{name}.$"), Value::String(expr.into()));
}

/// A DynamoDB string attribute set from a path or intrinsic: `{"S.$": expr}`.
fn s_dynamic(expr: impl Into<String>) -> Value {
    json!({ "S.$": expr.into() })
}

/// The wakeup table's partition key for the execution at `tenant`/`execution` paths.
fn wakeup_pk(tenant: &str, execution: &str) -> Value {
    s_dynamic(format!("States.Format('{{}}#{{}}', {tenant}, {execution})"))
}

/// The Action API request body of process-work-item: the pinned identity, an idempotency key
/// per driver generation and call, and the `driver` object TPF echoes back.
fn process_request(plan: &DriverPlan) -> Value {
    use action::request::{self as rq, driver as d};
    let id = &plan.identity;
    let mut body = Map::new();
    body.insert(rq::PIPELINE_ID.into(), json!(id.pipeline_id));
    body.insert(rq::CONTRACT_VERSION.into(), json!(id.contract_version));
    body.insert(rq::RELEASE_VERSION.into(), json!(id.release_version));
    let counter = tpf_path(data::NEXT_ITERATION);
    dynamic(
        &mut body,
        rq::IDEMPOTENCY_KEY,
        format!("States.Format('{{}}:g{{}}:i{{}}', $.lineage, $.generation, {counter})"),
    );
    let mut driver = Map::new();
    dynamic(&mut driver, d::EXECUTION_ARN, "$$.Execution.Id");
    dynamic(&mut driver, d::LINEAGE, "$.lineage");
    dynamic(&mut driver, d::GENERATION, "$.generation");
    dynamic(&mut driver, d::ITERATION, counter);
    body.insert(rq::DRIVER.into(), Value::Object(driver));
    Value::Object(body)
}

fn sweep_request(plan: &DriverPlan) -> Value {
    use action::request as rq;
    let id = &plan.identity;
    let mut body = Map::new();
    body.insert(rq::LIMIT.into(), json!(plan.sweeper.limit));
    body.insert(rq::PIPELINE_ID.into(), json!(id.pipeline_id));
    body.insert(rq::CONTRACT_VERSION.into(), json!(id.contract_version));
    body.insert(rq::RELEASE_VERSION.into(), json!(id.release_version));
    dynamic(&mut body, rq::IDEMPOTENCY_KEY, "$$.Execution.Name");
    Value::Object(body)
}

/// Selects the outcome's fixed keys, and sets the loop counter to TPF's echo of this call's
/// counter plus one: the increment the history-budget proof counts.
fn process_selector(binding: &BindingPlan) -> Value {
    let prefix = result_prefix(binding);
    let mut sel = Map::new();
    for f in action::PROCESS_RESULT_FIELDS {
        dynamic(&mut sel, f, format!("{prefix}{f}"));
    }
    dynamic(
        &mut sel,
        data::NEXT_ITERATION,
        format!(
            "States.MathAdd({prefix}{}.{}, 1)",
            action::ECHO,
            action::request::driver::ITERATION
        ),
    );
    Value::Object(sel)
}

fn sweep_selector(binding: &BindingPlan) -> Value {
    let prefix = result_prefix(binding);
    let mut sel = Map::new();
    for f in action::SWEEP_RESULT_FIELDS {
        dynamic(&mut sel, f, format!("{prefix}{f}"));
    }
    Value::Object(sel)
}

/// The live-driver pointer row each generation writes.
fn register_item(plan: &DriverPlan) -> Value {
    use wakeup::attr;
    let mut item = Map::new();
    item.insert(wakeup::PK.into(), wakeup_pk("$.tenantId", "$.executionId"));
    item.insert(wakeup::SK.into(), json!({ "S": wakeup::DRIVER_ROW }));
    item.insert(attr::EXECUTION_ARN.into(), s_dynamic("$$.Execution.Id"));
    item.insert(
        attr::STATE_MACHINE_ARN.into(),
        s_dynamic("$$.StateMachine.Id"),
    );
    item.insert(attr::LINEAGE.into(), s_dynamic("$.lineage"));
    item.insert(
        attr::GENERATION.into(),
        json!({ "N.$": "States.Format('{}', $.generation)" }),
    );
    item.insert(
        attr::RELEASE_VERSION.into(),
        json!({ "S": plan.identity.release_version }),
    );
    Value::Object(item)
}

/// The parked-token row an await state writes with its task token.
fn token_item() -> Value {
    use action::await_field as aw;
    use wakeup::attr;
    let mut item = Map::new();
    item.insert(wakeup::PK.into(), wakeup_pk("$.tenantId", "$.executionId"));
    item.insert(wakeup::SK.into(), json!({ "S": wakeup::WAKEUP_ROW }));
    item.insert(attr::TASK_TOKEN.into(), s_dynamic("$$.Task.Token"));
    item.insert(attr::EXECUTION_ARN.into(), s_dynamic("$$.Execution.Id"));
    item.insert(attr::UNIT_ID.into(), s_dynamic(await_path(aw::UNIT_ID)));
    item.insert(attr::STEP_NAME.into(), s_dynamic(await_path(aw::STEP_NAME)));
    item.insert(
        attr::TPF_VERSION.into(),
        json!({ "N.$": format!("States.Format('{{}}', {})", tpf_path(action::field::VERSION)) }),
    );
    item.insert(
        attr::EXPIRES_AT.into(),
        json!({ "N.$": format!("States.Format('{{}}', {})", await_path(aw::EXPIRES_AT_EPOCH_SECONDS)) }),
    );
    Value::Object(item)
}

/// A back-off Pass's Parameters: the next wait (a number, or an intrinsic doubling the last)
/// and the await unit it is for, so a later park on another unit starts over.
fn backoff(seconds: Value, unit_id_path: &str) -> Value {
    let mut p = Map::new();
    match seconds {
        Value::String(expr) => dynamic(&mut p, data::BACKOFF_SECONDS, expr),
        n => {
            p.insert(data::BACKOFF_SECONDS.into(), n);
        }
    }
    dynamic(&mut p, data::BACKOFF_UNIT_ID, unit_id_path);
    Value::Object(p)
}

/// The sweeper's key for a due execution's row of `row` kind.
fn due_key(row: &str) -> Value {
    use action::due_field as due;
    let mut key = Map::new();
    key.insert(
        wakeup::PK.into(),
        wakeup_pk(
            &format!("$.execution.{}", due::TENANT_ID),
            &format!("$.execution.{}", due::EXECUTION_ID),
        ),
    );
    key.insert(wakeup::SK.into(), json!({ "S": row }));
    Value::Object(key)
}

/// Paths the templates' Choice rules and Waits read, built from the wire's field names.
fn paths() -> Value {
    use action::{await_field as aw, due_field as due, field as f};
    use wakeup::attr;
    let due_path = |k: &str| format!("$.execution.{k}");
    json!({
        "status": tpf_path(f::STATUS),
        "next_due_at": tpf_path(f::NEXT_DUE_AT),
        "error_code": tpf_path(f::ERROR_CODE),
        "next_iteration": tpf_path(data::NEXT_ITERATION),
        "await_step_name": await_path(aw::STEP_NAME),
        "await_wake_in_seconds": await_path(aw::WAKE_IN_SECONDS),
        "await_unit_id": await_path(aw::UNIT_ID),
        "backoff": format!("$.{}", data::BACKOFF),
        "backoff_seconds": format!("$.{}.{}", data::BACKOFF, data::BACKOFF_SECONDS),
        "backoff_unit_id": format!("$.{}.{}", data::BACKOFF, data::BACKOFF_UNIT_ID),
        "tpf": format!("$.{}", data::TPF),
        "wakeup": format!("$.{}", data::WAKEUP),
        "due_list": format!("$.sweep.{}", f::DUE),
        "due_pipeline_id": due_path(due::PIPELINE_ID),
        "due_release_version": due_path(due::RELEASE_VERSION),
        "due_tenant_id": due_path(due::TENANT_ID),
        "due_execution_id": due_path(due::EXECUTION_ID),
        "due_version": due_path(due::VERSION),
        "pointer_execution_arn": format!("$.pointer.Item.{}.S", attr::EXECUTION_ARN),
        "token_execution_arn": format!("$.token.Item.{}.S", attr::EXECUTION_ARN),
        "token_task_token": format!("$.token.Item.{}.S", attr::TASK_TOKEN),
    })
}

fn status_values() -> Value {
    use tpf_wire::records::ExecutionStatus as S;
    json!({
        "succeeded": S::Succeeded.as_str(), "failed": S::Failed.as_str(), "dlq": S::Dlq.as_str(),
        "waiting_external": S::WaitingExternal.as_str(), "running": S::Running.as_str(),
        "wait_retry": S::WaitRetry.as_str(), "queued": S::Queued.as_str(),
        "remote_outcome_unknown": S::RemoteOutcomeUnknown.as_str(),
    })
}

fn action_ctx(plan: &DriverPlan, name: &str, per_execution: bool) -> Value {
    let (endpoint, endpoint_format) = match &plan.binding {
        BindingPlan::Http { api_base_url, .. } => (
            format!("{api_base_url}{}/{name}", action::path::PREFIX),
            format!(
                "States.Format('{}{}/tenants/{{}}/executions/{{}}/{name}', $.tenantId, $.executionId)",
                intrinsic_literal(api_base_url),
                action::path::PREFIX
            ),
        ),
        _ => (String::new(), String::new()),
    };
    let (request, selector) = if per_execution {
        (process_request(plan), process_selector(&plan.binding))
    } else {
        (sweep_request(plan), sweep_selector(&plan.binding))
    };
    let mut envelope = Map::new();
    envelope.insert(action::envelope::ACTION.into(), json!(name));
    if per_execution {
        dynamic(&mut envelope, action::envelope::TENANT_ID, "$.tenantId");
        dynamic(
            &mut envelope,
            action::envelope::EXECUTION_ID,
            "$.executionId",
        );
    }
    if matches!(plan.binding, BindingPlan::Queue { .. }) {
        dynamic(&mut envelope, action::envelope::TASK_TOKEN, "$$.Task.Token");
    }
    envelope.insert(action::envelope::REQUEST.into(), request.clone());
    json!({
        "name": name,
        "per_execution": per_execution,
        "envelope": envelope,
        "endpoint": endpoint,
        "endpoint_format": endpoint_format,
        "request": request,
        "result_selector": selector,
        "transport_errors": binding::transport_errors(&plan.binding),
        "identity_mismatch_error": binding::identity_mismatch_error(&plan.binding),
        "not_found_error": binding::not_found_error(&plan.binding),
    })
}

fn context(plan: &DriverPlan, sfn: &SfnPlan) -> Value {
    let binding = match &plan.binding {
        BindingPlan::Http {
            api_base_url,
            connection_arn,
        } => {
            json!({"http": {"api_base_url": api_base_url, "connection_arn": connection_arn}, "lambda": false, "queue": false})
        }
        BindingPlan::Lambda { function_arn } => {
            json!({"http": false, "lambda": {"function_arn": function_arn}, "queue": false})
        }
        BindingPlan::Queue { queue_url } => {
            json!({"http": false, "lambda": false, "queue": {"queue_url": queue_url}})
        }
        // The gateway driver has its own template and context (`crate::sfn::gateway`).
        BindingPlan::Gateway(_) => json!({"http": false, "lambda": false, "queue": false}),
    };
    let awaits: Vec<Value> = plan
        .awaits
        .iter()
        .zip(&sfn.await_states)
        .map(|(a, state_name)| json!({"authored_name": a.authored_name, "state_name": state_name, "comment": await_comment(a)}))
        .collect();
    let id = &plan.identity;
    let mut start_counter = Map::new();
    start_counter.insert(data::NEXT_ITERATION.into(), json!(0));
    json!({
        "comment": format!(
            "{}{} release {} (contract {}). TPF's records are authoritative: this machine only wakes TPF's single-shot actions and follows what they return.",
            DRIVER_COMMENT_PREFIX, id.pipeline_id, id.release_version, id.contract_version
        ),
        "sweeper_comment": format!(
            "{}{} release {} (contract {}): the safety net for lost wakeups. It asks TPF which executions are due and makes sure each has one live, awake driver on this release's machine.",
            SWEEPER_COMMENT_PREFIX, id.pipeline_id, id.release_version, id.contract_version
        ),
        "identity": {
            "pipeline_id": id.pipeline_id,
            "contract_version": id.contract_version,
            "release_version": id.release_version,
        },
        "states": {
            "register": states::REGISTER, "process": states::PROCESS,
            "route": states::ROUTE, "generic_await": states::GENERIC_AWAIT,
            "wait_due": states::WAIT_DUE, "wait_lease": states::WAIT_LEASE, "recheck": states::RECHECK,
            "late": states::LATE, "back_off": states::BACK_OFF, "back_off_first": states::BACK_OFF_FIRST,
            "back_off_double": states::BACK_OFF_DOUBLE, "back_off_longest": states::BACK_OFF_LONGEST,
            "due_then_hand_over": states::DUE_THEN_HAND_OVER,
            "lease_then_hand_over": states::LEASE_THEN_HAND_OVER, "continue": states::CONTINUE, "handed_over": states::HANDED_OVER,
            "succeeded": states::SUCCEEDED, "failed": states::FAILED,
            "remote_unknown": states::REMOTE_UNKNOWN, "mismatch": states::MISMATCH,
            "not_found": states::NOT_FOUND, "unexpected": states::UNEXPECTED,
        },
        "fail_errors": {
            "failed": fail_error::EXECUTION_FAILED,
            "remote_unknown": fail_error::REMOTE_OUTCOME_UNKNOWN,
            "mismatch": fail_error::RELEASE_IDENTITY_MISMATCH,
            "not_found": fail_error::EXECUTION_NOT_FOUND, "unexpected": fail_error::UNEXPECTED_OUTCOME,
        },
        "sweeper_states": {
            "locate": sweeper_states::LOCATE, "sweep": sweeper_states::SWEEP, "ensure": sweeper_states::ENSURE,
            "check_release": sweeper_states::CHECK_RELEASE, "other_release": sweeper_states::OTHER_RELEASE,
            "lookup_driver": sweeper_states::LOOKUP_DRIVER, "has_pointer": sweeper_states::HAS_POINTER,
            "describe": sweeper_states::DESCRIBE, "is_running": sweeper_states::IS_RUNNING,
            "lookup_token": sweeper_states::LOOKUP_TOKEN, "has_token": sweeper_states::HAS_TOKEN,
            "token_is_live": sweeper_states::TOKEN_IS_LIVE, "wake": sweeper_states::WAKE, "live": sweeper_states::LIVE,
            "start_recovery": sweeper_states::START_RECOVERY, "recovery_exists": sweeper_states::RECOVERY_EXISTS,
            "recovered": sweeper_states::RECOVERED, "done": sweeper_states::DONE,
        },
        "awaits": awaits,
        "late_comment": "Parked past the await deadline: the wakeup token is registered again, so the bridge wakes this state the moment TPF's record moves; otherwise TPF is re-asked after the back-off wait.",
        "generic_await_comment": "Fallback park for an await step this release does not name (or a contract without awaits). Same wakeup mechanics as the named await states.",
        "register_comment": format!(
            "Records this generation as the TPF execution's live driver, so the sweeper and `tpf-sfn status` can find it, and starts the loop counter. Input: tenantId, executionId, lineage (the first generation's name) and generation; the pinned release ({}) is compiled in, never read from input.",
            id.release_version
        ),
        "process_comment": format!(
            "TPF action process-work-item: claims the execution if due, runs one segment, commits, and returns the post-commit outcome. Carries the pinned identity ({} / {}) on every call. Binding: {}. TPF echoes the call's `driver` object; the result adds one to its iteration, the loop counter.",
            id.pipeline_id, id.release_version, plan.binding.kind().as_str()
        ),
        "route_comment": format!(
            "Every branch is a function of the outcome TPF just returned. A parked execution is routed by the await step TPF reports (its authored name), not by runtime step index, which counts aspect steps the contract leaves out. After {} calls this generation hands over to the next, which keeps its history under {} events (proven by the validator).",
            sfn.budget.max_iterations, sfn.budget.event_budget
        ),
        "process_action": action_ctx(plan, action::path::PROCESS_WORK_ITEM, true),
        "sweep_action": action_ctx(plan, action::path::SWEEP_ONCE, false),
        "binding": binding,
        "budget": {"max_iterations": sfn.budget.max_iterations, "event_budget": sfn.budget.event_budget},
        "start_counter": start_counter,
        "register_item": register_item(plan),
        "token_item": token_item(),
        "driver_key": due_key(wakeup::DRIVER_ROW),
        "token_key": due_key(wakeup::WAKEUP_ROW),
        "paths": paths(),
        "recovery_name": format!(
            "States.Format('{{}}-s{{}}', $.execution.{}, $.execution.{})",
            action::due_field::EXECUTION_ID,
            action::due_field::VERSION
        ),
        "status": status_values(),
        "wakeup": {
            "table_name": plan.wakeup.table_name,
            "lease_wait_seconds": plan.wakeup.lease_wait_seconds,
            "recheck_seconds": plan.wakeup.recheck_seconds,
            "late_recheck_seconds": plan.wakeup.late_recheck_seconds,
            "late_recheck_max_seconds": plan.wakeup.late_recheck_max_seconds,
            // Doubling stays at or below the cap; past this, the next wait is the cap itself.
            "late_double_up_to": plan.wakeup.late_recheck_max_seconds / 2,
        },
        "backoff_first": backoff(json!(plan.wakeup.late_recheck_seconds), &await_path(action::await_field::UNIT_ID)),
        "backoff_double": backoff(
            json!(format!("States.MathAdd($.{b}.{s}, $.{b}.{s})", b = data::BACKOFF, s = data::BACKOFF_SECONDS)),
            &format!("$.{}.{}", data::BACKOFF, data::BACKOFF_UNIT_ID),
        ),
        "backoff_longest": backoff(json!(plan.wakeup.late_recheck_max_seconds), &format!("$.{}.{}", data::BACKOFF, data::BACKOFF_UNIT_ID)),
        "retry": {
            "interval_seconds": plan.transport_retry.interval_seconds,
            "max_attempts": plan.transport_retry.max_attempts,
            "backoff_rate": plan.transport_retry.backoff_rate,
            "max_delay_seconds": plan.transport_retry.max_delay_seconds,
        },
        "action_timeout_seconds": plan.action_timeout_seconds,
        "sweep_timeout_seconds": plan.sweep_timeout_seconds,
        "sweeper": {"limit": plan.sweeper.limit, "max_concurrency": plan.sweeper.max_concurrency},
        "driver_arn_format": format!(
            "States.Format('arn:{{}}:states:{{}}:{{}}:stateMachine:{}', States.ArrayGetItem(States.StringSplit($$.StateMachine.Id, ':'), 1), States.ArrayGetItem(States.StringSplit($$.StateMachine.Id, ':'), 3), States.ArrayGetItem(States.StringSplit($$.StateMachine.Id, ':'), 4))",
            intrinsic_literal(&sfn.machines.driver)
        ),
    })
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Renderer")
    }
}
