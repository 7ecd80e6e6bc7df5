//! Drivers that never stop on their own get a verdict anyway: each runaway shape is built from
//! the compiled restaurant driver, and each test asserts both verdicts — the validator's
//! (`ASL_LOOP_UNPACED`, which `proof::prove` reports before running anything) and the dynamic
//! one a scenario gives when the static gate is bypassed (the named checks of the "paced by
//! TPF" family, after the run budget stopped the engine).

use serde_json::{json, Value};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_compiler::sfn::validate::{self, Profile, ValidateOptions};
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::matrix;
use tpf_sfn_mapping::sfn::Subject;

fn subject() -> Subject {
    proof::subject(&proof::august_restaurant_v1_input(), None).expect("restaurant compiles")
}

fn broken(edit: impl FnOnce(&mut Value)) -> Subject {
    let mut s = subject();
    let mut v = serde_json::to_value(&s.program.driver).unwrap();
    edit(&mut v);
    s.program.driver = asl::from_value("runaway-driver.asl.json", v).expect("edited driver parses");
    s
}

const ROUTE: &str = "/States/Route on TPF status/Choices";

/// Points every route rule whose target is `from` at `to`.
fn reroute(d: &mut Value, from: &str, to: &str) {
    for c in d.pointer_mut(ROUTE).unwrap().as_array_mut().unwrap() {
        if c["Next"] == from {
            c["Next"] = json!(to);
        }
    }
}

fn static_codes(s: &Subject) -> Vec<String> {
    let opts = ValidateOptions {
        event_limit: u64::from(s.program.sfn.budget.event_budget),
        profile: Profile::TpfDriver,
        ..ValidateOptions::default()
    };
    validate::validate("driver", &s.program.driver, &opts)
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code.to_string())
        .collect()
}

/// The verdict `proof::prove` gives: the static report alone, naming the unpaced loop.
fn assert_static_verdict(s: &Subject) {
    let codes = static_codes(s);
    assert!(codes.iter().any(|c| c == "ASL_LOOP_UNPACED"), "{codes:?}");
    let reports = proof::prove(s, &matrix::derive(s), proof::SEED);
    assert_eq!(
        reports.len(),
        1,
        "no scenario runs after a static rejection"
    );
    assert_eq!(reports[0].name, proof::STATIC_CHECKS);
    assert!(!reports[0].passed());
    assert!(reports[0]
        .violations
        .iter()
        .all(|v| v.invariant == "definition-within-limits"));
    assert!(reports[0]
        .violations
        .iter()
        .any(|v| v.detail.contains("ASL_LOOP_UNPACED")));
}

/// Runs one derived scenario past the static gate and returns the failed checks.
fn dynamic_verdict(s: &Subject, scenario: &str) -> (Vec<&'static str>, bool) {
    let sc = matrix::derive(s)
        .into_iter()
        .find(|x| x.name == scenario)
        .unwrap_or_else(|| panic!("no scenario {scenario}"));
    let r = proof::run_one(s, &sc, proof::SEED);
    assert!(r.error.is_none(), "{:?}", r.error);
    let mut names: Vec<_> = r.violations.iter().map(|v| v.invariant).collect();
    names.sort_unstable();
    names.dedup();
    let budget_spent = r
        .violations
        .iter()
        .any(|v| v.invariant == "run-within-budget" && v.detail.contains("was stopped"));
    (names, budget_spent)
}

#[test]
fn a_retry_branch_that_skips_its_wait_is_stopped_and_named() {
    let s = broken(|d| reroute(d, "Wait until due", "Process work item"));
    assert_static_verdict(&s);
    let (failed, _) = dynamic_verdict(&s, "retries-then-success");
    for check in [
        "run-within-budget",
        "calls-paced-by-tpf",
        "respects-tpf-due-time",
    ] {
        assert!(failed.contains(&check), "{check}: {failed:?}");
    }
    // The rollover scenario is where this shape grew without bound before the budget.
    let (failed, spent) = dynamic_verdict(&s, "history-rollover");
    assert!(spent, "{failed:?}");
    assert!(failed.contains(&"calls-paced-by-tpf"), "{failed:?}");
}

#[test]
fn a_parked_route_that_skips_the_await_is_stopped_and_named() {
    let s = broken(|d| reroute(d, "Await Restaurant Decision", "Process work item"));
    assert_static_verdict(&s);
    let (failed, spent) = dynamic_verdict(&s, "happy-path");
    assert!(spent, "{failed:?}");
    for check in [
        "run-within-budget",
        "calls-paced-by-tpf",
        "generations-paced",
        "routes-follow-tpf-outcome",
    ] {
        assert!(failed.contains(&check), "{check}: {failed:?}");
    }
}

#[test]
fn a_zero_second_wait_in_the_loop_is_stopped_and_named() {
    let s = broken(|d| {
        *d.pointer_mut("/States/Wait for lease/Seconds").unwrap() = json!(0);
    });
    assert_static_verdict(&s);
    // The counted loop ends the spin (its guard waits for the lease before handing over), so
    // this one stays within the budget; the pace checks name it.
    let (failed, _) = dynamic_verdict(&s, "lease-held-elsewhere");
    for check in ["calls-paced-by-tpf", "lease-wait-bounded"] {
        assert!(failed.contains(&check), "{check}: {failed:?}");
    }
}

#[test]
fn continue_as_new_on_every_iteration_is_stopped_and_named() {
    // A loop limit of 0: every answer hands over at once, and each new generation does the
    // same at the same virtual instant, so the horizon is never reached.
    let s = broken(|d| {
        for c in d.pointer_mut(ROUTE).unwrap().as_array_mut().unwrap() {
            let text = c.to_string();
            if text.contains("NumericGreaterThanEquals") {
                *c = serde_json::from_str(&with_limit_zero(&text)).unwrap();
            }
        }
    });
    assert_static_verdict(&s);
    let (failed, spent) = dynamic_verdict(&s, "happy-path");
    assert!(spent, "{failed:?}");
    for check in ["run-within-budget", "generations-paced"] {
        assert!(failed.contains(&check), "{check}: {failed:?}");
    }
}

/// `"NumericGreaterThanEquals":N` with N set to 0, in a rule's JSON text.
fn with_limit_zero(text: &str) -> String {
    let key = "\"NumericGreaterThanEquals\":";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        rest = rest[i + key.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('0');
    }
    out.push_str(rest);
    out
}

#[test]
fn a_self_loop_is_stopped_and_named() {
    let s = broken(|d| {
        d["States"]["Execution succeeded"] = json!({"Type": "Pass", "Next": "Execution succeeded"});
    });
    assert_static_verdict(&s);
    let (failed, spent) = dynamic_verdict(&s, "happy-path");
    assert!(spent, "{failed:?}");
    assert!(failed.contains(&"run-within-budget"), "{failed:?}");
}

#[test]
fn a_huge_map_fan_out_is_stopped_and_named() {
    // A million iterations (a thousand times a thousand) where TPF said SUCCEEDED: no bound on
    // its items, so no history proof, and the run stops at its budget.
    let inner = json!({
        "StartAt": "Item", "States": {"Item": {"Type": "Pass", "End": true}}
    });
    let s = broken(|d| {
        d["States"]["Execution succeeded"] = json!({
            "Type": "Pass",
            "Parameters": {"items.$": "States.ArrayRange(1, 1000, 1)"},
            "Next": "Fan out"
        });
        d["States"]["Fan out"] = json!({
            "Type": "Map",
            "ItemsPath": "$.items",
            "ItemSelector": {"items.$": "States.ArrayRange(1, 1000, 1)"},
            "ItemProcessor": {
                "StartAt": "Inner",
                "States": {"Inner": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": inner, "End": true}}
            },
            "End": true
        });
    });
    let (failed, _) = dynamic_verdict(&s, "happy-path");
    assert!(
        failed.contains(&"history-within-proven-bound"),
        "{failed:?}"
    );
    assert!(failed.contains(&"run-within-budget"), "{failed:?}");
}

#[test]
fn the_compiled_driver_has_no_unpaced_loop() {
    let s = subject();
    assert!(static_codes(&s).is_empty(), "{:?}", static_codes(&s));
}
