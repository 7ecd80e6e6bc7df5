//! The gateway world on Step Functions: the driver compiled from August 2026's Restaurant
//! Approval with the gateway binding (its park timeout the scenario pipeline's longest await,
//! through `await-timeout-seconds`), run on the ASL interpreter through the gateway Task
//! binding, against every runnable scenario of the catalogue.

use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::gateway::catalogue::CATALOGUE;
use tpf_sfn_mapping::gateway::scenarios::run_catalogue;
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway::GatewayFunctions;
use tpf_sfn_mapping::sfn::gateway_engine::SfnGatewayEngine;

const STARTER: &str = "arn:aws:lambda:us-east-1:000000000000:function:tpf-sfn-starter";

fn engine(transport: &str) -> impl FnMut(&Setup) -> SfnGatewayEngine + '_ {
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
        SfnGatewayEngine::new(&out.sfn.machines.driver, out.driver, functions, T0).unwrap()
    }
}

/// TPF's scenarios whose own expectation is the durable submitter's: a failed
/// REGISTER_CALLBACK retried under the same callback id in the same generation. A retried Step
/// Functions task has a new task token, so the gateway driver hands over instead and the next
/// generation registers (`docs/runtime.md`). They break no invariant; their scenario's
/// expectation names the difference.
const SUBMITTER_RETRY: [(&str, &str); 2] = [
    (
        "tpf-08-submitter-failure-before-binding",
        "generation 1 registers",
    ),
    (
        "tpf-09-binding-before-submitter-checkpoint",
        "bindingCreated",
    ),
];

#[test]
fn every_runnable_scenario_passes_every_check_on_step_functions() {
    for transport in ["lambda", "queue"] {
        let reports = run_catalogue(engine(transport));
        assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
        let mut failed = Vec::new();
        for r in &reports {
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
