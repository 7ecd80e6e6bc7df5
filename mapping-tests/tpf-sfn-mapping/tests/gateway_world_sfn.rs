//! The gateway world on Step Functions: the driver compiled from August 2026's Restaurant
//! Approval with the gateway binding (its park timeout the scenario pipeline's longest await,
//! through `await-timeout-seconds`), run on the ASL interpreter through the gateway Task
//! binding, against every runnable scenario of the catalogue.

use serde_json::Value;
use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::asl::{self, StateMachine};
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::gateway::catalogue::{scenario, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::scenarios::{run_catalogue, run_scenario, setup_for, unexpected};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway::GatewayFunctions;
use tpf_sfn_mapping::sfn::gateway_engine::SfnGatewayEngine;
use tpf_sfn_mapping::sfn::gateway_proof::{STARTER, SUBMITTER_RETRY};

fn engine(transport: &str) -> impl FnMut(&Setup) -> SfnGatewayEngine + '_ {
    mutated_engine(transport, |_| {})
}

/// The engine over the compiled driver, its definition changed by `mutate` first (a driver
/// with one of TPF's host's gaps).
fn mutated_engine<'a>(
    transport: &'a str,
    mutate: impl Fn(&mut Value) + 'a,
) -> impl FnMut(&Setup) -> SfnGatewayEngine + 'a {
    move |s: &Setup| {
        let await_seconds = (s.longest_await_timeout_ms().max(1) + 999) / 1000;
        let toml = format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{}\"\n\
             transport = \"{transport}\"\nqueue-url = \"http://localhost:4566/000000000000/tpf-gateway\"\n\
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
        .unwrap();
        let functions = GatewayFunctions {
            gateway_arn: gateway_version_arn(),
            starter_arn: STARTER.into(),
        };
        let mut definition = serde_json::to_value(&out.driver).unwrap();
        mutate(&mut definition);
        let driver: StateMachine = asl::from_value("driver.asl.json", definition).unwrap();
        SfnGatewayEngine::new(&out.sfn.machines.driver, driver, functions, T0).unwrap()
    }
}

#[test]
fn every_runnable_scenario_passes_every_check_on_step_functions() {
    for transport in ["lambda", "queue"] {
        let reports = run_catalogue(engine(transport));
        assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
        let mut failed = Vec::new();
        for r in &reports {
            // The protocol's findings fail by their own assertion and the checks they name,
            // as on the test double; one that passes now must leave FINDINGS.
            if FINDINGS.iter().any(|f| f.scenario == r.name) {
                assert!(
                    !r.passed(),
                    "{transport}: {}: a finding that passes",
                    r.name
                );
                failed.extend(unexpected(std::slice::from_ref(r)));
                continue;
            }
            assert!(
                r.violations.is_empty(),
                "{transport}: {}: {:?}",
                r.name,
                r.violations
            );
            match SUBMITTER_RETRY.iter().find(|(name, _)| *name == r.name) {
                Some((_, expectation)) => {
                    let e = r.outcome.as_ref().expect_err(r.name);
                    assert!(e.contains(expectation), "{transport}: {}: {e}", r.name);
                }
                None if !r.passed() => failed.push(format!("{}: {:?}", r.name, r.outcome)),
                None => {}
            }
        }
        assert!(failed.is_empty(), "{transport}:\n{}", failed.join("\n"));
    }
}

/// The lateness `docs/benchmarks.md` reports, held to what the driver's wait ladder allows: a
/// retry goes on TPF's work queue no earlier than its `nextDue` (the sweep enqueues only due
/// work) and no later than one poll interval after it, 300 s at most.
#[test]
fn retries_are_queued_after_tpfs_next_due_within_one_poll_interval() {
    use tpf_sfn_mapping::gateway::catalogue::scenario;
    use tpf_sfn_mapping::gateway::scenarios::{run_in, setup_for};
    use tpf_wire::records::ExecutionStatus;

    let info = scenario("tpf-21-retry-exhaustion-redrive").unwrap();
    let setup = setup_for(info);
    let eng = engine("lambda")(&setup);
    let (report, world) = run_in(info, setup, eng, &[]);
    assert!(report.passed(), "{report:?}");
    let retries: Vec<_> = world
        .trace()
        .dispatches
        .iter()
        .filter(|d| d.status == ExecutionStatus::WaitRetry)
        .collect();
    assert!(!retries.is_empty(), "the scenario retries");
    for d in retries {
        let late = d.at_ms - d.next_due_ms;
        assert!(
            (0..=300_000).contains(&late),
            "a retry queued {late} ms after its nextDue: {d:?}"
        );
    }
}

/// Runs `name` on the compiled driver changed by `mutate`: it fails, and by `check`.
fn fails_by(name: &str, mutate: impl Fn(&mut Value), check: GatewayCheck) {
    let info = scenario(name).unwrap();
    let mut make = mutated_engine("lambda", mutate);
    run_scenario(info, make(&setup_for(info)), &[])
        .failed_by(check)
        .unwrap();
}

/// The driver's states, by name.
fn states(definition: &mut Value) -> &mut serde_json::Map<String, Value> {
    definition["States"].as_object_mut().unwrap()
}

/// TPF's driver sets no callback timeout: the compiled park without its `TimeoutSeconds`.
fn park_without_timeout(definition: &mut Value) {
    let parks: Vec<String> = states(definition)
        .iter()
        .filter(|(_, s)| {
            s["Catch"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["ErrorEquals"] == serde_json::json!(["States.Timeout"]))
            })
        })
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(parks.len(), 1, "one park: {parks:?}");
    let park = states(definition).get_mut(&parks[0]).unwrap();
    assert!(park
        .as_object_mut()
        .unwrap()
        .remove("TimeoutSeconds")
        .is_some());
}

/// TPF's driver parks at every await: the route's "waiting again after a park hands over"
/// choice removed, so a second await parks again in the same generation.
fn park_at_every_await(definition: &mut Value) {
    let mut removed = 0;
    for state in states(definition).values_mut() {
        if let Some(choices) = state["Choices"].as_array_mut() {
            let before = choices.len();
            choices.retain(|c| {
                !c["And"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|t| t["BooleanEquals"] == Value::Bool(true)))
            });
            removed += before - choices.len();
        }
    }
    assert_eq!(removed, 1, "one hand-over choice");
}

#[test]
fn tpfs_host_gap_a_step_functions_park_without_timeout_breaks_await_deadline_while_parked() {
    fails_by(
        "tpf-22-await-deadline",
        park_without_timeout,
        GatewayCheck::AwaitDeadlineWhileParked,
    );
}

#[test]
fn tpfs_host_gap_a_step_functions_second_park_in_a_generation_breaks_one_callback_per_generation() {
    fails_by(
        "second-await",
        park_at_every_await,
        GatewayCheck::OneCallbackPerGeneration,
    );
}
