//! The Step Functions lowering of one release: render the templates, parse into the typed
//! model, size the driver's loop to the history budget, validate, and derive policies, graph and
//! manifest.

use std::collections::BTreeMap;

use crate::contract::Contract;
use crate::diagnostic::{Diagnostic, Diagnostics, Location};
use crate::lowering::hash::sha256_hex;
use crate::lowering::json_file;
use crate::lowering::manifest::{self, MANIFEST_FILE};
use crate::plan::DriverPlan;

use super::asl::{self, ChoiceRule, State, StateMachine};
use super::files::*;
use super::graph;
use super::iam;
use super::manifest::{
    LoggingInfo, MachineInfo, Machines, Manifest, GATEWAY_SWEEPS_ITSELF, GATEWAY_SWEEP_SCHEDULED,
};
use super::render::Renderer;
use super::states;
use super::validate::{self, LoopGuard, Profile, ValidateOptions};
use super::SfnPlan;

/// A lowered release.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub sfn: SfnPlan,
    pub driver: StateMachine,
    pub manifest: Manifest,
    /// `(file name, contents)` in a stable order.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<Diagnostic>,
}

/// Lowers a plan to Step Functions: the gateway protocol's driver, rendered, parsed, sized and
/// validated, its policy, graph and manifest. No sweeper machine: the driver sweeps TPF itself, or the wake-path stack's schedule does.
pub fn lower(plan: &DriverPlan, contract: &Contract) -> Result<Lowered, Diagnostics> {
    let mut warnings = Vec::new();
    let mut sfn = SfnPlan::new(plan);
    let renderer = Renderer::shared()?;

    let driver_text = renderer.gateway_driver(plan, &sfn, &plan.binding)?;
    let mut driver = parse_rendered(DRIVER_FILE, &driver_text)?;
    sfn.budget.max_iterations = size_loop(&mut driver, &sfn)?;
    let driver_text = asl::to_canonical_json(&driver);

    let driver_report = validate::validate(DRIVER_FILE, &driver, &driver_options(&sfn));
    if driver_report.diagnostics.iter().any(|d| d.is_error()) {
        // Our own output failing our own validator is a compiler bug, but the user needs the
        // finding, not a panic.
        return Err(Diagnostics(driver_report.diagnostics));
    }
    warnings.extend(driver_report.diagnostics.iter().cloned());

    let (driver_policy, unknown) = iam::policy(plan, &sfn, &driver);
    if let Some(resource) = unknown.first() {
        return Err(Diagnostic::error(
            "IAM_UNKNOWN_RESOURCE",
            Location::file(DRIVER_FILE),
            format!("no IAM rule for Task resource {resource}"),
        )
        .with_hint(
            "this is a tpf-sfn bug: every resource the templates emit needs a rule in iam.rs",
        )
        .into());
    }

    let driver_sha = sha256_hex(&driver_text);
    let manifest = Manifest {
        manifest_version: 1,
        compiler: manifest::compiler_info(),
        identity: manifest::identity_info(plan),
        contract: manifest::contract_info(plan, contract, Some(states::gateway::PARK)),
        binding: manifest::binding_info(plan),
        machines: Machines {
            driver: MachineInfo {
                name: sfn.machines.driver.clone(),
                machine_type: "STANDARD",
                definition: DRIVER_FILE.to_string(),
                definition_sha256: driver_sha.clone(),
                policy: DRIVER_POLICY_FILE.to_string(),
                states: iam::all_states(&driver).len(),
                max_history_events: driver_report.history.max_events,
                max_loop_iterations: Some(sfn.budget.max_iterations),
                schedule: None,
                tags: manifest::release_tags(plan, "driver", &driver_sha),
            },
            without_sweeper: match plan.binding.scheduled_sweep {
                None => GATEWAY_SWEEPS_ITSELF,
                Some(_) => GATEWAY_SWEEP_SCHEDULED,
            },
        },
        logging: LoggingInfo {
            level: plan.logging.level,
            include_execution_data: plan.logging.include_execution_data,
            log_group_arn: plan.logging.log_group_arn.clone(),
        },
        tracing: plan.tracing,
    };

    let files = vec![
        (DRIVER_FILE.to_string(), driver_text),
        (DRIVER_POLICY_FILE.to_string(), json_file(&driver_policy)),
        (GRAPH_FILE.to_string(), graph::mermaid(&driver)),
        (MANIFEST_FILE.to_string(), json_file(&manifest)),
    ];
    Ok(Lowered {
        sfn,
        driver,
        manifest,
        files,
        warnings,
    })
}

/// Validation options for a compiled driver: the configured budget is the limit to prove.
pub fn driver_options(sfn: &SfnPlan) -> ValidateOptions {
    ValidateOptions {
        event_limit: u64::from(sfn.budget.event_budget),
        map_item_bounds: BTreeMap::new(),
        profile: Profile::TpfDriver,
    }
}

/// Finds the most loop iterations one generation can afford and sets them as the loop guard's
/// limit. The driver is rendered once with a limit of 1; the validator's proven per-iteration
/// and fixed costs do not depend on the limit, so the limit is solved for and written into the
/// guard rule of the typed model (the one edit after rendering), then proven again.
fn size_loop(driver: &mut StateMachine, sfn: &SfnPlan) -> Result<u32, Diagnostics> {
    let opts = driver_options(sfn);
    let analysis = validate::analyze_history(driver, &opts);
    let budget = u64::from(sfn.budget.event_budget);
    let (Some(per), fixed, Some(guard)) =
        (analysis.per_iteration, analysis.fixed, analysis.loop_guard)
    else {
        return Err(no_bound());
    };
    if per == 0 || fixed + 2 * per > budget {
        return Err(Diagnostic::error(
            "HISTORY_BUDGET_TOO_SMALL",
            Location::file("tpf-sfn.toml"),
            format!("history.event-budget {budget} cannot fit even two loop iterations ({per} events each, {fixed} fixed)"),
        )
        .with_hint("raise history.event-budget (default 20000) or lower transport-retry.max-attempts")
        .into());
    }
    let mut n = u32::try_from((budget - fixed) / per - 1).unwrap_or(u32::MAX);
    while n > 1 {
        set_guard_limit(driver, &guard, n);
        match validate::analyze_history(driver, &opts).max_events {
            Some(max) if max <= budget => return Ok(n),
            Some(_) => n -= 1,
            None => return Err(no_bound()),
        }
    }
    Ok(n)
}

/// Writes the limit into every `counter >= _` test of the guard Choice, the unconditional guard
/// and the rules before it that hand over after a wait.
fn set_guard_limit(driver: &mut StateMachine, guard: &LoopGuard, limit: u32) {
    fn visit(rule: &mut ChoiceRule, counter: &str, limit: u32) {
        if rule.variable.as_deref() == Some(counter) {
            if let Some(v) = rule.comparison.get_mut("NumericGreaterThanEquals") {
                *v = serde_json::Value::from(limit);
            }
        }
        for r in rule.and.iter_mut().chain(rule.or.iter_mut()).flatten() {
            visit(r, counter, limit);
        }
        if let Some(r) = rule.not.as_deref_mut() {
            visit(r, counter, limit);
        }
    }
    if let Some(State::Choice(c)) = driver.states.get_mut(&guard.state) {
        for rule in &mut c.choices {
            visit(rule, &guard.counter_path, limit);
        }
    }
}

fn no_bound() -> Diagnostics {
    Diagnostic::error(
        "HISTORY_UNPROVEN",
        Location::file(DRIVER_FILE),
        "the validator could not bound the driver's history; the loop guard was not recognised",
    )
    .with_hint("this is a tpf-sfn bug: the driver template must keep its counted loop")
    .into()
}

fn parse_rendered(file: &str, text: &str) -> Result<StateMachine, Diagnostics> {
    asl::parse(file, text.as_bytes()).map_err(|d| {
        Diagnostics(vec![Diagnostic {
            hint: format!(
                "{} (the bundled templates produced it: a tpf-sfn bug)",
                d.hint
            ),
            ..d
        }])
    })
}
