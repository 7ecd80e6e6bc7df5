//! The whole compile: inputs → plan → rendered, parsed, sized and validated machines →
//! policies, graph and manifest. Pure: bytes in, file contents out. Writing them is the
//! caller's job, which is how the CLI can promise all-or-nothing output.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::asl::{self, StateMachine};
use crate::config::{BindingKind, DriverConfig};
use crate::contract::{load_contract, ContractOptions, LoadedContract};
use crate::diagnostic::{Diagnostic, Diagnostics, Location};
use crate::iam::{self, Role};
use crate::manifest::{
    self, AwaitInfo, ContractInfo, IdentityInfo, LoggingInfo, MachineInfo, Machines, Manifest,
};
use crate::plan::{self, DriverPlan};
use crate::release::{load_release, resolve_identity};
use crate::render::{sweeper_states, Renderer};
use crate::validate::{self, Profile, ValidateOptions};

/// Step Functions' hard cap on history events per execution.
pub const AWS_HISTORY_LIMIT: u64 = 25_000;

pub const DRIVER_FILE: &str = "driver.asl.json";
pub const SWEEPER_FILE: &str = "sweeper.asl.json";
pub const DRIVER_POLICY_FILE: &str = "driver.iam-policy.json";
pub const SWEEPER_POLICY_FILE: &str = "sweeper.iam-policy.json";
pub const GRAPH_FILE: &str = "driver.mmd";
pub const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    pub contract_file: &'a str,
    pub contract: &'a [u8],
    pub release: Option<(&'a str, &'a [u8])>,
    pub config: Option<(&'a str, &'a str)>,
    /// `--binding`, which wins over the config file's `binding.kind`.
    pub binding: Option<BindingKind>,
    pub allow_unverified_hash: bool,
}

#[derive(Debug, Clone)]
pub struct Output {
    pub plan: DriverPlan,
    pub driver: StateMachine,
    pub sweeper: StateMachine,
    pub manifest: Manifest,
    /// `(file name, contents)` in a stable order.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<Diagnostic>,
}

/// Loads and checks the three inputs without rendering anything.
pub fn load_inputs(
    input: &Input,
) -> Result<(LoadedContract, DriverPlan, Vec<Diagnostic>), Diagnostics> {
    let mut warnings = Vec::new();
    let loaded = load_contract(
        input.contract_file,
        input.contract,
        ContractOptions {
            allow_unverified_hash: input.allow_unverified_hash,
        },
    )?;
    warnings.extend(loaded.warnings.iter().cloned());

    let release = match input.release {
        Some((file, bytes)) => Some((file, load_release(file, bytes)?)),
        None => None,
    };
    let identity = resolve_identity(&loaded.contract, release.as_ref().map(|(f, r)| (*f, r)))?;

    let mut config = match input.config {
        Some((file, text)) => DriverConfig::from_toml(file, text)?,
        None => DriverConfig::default(),
    };
    if let Some(kind) = input.binding {
        config.binding.kind = kind;
    }
    let config_file = input
        .config
        .map(|(f, _)| f)
        .unwrap_or("<embedded default config>");
    let findings = config.check(config_file);
    if findings.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(findings));
    }
    warnings.extend(findings);

    let plan = plan::build(&loaded.contract, &loaded.hash, &identity, &config);
    Ok((loaded, plan, warnings))
}

pub fn compile(input: &Input) -> Result<Output, Diagnostics> {
    let (loaded, mut plan, mut warnings) = load_inputs(input)?;
    let renderer = Renderer::shared()?;

    let mut driver = parse_rendered(DRIVER_FILE, &renderer.driver(&plan)?)?;
    plan.budget.max_iterations = size_loop(&mut driver, &plan)?;
    let sweeper = parse_rendered(SWEEPER_FILE, &renderer.sweeper(&plan)?)?;
    let driver_text = asl::to_canonical_json(&driver);
    let sweeper_text = asl::to_canonical_json(&sweeper);

    let driver_report = validate::validate(DRIVER_FILE, &driver, &driver_options(&plan));
    let sweeper_report = validate::validate(SWEEPER_FILE, &sweeper, &sweeper_options(&plan));
    for d in driver_report
        .diagnostics
        .iter()
        .chain(&sweeper_report.diagnostics)
    {
        if d.is_error() {
            // Our own output failing our own validator is a compiler bug, but the user needs
            // the finding, not a panic.
            return Err(Diagnostics(
                driver_report
                    .diagnostics
                    .iter()
                    .chain(&sweeper_report.diagnostics)
                    .cloned()
                    .collect(),
            ));
        }
        warnings.push(d.clone());
    }

    let (driver_policy, mut unknown) = iam::policy(&plan, Role::Driver, &driver);
    let (sweeper_policy, unknown_sweeper) = iam::policy(&plan, Role::Sweeper, &sweeper);
    unknown.extend(unknown_sweeper);
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
    let sweeper_sha = sha256_hex(&sweeper_text);
    let manifest = Manifest {
        manifest_version: 1,
        compiler: manifest::CompilerInfo {
            name: manifest::COMPILER_NAME,
            version: manifest::COMPILER_VERSION,
        },
        identity: IdentityInfo {
            pipeline_id: plan.identity.pipeline_id.clone(),
            contract_version: plan.identity.contract_version.clone(),
            release_version: plan.identity.release_version.clone(),
        },
        contract: ContractInfo {
            schema_version: plan.contract.schema_version,
            contract_hash: plan.contract.contract_hash.clone(),
            verified: plan.contract.verified,
            steps: loaded.contract.steps.len(),
            await_steps: plan
                .awaits
                .iter()
                .map(|a| AwaitInfo {
                    step_index: a.step_index,
                    authored_name: a.authored_name.clone(),
                    state_name: a.state_name.clone(),
                    transport: a.transport.clone(),
                })
                .collect(),
        },
        binding: manifest::binding_info(&plan),
        machines: Machines {
            driver: MachineInfo {
                name: plan.machines.driver.clone(),
                machine_type: "STANDARD",
                definition: DRIVER_FILE.to_string(),
                definition_sha256: driver_sha.clone(),
                policy: DRIVER_POLICY_FILE.to_string(),
                states: iam::all_states(&driver).len(),
                max_history_events: driver_report.history.max_events,
                max_loop_iterations: Some(plan.budget.max_iterations),
                schedule: None,
                tags: manifest::machine_tags(&plan, "driver", &driver_sha),
            },
            sweeper: MachineInfo {
                name: plan.machines.sweeper.clone(),
                machine_type: "STANDARD",
                definition: SWEEPER_FILE.to_string(),
                definition_sha256: sweeper_sha.clone(),
                policy: SWEEPER_POLICY_FILE.to_string(),
                states: iam::all_states(&sweeper).len(),
                max_history_events: sweeper_report.history.max_events,
                max_loop_iterations: None,
                schedule: Some(plan.sweeper.schedule.clone()),
                tags: manifest::machine_tags(&plan, "sweeper", &sweeper_sha),
            },
        },
        wakeup_table: plan.wakeup.table_name.clone(),
        logging: LoggingInfo {
            level: plan.logging.level,
            include_execution_data: plan.logging.include_execution_data,
            log_group_arn: plan.logging.log_group_arn.clone(),
        },
        tracing: plan.tracing,
    };

    let files = vec![
        (DRIVER_FILE.to_string(), driver_text),
        (SWEEPER_FILE.to_string(), sweeper_text),
        (DRIVER_POLICY_FILE.to_string(), pretty(&driver_policy)),
        (SWEEPER_POLICY_FILE.to_string(), pretty(&sweeper_policy)),
        (GRAPH_FILE.to_string(), crate::graph::mermaid(&driver)),
        (MANIFEST_FILE.to_string(), pretty(&manifest)),
    ];
    Ok(Output {
        plan,
        driver,
        sweeper,
        manifest,
        files,
        warnings,
    })
}

/// Validation options for a compiled driver: the configured budget is the limit to prove.
pub fn driver_options(plan: &DriverPlan) -> ValidateOptions {
    ValidateOptions {
        event_limit: u64::from(plan.budget.event_budget),
        map_item_bounds: BTreeMap::new(),
        profile: Profile::TpfDriver,
    }
}

/// The sweeper's Map runs once per due execution, and sweep-once returns at most `limit`.
pub fn sweeper_options(plan: &DriverPlan) -> ValidateOptions {
    let mut map_item_bounds = BTreeMap::new();
    map_item_bounds.insert(
        sweeper_states::ENSURE.to_string(),
        u64::from(plan.sweeper.limit),
    );
    ValidateOptions {
        event_limit: AWS_HISTORY_LIMIT,
        map_item_bounds,
        profile: Profile::TpfDriver,
    }
}

/// Finds the most loop iterations one generation can afford and sets them as the loop guard's
/// limit. The driver is rendered once with a limit of 1; the validator's proven per-iteration
/// and fixed costs do not depend on the limit, so the limit is solved for and written into the
/// guard rule of the typed model (the one edit after rendering), then proven again.
fn size_loop(driver: &mut StateMachine, plan: &DriverPlan) -> Result<u32, Diagnostics> {
    let opts = driver_options(plan);
    let analysis = validate::analyze_history(driver, &opts);
    let budget = u64::from(plan.budget.event_budget);
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
        set_guard_limit(driver, &guard.state, n);
        match validate::analyze_history(driver, &opts).max_events {
            Some(max) if max <= budget => return Ok(n),
            Some(_) => n -= 1,
            None => return Err(no_bound()),
        }
    }
    Ok(n)
}

fn set_guard_limit(driver: &mut StateMachine, guard: &str, limit: u32) {
    if let Some(asl::State::Choice(c)) = driver.states.get_mut(guard) {
        for rule in &mut c.choices {
            if let Some(v) = rule.comparison.get_mut("NumericGreaterThanEquals") {
                *v = serde_json::Value::from(limit);
            }
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

fn pretty<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}
