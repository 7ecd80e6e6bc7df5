//! What a coordination host costs on TPF's conformance scenarios, from the gateway world's
//! counts (virtual time, nothing timed): per scenario, the driver generations, what the engine
//! bills (Step Functions Standard: state transitions), the gateway invocations by operation and
//! the starter's, and dollars per million runs at list prices. `docs/benchmarks.md` holds the
//! figures; run with
//!
//! ```sh
//! cargo run -q -p tpf-sfn-mapping --example host_cost
//! ```

use std::collections::BTreeMap;

use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::gateway::catalogue::scenario;
use tpf_sfn_mapping::gateway::scenarios::{run_scenario_in, setup_for};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway::GatewayFunctions;
use tpf_sfn_mapping::sfn::gateway_engine::SfnGatewayEngine;

/// The scenarios measured: the plain path and the ones whose cost differs by design.
const SCENARIOS: &[&str] = &[
    "tpf-11-completion-after-binding",
    "tpf-10-completion-before-binding",
    "tpf-22-await-deadline",
    "tpf-21-retry-exhaustion-redrive",
    "second-await",
    "sequential-awaits",
    "concurrent-awaits",
];

/// List prices (us-east-1): Step Functions Standard, per state transition; Lambda, per request.
const PER_TRANSITION: f64 = 25.0 / 1e6;
const PER_REQUEST: f64 = 0.20 / 1e6;

const STARTER: &str = "arn:aws:lambda:us-east-1:000000000000:function:tpf-sfn-starter";

fn sfn_engine(setup: &Setup) -> SfnGatewayEngine {
    let await_seconds = (setup.longest_await_timeout_ms().max(1) + 999) / 1000;
    let toml = format!(
        "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{}\"\n\
         starter-function-arn = \"{STARTER}\"\nawait-timeout-seconds = {await_seconds}\n",
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

fn main() {
    println!(
        "| scenario | passed | generations | transitions | gateway calls (by operation) | starter calls | $ per million runs |"
    );
    println!("| --- | --- | ---: | ---: | --- | ---: | ---: |");
    for name in SCENARIOS {
        let info = scenario(name).expect("a catalogue scenario");
        let (report, world) = run_scenario_in(info, sfn_engine(&setup_for(info)), &[]);
        let trace = world.trace();
        let mut by_op: BTreeMap<String, usize> = BTreeMap::new();
        for call in &trace.invocations {
            let op = call
                .operation
                .map_or_else(|| "unread".to_owned(), |o| o.as_str().to_owned());
            *by_op.entry(op).or_default() += 1;
        }
        let gateway_calls = trace.invocations.len();
        let starter_calls = trace
            .starts
            .iter()
            .filter(|s| matches!(s.via, tpf_sfn_mapping::gateway::trace::StartVia::Driver))
            .count();
        let transitions = world.engine.state_transitions();
        let dollars = 1e6
            * (transitions as f64 * PER_TRANSITION
                + (gateway_calls + starter_calls) as f64 * PER_REQUEST);
        let ops = by_op
            .iter()
            .map(|(op, n)| format!("{op} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        println!(
            "| {name} | {} | {} | {transitions} | {gateway_calls}: {ops} | {starter_calls} | {dollars:.0} |",
            if report.passed() { "yes" } else { "no" },
            trace.starts.len(),
        );
    }
}
