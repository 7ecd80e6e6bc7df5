//! Renders a [`DriverPlan`] into ASL text with the handlebars templates in `templates/`.
//!
//! Templates are compiled into the binary, so a compile needs no files beside the contract.
//! HTML escaping is off and every interpolated value goes through the `json` helper, which emits
//! a JSON literal: a template can produce broken layout, but never an injection through a step
//! name or a URL. The output is text; `compile` parses it into the typed model.

use handlebars::{
    no_escape, Context, Handlebars, Helper, HelperResult, Output, RenderContext, RenderErrorReason,
};
use serde_json::{json, Value};

use crate::diagnostic::{Diagnostic, Location};
use crate::plan::{AwaitPoint, BindingPlan, DriverPlan};
use crate::sfn::states::{driver as states, sweeper as sweeper_states};
use crate::sfn::{binding, SfnPlan};

const TEMPLATES: &[(&str, &str)] = &[
    (
        "driver",
        include_str!("../../../templates/driver.asl.json.hbs"),
    ),
    (
        "sweeper",
        include_str!("../../../templates/sweeper.asl.json.hbs"),
    ),
    (
        "action-http",
        include_str!("../../../templates/partials/action-http.hbs"),
    ),
    (
        "action-lambda",
        include_str!("../../../templates/partials/action-lambda.hbs"),
    ),
    (
        "action-queue",
        include_str!("../../../templates/partials/action-queue.hbs"),
    ),
    (
        "await-state",
        include_str!("../../../templates/partials/await-state.hbs"),
    ),
    (
        "request-process-work-item",
        include_str!("../../../templates/partials/request-process-work-item.hbs"),
    ),
    (
        "request-sweep-once",
        include_str!("../../../templates/partials/request-sweep-once.hbs"),
    ),
    (
        "transport-retry",
        include_str!("../../../templates/partials/transport-retry.hbs"),
    ),
];

/// Keys TPF always returns from process-work-item (docs/action-api.md); the driver selects
/// exactly these so `$.tpf` has one shape whatever the binding.
pub const PROCESS_RESULT_FIELDS: &[&str] = &[
    "status",
    "version",
    "currentStepIndex",
    "attempt",
    "nextDueAt",
    "await",
    "errorCode",
    "claimed",
];
pub const SWEEP_RESULT_FIELDS: &[&str] = &["timedOutAwaits", "due"];

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

fn action(plan: &DriverPlan, name: &str, per_execution: bool, fields: &[&str]) -> Value {
    let (endpoint, endpoint_format) = match &plan.binding {
        BindingPlan::Http { api_base_url, .. } => (
            format!("{api_base_url}/tpf/actions/v1/{name}"),
            format!(
                "States.Format('{}/tpf/actions/v1/tenants/{{}}/executions/{{}}/{name}', $.driver.tenantId, $.driver.executionId)",
                intrinsic_literal(api_base_url)
            ),
        ),
        _ => (String::new(), String::new()),
    };
    json!({
        "name": name,
        "per_execution": per_execution,
        "endpoint": endpoint,
        "endpoint_format": endpoint_format,
        "result_fields": fields,
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
    };
    let awaits: Vec<Value> = plan
        .awaits
        .iter()
        .zip(&sfn.await_states)
        .map(|(a, state_name)| json!({"authored_name": a.authored_name, "state_name": state_name, "comment": await_comment(a)}))
        .collect();
    let id = &plan.identity;
    json!({
        "comment": format!(
            "tpf-sfn wakeup driver for TPF pipeline {} release {} (contract {}). TPF's records are authoritative: this machine only wakes TPF's single-shot actions and follows what they return.",
            id.pipeline_id, id.release_version, id.contract_version
        ),
        "identity": {
            "pipeline_id": id.pipeline_id,
            "contract_version": id.contract_version,
            "release_version": id.release_version,
        },
        "states": {
            "start": states::START, "register": states::REGISTER, "process": states::PROCESS,
            "route": states::ROUTE, "route_await": states::ROUTE_AWAIT, "generic_await": states::GENERIC_AWAIT,
            "wait_due": states::WAIT_DUE, "wait_lease": states::WAIT_LEASE, "recheck": states::RECHECK,
            "count": states::COUNT, "check_budget": states::CHECK_BUDGET, "continue": states::CONTINUE, "handed_over": states::HANDED_OVER,
            "succeeded": states::SUCCEEDED, "failed": states::FAILED, "mismatch": states::MISMATCH,
            "not_found": states::NOT_FOUND, "unexpected": states::UNEXPECTED,
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
        "generic_await_comment": "Fallback park for an await step this release does not name (or a contract without awaits). Same wakeup mechanics as the named await states.",
        "process_comment": format!(
            "TPF action process-work-item: claims the execution if due, runs one segment, commits, and returns the post-commit outcome. Carries the pinned identity ({} / {}) on every call. Binding: {}.",
            id.pipeline_id, id.release_version, plan.binding.kind().as_str()
        ),
        "count_comment": format!(
            "Counts loop iterations, the counter the history-budget proof reads. The next state rolls over to a new generation when the count reaches the limit the compiler proved keeps one generation's history under {} events.",
            sfn.budget.event_budget
        ),
        "process_action": action(plan, "process-work-item", true, PROCESS_RESULT_FIELDS),
        "sweep_action": action(plan, "sweep-once", false, SWEEP_RESULT_FIELDS),
        "binding": binding,
        "budget": {"max_iterations": sfn.budget.max_iterations, "event_budget": sfn.budget.event_budget},
        "wakeup": {
            "table_name": plan.wakeup.table_name,
            "lease_wait_seconds": plan.wakeup.lease_wait_seconds,
            "recheck_seconds": plan.wakeup.recheck_seconds,
        },
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
