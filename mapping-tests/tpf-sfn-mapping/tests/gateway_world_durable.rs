//! The gateway world on Lambda durable functions: the gateway driver
//! (`tpf_durable_driver::gateway`) on the replay engine, its park timeout the scenario
//! pipeline's longest await, against every runnable scenario of the catalogue. Every scenario
//! passes and keeps every check, except the [`KNOWN`] differences of the replay engine,
//! each of which must still fail exactly as listed (so fixing one makes this test say so).

use tpf_durable_driver::GatewayRun;
use tpf_sfn_mapping::durable::gateway_engine::DurableGatewayEngine;
use tpf_sfn_mapping::gateway::catalogue::{scenario, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::scenarios::{run_catalogue, run_scenario, unexpected};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway_proof::DURABLE_ENGINE_KNOWN;

/// Where the replay engine is not yet the service, and what the scenario then reports
/// (`gateway_proof::DURABLE_ENGINE_KNOWN` says why, for `mapping-test` too).
const KNOWN: [(&str, &str); 3] = DURABLE_ENGINE_KNOWN;

#[test]
fn every_runnable_scenario_keeps_every_check_on_lambda_durable_functions() {
    let reports = run_catalogue(|s: &Setup| {
        let longest_await_seconds =
            u64::try_from((s.longest_await_timeout_ms().max(1) + 999) / 1000).unwrap_or(u64::MAX);
        DurableGatewayEngine::new(
            &gateway_version_arn(),
            GatewayRun {
                longest_await_seconds,
            },
            T0,
        )
    });
    assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
    let mut broken = Vec::new();
    for r in &reports {
        // The protocol's findings fail by their own assertion on every engine.
        let known = KNOWN.iter().any(|(name, _)| *name == r.name);
        if let Some(f) = FINDINGS.iter().find(|f| !known && f.scenario == r.name) {
            let says = r.outcome.as_ref().err();
            assert!(
                says.is_some_and(|e| e.contains(f.fails_with)),
                "{}: a finding that no longer fails as declared: {says:?}",
                r.name
            );
            continue;
        }
        match KNOWN.iter().find(|(name, _)| *name == r.name) {
            Some((_, says)) => {
                let e = r.outcome.as_ref().expect_err(r.name);
                assert!(e.contains(says), "{}: {e}", r.name);
            }
            None if !r.passed() || !r.violations.is_empty() => {
                broken.push(format!("{}: {:?} {:?}", r.name, r.outcome, r.violations))
            }
            None => {}
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// TPF's durable driver sets no callback timeout: its callback waits until the durable
/// execution's own timeout (TPF's template: `DurableExecutionTimeoutSeconds`, 2,592,000 s by
/// default). The driver program with that as its park is TPF's host's gap, and fails by name.
#[test]
fn tpfs_host_gap_a_durable_park_without_timeout_breaks_await_deadline_while_parked() {
    const EXECUTION_TIMEOUT_SECONDS: u64 = 2_592_000;
    let info = scenario("tpf-22-await-deadline").unwrap();
    let engine = DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds: EXECUTION_TIMEOUT_SECONDS,
        },
        T0,
    );
    let report = run_scenario(info, engine, &[]);
    assert!(!unexpected(std::slice::from_ref(&report)).is_empty());
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.check == GatewayCheck::AwaitDeadlineWhileParked),
        "{:?} {:?}",
        report.outcome,
        report.violations
    );
}
