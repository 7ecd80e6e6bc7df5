//! What a coordination host costs on TPF's conformance scenarios, from the gateway world's
//! counts (virtual time, nothing timed): per scenario and engine, the driver generations, what
//! the engine bills (Step Functions Standard: state transitions; Lambda durable functions:
//! operations and the function's invocations), the gateway invocations by operation and the
//! starter's, and dollars per million runs at list prices, side by side in one run. A second
//! table gives each retry's lateness: how long after TPF's `nextDue` the driver's `SWEEP` put
//! the retry on TPF's work queue.
//! `docs/benchmarks.md` holds the figures; run with
//!
//! ```sh
//! cargo run -q -p tpf-sfn-mapping --example host_cost
//! ```

use std::collections::BTreeMap;

use tpf_durable_driver::GatewayRun;
use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::durable::gateway_engine::DurableGatewayEngine;
use tpf_sfn_mapping::gateway::catalogue::scenario;
use tpf_sfn_mapping::gateway::engine::GatewayEngine;
use tpf_sfn_mapping::gateway::scenarios::{run_in, setup_for};
use tpf_sfn_mapping::gateway::trace::{StartVia, Trace};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway::GatewayFunctions;
use tpf_sfn_mapping::sfn::gateway_engine::SfnGatewayEngine;
use tpf_wire::records::ExecutionStatus;

/// The scenarios measured: the plain path and the ones whose cost differs by design.
const SCENARIOS: &[&str] = &[
    "tpf-11-completion-after-binding",
    "tpf-10-completion-before-binding",
    "tpf-22-await-deadline",
    "tpf-21-retry-exhaustion-redrive",
    "second-await",
    "sequential-awaits",
    "concurrent-awaits",
    "registration-refused-until-deadline",
];

/// List prices (us-east-1): Step Functions Standard, per state transition; Lambda durable
/// functions, per operation; Lambda, per request. Compute duration and retained state are left
/// out on both sides.
const PER_TRANSITION: f64 = 25.0 / 1e6;
const PER_DURABLE_OPERATION: f64 = 8.0 / 1e6;
const PER_REQUEST: f64 = 0.20 / 1e6;

const STARTER: &str = "arn:aws:lambda:us-east-1:000000000000:function:tpf-sfn-starter";

/// `sweeper.mode = "schedule"` at EventBridge Scheduler's shortest rate.
const SCHEDULE: &str = "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(1 minute)\"\n";
const SCHEDULE_SECONDS: u64 = 60;
/// EventBridge Scheduler, per invocation.
const PER_SCHEDULED_INVOCATION: f64 = 1.0 / 1e6;

fn sfn_engine(setup: &Setup) -> SfnGatewayEngine {
    sfn_engine_with(setup, "")
}

/// The driver compiled for the scheduled sweep, in a world that sweeps on its schedule.
fn sfn_scheduled_engine(setup: &Setup) -> SfnGatewayEngine {
    sfn_engine_with(setup, SCHEDULE).with_scheduled_sweep(Some(SCHEDULE_SECONDS))
}

fn sfn_engine_with(setup: &Setup, extra: &str) -> SfnGatewayEngine {
    let await_seconds = (setup.longest_await_timeout_ms().max(1) + 999) / 1000;
    let toml = format!(
        "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{}\"\n\
         starter-function-arn = \"{STARTER}\"\nawait-timeout-seconds = {await_seconds}\n{extra}",
        gateway_version_arn()
    );
    let out = compile(
        &Input {
            config: Some(("tpf-sfn.toml", &toml)),
            ..bundled::august_restaurant_input()
        },
        StepFunctions,
    )
    .expect("the bundled contract compiles with the gateway binding");
    let functions = GatewayFunctions {
        gateway_arn: gateway_version_arn(),
        starter_arn: STARTER.into(),
    };
    SfnGatewayEngine::new(&out.sfn.machines.driver, out.driver, functions, T0)
        .expect("the compiled driver loads")
}

fn durable_engine(setup: &Setup) -> DurableGatewayEngine {
    durable_engine_with(setup, None)
}

/// The durable driver compiled for the scheduled sweep, in a world that sweeps on its schedule.
fn durable_scheduled_engine(setup: &Setup) -> DurableGatewayEngine {
    durable_engine_with(setup, Some(SCHEDULE_SECONDS))
}

fn durable_engine_with(setup: &Setup, scheduled: Option<u64>) -> DurableGatewayEngine {
    let longest_await_seconds =
        u64::try_from((setup.longest_await_timeout_ms().max(1) + 999) / 1000).unwrap_or(u64::MAX);
    DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds,
            scheduled_sweep: scheduled.is_some(),
        },
        T0,
    )
    .with_scheduled_sweep(scheduled)
}

/// What the engine bills for a run: (billed units described, dollars per run).
trait Billed {
    fn billed(&self) -> (String, f64);
}

impl Billed for SfnGatewayEngine {
    fn billed(&self) -> (String, f64) {
        let transitions = self.state_transitions();
        (
            format!("{transitions} transitions"),
            transitions as f64 * PER_TRANSITION,
        )
    }
}

impl Billed for DurableGatewayEngine {
    fn billed(&self) -> (String, f64) {
        let executions = self.engine().executions();
        let operations: u64 = executions.iter().map(|x| x.operations_billed).sum();
        let invocations: u64 = executions.iter().map(|x| x.invocations).sum();
        (
            format!("{operations} operations, {invocations} invocations"),
            operations as f64 * PER_DURABLE_OPERATION + invocations as f64 * PER_REQUEST,
        )
    }
}

/// One row of each table: the cost row, and the lateness row when the scenario retried.
struct Rows {
    cost: String,
    lateness: Option<String>,
}

fn row<E: GatewayEngine + Billed>(
    name: &str,
    engine_name: &str,
    make: impl Fn(&Setup) -> E,
) -> Rows {
    row_with(name, name, engine_name, None, make)
}

/// [`row`] with TPF's work items waiting `work_delay_ms` on TPF's queue before a work function
/// claims them (a busy worker pool): the drivers poll through every wait, which is where the
/// two sweep modes differ. `label` names the row.
fn row_with<E: GatewayEngine + Billed>(
    name: &str,
    label: &str,
    engine_name: &str,
    work_delay_ms: Option<i64>,
    make: impl Fn(&Setup) -> E,
) -> Rows {
    let info = scenario(name).expect("a catalogue scenario");
    let mut setup = setup_for(info);
    if let Some(delay) = work_delay_ms {
        setup.work_delay_ms = delay;
    }
    let engine = make(&setup);
    let (report, world) = run_in(info, setup, engine, &[]);
    let trace = world.trace();
    let lateness = lateness(trace).map(|l| format!("| {label} | {engine_name} | {l} |"));
    let mut by_op: BTreeMap<String, usize> = BTreeMap::new();
    for call in &trace.invocations {
        let op = call
            .operation
            .map_or_else(|| "unread".to_owned(), |o| o.as_str().to_owned());
        *by_op.entry(op).or_default() += 1;
    }
    let gateway_calls = trace.invocations.len();
    // Generations are the engine's driver executions. A Step Functions driver hands over
    // through the starter function (one more request); a durable one invokes its next
    // generation itself, which its own invocations already count.
    let generations = world.engine.drivers().len();
    let started_from_outside = trace
        .starts
        .iter()
        .filter(|s| s.via != StartVia::Driver)
        .count();
    let hand_overs = generations.saturating_sub(started_from_outside);
    let starter_billed = if engine_name.starts_with("Step Functions") {
        hand_overs
    } else {
        0
    };
    let (billed, engine_dollars) = world.engine.billed();
    let dollars = 1e6 * (engine_dollars + (gateway_calls + starter_billed) as f64 * PER_REQUEST);
    let ops = by_op
        .iter()
        .map(|(op, n)| format!("{op} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    // The schedule's sweeps are the deployment's, whatever runs: not billed to the run.
    let scheduled = match trace.scheduled_sweeps.len() {
        0 => String::new(),
        n => format!(" (and {n} scheduled SWEEP, the deployment's)"),
    };
    let cost = format!(
        "| {label} | {engine_name} | {} | {generations} | {billed} | {gateway_calls}: {ops}{scheduled} | {hand_overs} | {dollars:.0} |",
        if report.passed() { "yes" } else { "no" },
    );
    Rows { cost, lateness }
}

/// The retries' lateness against TPF's `nextDue`, in seconds: count, least, mean and most;
/// `None` when nothing was retried.
fn lateness(trace: &Trace) -> Option<String> {
    let late: Vec<f64> = trace
        .dispatches
        .iter()
        .filter(|d| d.status == ExecutionStatus::WaitRetry)
        .map(|d| (d.at_ms - d.next_due_ms) as f64 / 1000.0)
        .collect();
    if late.is_empty() {
        return None;
    }
    let least = late.iter().copied().fold(f64::INFINITY, f64::min);
    let most = late.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    Some(format!(
        "{} | {least:.0} | {mean:.1} | {most:.0}",
        late.len()
    ))
}

fn main() {
    println!(
        "| scenario | engine | passed | generations | billed by the engine | gateway calls (by operation) | hand-overs | $ per million runs |"
    );
    println!("| --- | --- | --- | ---: | --- | --- | ---: | ---: |");
    let mut late = Vec::new();
    for name in SCENARIOS {
        for rows in [
            row(name, "Step Functions", sfn_engine),
            row(
                name,
                "Step Functions, scheduled sweep",
                sfn_scheduled_engine,
            ),
            row(name, "Lambda durable functions", durable_engine),
            row(
                name,
                "Lambda durable functions, scheduled sweep",
                durable_scheduled_engine,
            ),
        ] {
            println!("{}", rows.cost);
            late.extend(rows.lateness);
        }
    }
    // The plain path with each work item queued for 20 minutes before it runs.
    const BUSY: i64 = 20 * 60 * 1000;
    let (name, label) = (
        "tpf-11-completion-after-binding",
        "tpf-11, each work item queued 20 min",
    );
    for rows in [
        row_with(name, label, "Step Functions", Some(BUSY), sfn_engine),
        row_with(
            name,
            label,
            "Step Functions, scheduled sweep",
            Some(BUSY),
            sfn_scheduled_engine,
        ),
        row_with(
            name,
            label,
            "Lambda durable functions",
            Some(BUSY),
            durable_engine,
        ),
        row_with(
            name,
            label,
            "Lambda durable functions, scheduled sweep",
            Some(BUSY),
            durable_scheduled_engine,
        ),
    ] {
        println!("{}", rows.cost);
    }
    println!();
    println!("| scenario | engine | retries | least late (s) | mean (s) | most (s) |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for l in late {
        println!("{l}");
    }
    // The scheduled sweep's own price: one scheduler invocation and one gateway request per
    // period, per deployment (every release of a configuration shares it).
    let per_month = 30.0 * 86_400.0 / SCHEDULE_SECONDS as f64;
    println!();
    println!(
        "The scheduled sweep (rate(1 minute)): {per_month:.0} sweeps a month, ${:.3} a month per deployment (EventBridge Scheduler and the gateway's requests; the gateway's compute left out, as above).",
        per_month * (PER_SCHEDULED_INVOCATION + PER_REQUEST)
    );
}
