//! Properties of compiled drivers that the mapping invariants rest on, checked on the
//! definitions themselves (the mapping tests check them again on executions).

use serde_json::{json, Value};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::sfn::asl::State;
use tpf_sfn_compiler::sfn::iam::all_states;
use tpf_sfn_compiler::sfn::names::{name_len, MAX_NAME};
use tpf_sfn_compiler::sfn::{Compiled as Output, StepFunctions};

const RESTAURANT: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");
const RESTAURANT_RELEASE: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-release.json");

fn build(contract: &[u8], binding: BindingKind, unverified: bool) -> Output {
    compile(
        &Input {
            contract_file: "contract.json",
            contract,
            binding: Some(binding),
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

/// The request object an action Task sends, whatever the binding.
fn action_request(task: &tpf_sfn_compiler::sfn::asl::TaskState) -> Option<Value> {
    let p = task.parameters.as_ref()?;
    p.get("RequestBody")
        .or_else(|| p.pointer("/Payload/request"))
        .or_else(|| p.pointer("/MessageBody/request"))
        .cloned()
}

#[test]
fn restaurant_has_a_named_await_state_and_every_action_carries_the_pinned_identity() {
    let out = compile(
        &Input {
            contract_file: "restaurant-approval.pipeline-contract.json",
            contract: RESTAURANT.as_bytes(),
            release: Some((
                "restaurant-approval.pipeline-release.json",
                RESTAURANT_RELEASE.as_bytes(),
            )),
            // The v1 driver's shape: one named state per await.
            binding: Some(BindingKind::Http),
            ..Input::default()
        },
        StepFunctions,
    )
    .unwrap();
    assert!(out.driver.states.contains_key("Await Restaurant Decision"));
    let release: Value = serde_json::from_str(RESTAURANT_RELEASE).unwrap();
    for binding in BindingKind::ALL {
        let out = build(RESTAURANT.as_bytes(), binding, false);
        let mut actions = 0;
        for machine in [&out.driver, out.sweeper.as_ref().unwrap()] {
            for state in all_states(machine) {
                let State::Task(task) = state else { continue };
                let Some(req) = action_request(task) else {
                    continue;
                };
                actions += 1;
                assert_eq!(req["pipelineId"], release["pipelineId"], "{binding:?}");
                assert_eq!(
                    req["contractVersion"], release["contractVersion"],
                    "{binding:?}"
                );
                assert_eq!(
                    req["releaseVersion"], release["releaseVersion"],
                    "{binding:?}"
                );
            }
        }
        assert_eq!(
            actions, 2,
            "process-work-item in the driver and sweep-once in the sweeper ({binding:?})"
        );
    }
}

#[test]
fn each_await_step_gets_one_commented_state_routed_by_authored_name() {
    let contract = synthetic(&[
        ("Prepare", "internal"),
        ("Await Approval", "await"),
        ("Ship", "internal"),
        ("Customer Reply", "await"),
    ]);
    let out = build(&contract, BindingKind::Queue, true);
    for (state, authored) in [
        ("Await Approval", "Await Approval"),
        ("Await: Customer Reply", "Customer Reply"),
    ] {
        let s = out
            .driver
            .states
            .get(state)
            .unwrap_or_else(|| panic!("missing {state}"));
        assert!(s.comment().unwrap_or("").contains(authored));
        let route = serde_json::to_value(&out.driver.states["Route on TPF status"]).unwrap();
        assert!(route["Choices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["Next"] == state
                && r["And"]
                    .as_array()
                    .is_some_and(|and| and.iter().any(|t| t["StringEquals"] == authored))));
    }
}

#[test]
fn colliding_and_overlong_step_names_get_deterministic_unique_names() {
    let long = "Await ".to_string() + &"very long approval step name ".repeat(7);
    let a = format!("{long}A");
    let b = format!("{long}B");
    let contract = synthetic(&[
        (&a, "await"),
        (&b, "await"),
        ("Await  X", "await"),
        ("Await X", "await"),
    ]);
    let first = build(&contract, BindingKind::Http, true);
    let second = build(&contract, BindingKind::Http, true);
    let names: Vec<&String> = first.sfn.await_states.iter().collect();
    assert_eq!(names, second.sfn.await_states.iter().collect::<Vec<_>>());
    let unique: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), 4, "{names:?}");
    for n in &names {
        assert!(name_len(n) <= MAX_NAME, "{n}");
        assert!(first.driver.states.contains_key(n.as_str()));
    }
}

#[test]
fn a_contract_without_awaits_still_parks_generically() {
    let out = build(
        &synthetic(&[("Only", "internal")]),
        BindingKind::Lambda,
        true,
    );
    assert!(out.driver.states.contains_key("Await external completion"));
    assert!(!out
        .driver
        .states
        .contains_key("Route to the parked await step"));
}

#[test]
fn transport_retries_never_cover_tpf_decisions() {
    for binding in BindingKind::ALL {
        let out = build(RESTAURANT.as_bytes(), binding, false);
        for state in all_states(&out.driver) {
            for r in state.retriers() {
                for e in &r.error_equals {
                    assert!(
                        !matches!(
                            e.as_str(),
                            "States.ALL"
                                | "States.TaskFailed"
                                | "TPF.ReleaseIdentityMismatch"
                                | "TPF.ExecutionNotFound"
                        ) && !e.ends_with(".409")
                            && !e.ends_with(".404"),
                        "{binding:?}: retrier covers {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn loop_is_sized_under_the_history_budget() {
    for binding in BindingKind::ALL {
        let out = build(RESTAURANT.as_bytes(), binding, false);
        let max = out
            .manifest
            .machines
            .driver
            .max_history_events
            .expect("bounded");
        assert!(max <= 20_000, "{binding:?}: {max}");
        assert!(
            out.sfn.budget.max_iterations > 100,
            "{binding:?}: {}",
            out.sfn.budget.max_iterations
        );
    }
}

/// `validate` proves what the compiler emits: the compiled sweeper's Map bound follows from the
/// sweep-once `limit` in the definition itself, so the validator needs no extra input and finds
/// the same bound as the manifest; a foreign definition with an unbounded Map still warns.
#[test]
fn the_validator_recognises_compiled_output_and_proves_the_manifest_bounds() {
    use tpf_sfn_compiler::sfn::validate::{validate, Profile, ValidateOptions};
    let contract = synthetic(&[("Prepare", "internal"), ("Await Approval", "await")]);
    for binding in BindingKind::ALL {
        let out = build(&contract, binding, true);
        let auto = ValidateOptions {
            profile: Profile::Auto,
            ..ValidateOptions::default()
        };
        for (machine, info) in [
            (&out.driver, &out.manifest.machines.driver),
            (
                out.sweeper.as_ref().unwrap(),
                out.manifest.machines.sweeper.as_ref().unwrap(),
            ),
        ] {
            let report = validate("f.asl.json", machine, &auto);
            assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
            assert_eq!(report.history.max_events, info.max_history_events);
        }
        // The same sweeper under another name is a foreign definition: no bound without one.
        let mut foreign = out.sweeper.clone().unwrap();
        foreign.comment = Some("someone's machine".into());
        let report = validate("f.asl.json", &foreign, &auto);
        let unproven: Vec<_> = report.with_code("ASL_HISTORY_UNPROVEN").collect();
        assert_eq!(unproven.len(), 1, "{:?}", report.diagnostics);
        assert!(unproven[0].hint.contains("--map-item-bound"));
        assert_eq!(report.history.max_events, None);
    }
}
