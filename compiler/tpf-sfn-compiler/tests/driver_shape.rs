//! Properties of compiled drivers that the mapping invariants rest on, checked on the
//! definitions themselves (the mapping tests check them again on executions), on both of the
//! gateway binding's transports.

use serde_json::{json, Value};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::iam::all_states;
use tpf_sfn_compiler::sfn::states::gateway as states;
use tpf_sfn_compiler::sfn::{Compiled as Output, StepFunctions};

const RESTAURANT: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");

const TRANSPORTS: [&str; 2] = ["lambda", "queue"];

fn build(contract: &[u8], transport: &str, unverified: bool) -> Output {
    let config = format!("[binding.gateway]\ntransport = \"{transport}\"\n");
    compile(
        &Input {
            contract_file: "contract.json",
            contract,
            config: Some(("tpf-sfn.toml", &config)),
            allow_unverified_hash: unverified,
            ..Input::default()
        },
        StepFunctions,
    )
    .unwrap_or_else(|d| panic!("compile failed:\n{d}"))
}

/// A contract with the given steps; its hash is not recomputed, so callers pass
/// `allow_unverified_hash`.
fn synthetic(steps: &[(&str, &str)]) -> Vec<u8> {
    let steps: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, (name, kind))| {
            let mut s = json!({
                "index": i, "authoredName": name, "kind": kind, "cardinality": "ONE_TO_ONE",
                "inputTypeId": "t.In", "outputTypeId": "t.Out", "runtimeClass": "t.Svc", "clientClass": "t.Client"
            });
            if *kind == "await" {
                s["awaitTransport"] = json!("interaction-api");
            }
            s
        })
        .collect();
    serde_json::to_vec(&json!({
        "schemaVersion": 1, "pipelineId": "org.example.synthetic",
        "contractVersion": "sha256:00", "contractHash": "00",
        "platform": "COMPUTE", "transport": "REST", "pluginHost": false,
        "steps": steps, "canonicalTypes": {},
        "canonicalCatalogFingerprint": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        "capabilities": {"localTransitionExecution": true, "transitionWorkerProtocols": ["local", "rest", "grpc", "sqs"]}
    }))
    .unwrap()
}

/// Every await's `stateName` in the manifest is a state of the compiled definition (the park
/// state), whatever the step names: the console finds a parked driver where the manifest says.
#[test]
fn every_manifest_state_name_is_a_state_of_the_definition() {
    let long = "Await ".to_string() + &"very long approval step name ".repeat(7);
    let contract = synthetic(&[
        (&long, "await"),
        ("Await  X", "await"),
        ("Hand over to the next generation", "await"),
    ]);
    for transport in TRANSPORTS {
        for out in [
            build(&contract, transport, true),
            build(RESTAURANT.as_bytes(), transport, false),
        ] {
            // As written: the manifest file's names against the definition file's states.
            let file = |name: &str| -> Value {
                let (_, text) = out.files.iter().find(|(n, _)| n == name).unwrap();
                serde_json::from_str(text).unwrap()
            };
            let (manifest, definition) = (file("manifest.json"), file("driver.asl.json"));
            let awaits = manifest["contract"]["awaitSteps"].as_array().unwrap();
            assert!(!awaits.is_empty());
            for a in awaits {
                let name = a["stateName"]
                    .as_str()
                    .expect("a Step Functions await names its state");
                assert!(
                    definition["States"].get(name).is_some(),
                    "{name} is not a state of the definition"
                );
                assert_eq!(name, states::PARK);
            }
        }
    }
}

/// Only the call's transport is retried, never what TPF decided (a function error carries
/// TPF's exception class), except on SUBMIT, which TPF's driver retries on any error.
#[test]
fn transport_retries_never_cover_tpf_decisions() {
    for transport in TRANSPORTS {
        let out = build(RESTAURANT.as_bytes(), transport, false);
        let mut retried = 0;
        for (name, state) in &out.driver.states {
            if name == states::SUBMIT {
                continue;
            }
            for r in state.retriers() {
                retried += 1;
                for e in &r.error_equals {
                    assert!(
                        !matches!(e.as_str(), "States.ALL" | "States.TaskFailed")
                            && !e.starts_with("TPF"),
                        "{transport}: {name}'s retrier covers {e}"
                    );
                }
            }
        }
        assert!(retried > 0, "{transport}: the calls' transport is retried");
        let submit = &out.driver.states[states::SUBMIT];
        assert!(submit
            .retriers()
            .iter()
            .any(|r| r.error_equals.iter().any(|e| e == "States.ALL")));
    }
}

#[test]
fn loop_is_sized_under_the_history_budget() {
    for transport in TRANSPORTS {
        let out = build(RESTAURANT.as_bytes(), transport, false);
        let max = out
            .manifest
            .machines
            .driver
            .max_history_events
            .expect("bounded");
        assert!(max <= 20_000, "{transport}: {max}");
        assert!(
            out.sfn.budget.max_iterations > 100,
            "{transport}: {}",
            out.sfn.budget.max_iterations
        );
    }
}

/// `validate` proves what the compiler emits: it recognises the compiled driver by its comment
/// and finds the same bound as the manifest, with no extra input.
#[test]
fn the_validator_recognises_compiled_output_and_proves_the_manifest_bounds() {
    use tpf_sfn_compiler::sfn::validate::{validate, Profile, ValidateOptions};
    let contract = synthetic(&[("Prepare", "internal"), ("Await Approval", "await")]);
    for transport in TRANSPORTS {
        let out = build(&contract, transport, true);
        let auto = ValidateOptions {
            profile: Profile::Auto,
            ..ValidateOptions::default()
        };
        let report = validate("f.asl.json", &out.driver, &auto);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        assert_eq!(
            report.history.max_events,
            out.manifest.machines.driver.max_history_events
        );
        assert!(all_states(&out.driver).len() > 10);
    }
}
