//! Every invariant check can fail: each test breaks the driver (or the bridge) the way a real
//! mistake would, runs a scenario, and asserts the named check rejects it.

use serde_json::{json, Value};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::{matrix, Scenario};
use tpf_sfn_mapping::sfn::Subject;

fn subject() -> Subject {
    let input = proof::august_restaurant_v1_input();
    proof::subject(&input, None).expect("restaurant compiles")
}

/// The subject with its driver edited as JSON.
fn broken(edit: impl FnOnce(&mut Value)) -> Subject {
    let mut s = subject();
    let mut v = serde_json::to_value(&s.program.driver).unwrap();
    edit(&mut v);
    s.program.driver =
        asl::from_value("broken-driver.asl.json", v).expect("edited driver still parses");
    s
}

fn scenario(s: &Subject, name: &str) -> Scenario {
    matrix::derive(s)
        .into_iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

/// Runs `scenario` on `subject` and returns the names of the checks that failed.
fn failed_checks(subject: &Subject, scenario: &Scenario) -> Vec<&'static str> {
    let r = proof::run_one(subject, scenario, proof::SEED);
    assert!(r.error.is_none(), "{:?}", r.error);
    let mut names: Vec<_> = r.violations.iter().map(|v| v.invariant).collect();
    names.dedup();
    names
}

fn assert_fails(subject: &Subject, scenario_name: &str, check: &str) {
    let s = scenario(subject, scenario_name);
    let failed = failed_checks(subject, &s);
    assert!(
        failed.contains(&check),
        "expected {check} to fail on {scenario_name}, got {failed:?}"
    );
}

const PROCESS: &str = "/States/Process work item";
const AWAIT: &str = "/States/Await Restaurant Decision";

#[test]
fn the_unbroken_driver_passes_every_check_on_every_scenario() {
    let s = subject();
    for sc in matrix::derive(&s) {
        let r = proof::run_one(&s, &sc, proof::SEED);
        assert!(
            r.passed(),
            "{}: {:?} {:?} {:?}\n{}",
            sc.name,
            r.error,
            r.unmet_expectations,
            r.violations,
            r.trace
        );
    }
}

#[test]
fn dropping_the_pinned_identity_from_a_call_is_caught() {
    let s = broken(|d| {
        d.pointer_mut(&format!("{PROCESS}/Parameters/RequestBody"))
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("releaseVersion");
    });
    assert_fails(&s, "happy-path", "calls-carry-pinned-identity");
}

#[test]
fn polling_instead_of_parking_is_caught() {
    let s = broken(|d| {
        *d.pointer_mut(AWAIT).unwrap() =
            json!({"Type": "Wait", "Seconds": 60, "Next": "Process work item"});
    });
    assert_fails(&s, "happy-path", "parks-without-polling");
}

#[test]
fn resuming_an_await_without_tpf_is_caught() {
    let s = broken(|d| {
        *d.pointer_mut(&format!("{AWAIT}/Next")).unwrap() = json!("Execution succeeded");
    });
    let sc = scenario(&s, "happy-path");
    let failed = failed_checks(&s, &sc);
    assert!(failed.contains(&"resume-goes-through-tpf"), "{failed:?}");
    assert!(failed.contains(&"driver-ends-as-tpf-ends"), "{failed:?}");
}

#[test]
fn ignoring_next_due_at_is_caught() {
    let s = broken(|d| {
        *d.pointer_mut("/States/Wait until due").unwrap() =
            json!({"Type": "Wait", "Seconds": 1, "Next": "Process work item"});
    });
    assert_fails(&s, "retries-then-success", "respects-tpf-due-time");
}

#[test]
fn a_driver_without_rollover_is_caught() {
    // The route forgets the budget check: nothing ever rolls over.
    let s = broken(|d| {
        d.pointer_mut("/States/Route on TPF status/Choices")
            .unwrap()
            .as_array_mut()
            .unwrap()
            .retain(|rule| !rule.to_string().contains("nextIteration"));
    });
    let sc = scenario(&s, "history-rollover");
    let failed = failed_checks(&s, &sc);
    assert!(
        failed.contains(&"history-within-proven-bound"),
        "{failed:?}"
    );
    assert!(failed.contains(&"definition-within-limits"), "{failed:?}");
}

#[test]
fn retrying_business_failures_in_step_functions_is_caught() {
    let s = broken(|d| {
        d.pointer_mut(&format!("{PROCESS}/Retry"))
            .unwrap()
            .as_array_mut()
            .unwrap()
            .push(json!({"ErrorEquals": ["States.ALL"], "MaxAttempts": 3}));
    });
    assert_fails(&s, "happy-path", "transport-only-retries");
}

#[test]
fn writing_to_a_tpf_table_is_caught() {
    let s = broken(|d| {
        *d.pointer_mut("/States/Register driver generation/Parameters/TableName")
            .unwrap() = json!("tpf_execution");
    });
    assert_fails(&s, "happy-path", "writes-only-the-wakeup-table");
}

#[test]
fn routing_a_retry_to_the_wrong_wait_is_caught() {
    let s = broken(|d| {
        let choices = d
            .pointer_mut("/States/Route on TPF status/Choices")
            .unwrap()
            .as_array_mut()
            .unwrap();
        for c in choices.iter_mut() {
            if c["Next"] == "Wait until due" {
                c["Next"] = json!("Wait for lease");
            }
        }
    });
    assert_fails(&s, "retries-then-success", "routes-follow-tpf-outcome");
}

/// The driver with its REMOTE_OUTCOME_UNKNOWN route sent to `next`.
fn remote_unknown_routed_to(next: &str) -> Subject {
    broken(|d| {
        let choices = d
            .pointer_mut("/States/Route on TPF status/Choices")
            .unwrap()
            .as_array_mut()
            .unwrap();
        let rule = choices
            .iter_mut()
            .find(|c| c["Next"] == "Remote outcome unknown to TPF")
            .expect("the driver routes REMOTE_OUTCOME_UNKNOWN");
        rule["Next"] = json!(next);
    })
}

#[test]
fn re_asking_tpf_after_a_remote_outcome_unknown_is_caught() {
    // Read as a lease held elsewhere: the driver waits and asks again instead of stopping.
    let s = remote_unknown_routed_to("Wait for lease");
    assert_fails(
        &s,
        "remote-outcome-unknown-then-redrive",
        "routes-follow-tpf-outcome",
    );
}

#[test]
fn treating_a_remote_outcome_unknown_as_success_is_caught() {
    let s = remote_unknown_routed_to("Execution succeeded");
    let sc = scenario(&s, "remote-outcome-unknown-then-redrive");
    let failed = failed_checks(&s, &sc);
    for check in ["routes-follow-tpf-outcome", "driver-ends-as-tpf-ends"] {
        assert!(failed.contains(&check), "expected {check}, got {failed:?}");
    }
}

#[test]
fn stopping_as_if_tpf_had_failed_is_caught() {
    // The execution failed in TPF's words while TPF says the outcome is unknown.
    let s = remote_unknown_routed_to("Execution failed in TPF");
    assert_fails(
        &s,
        "remote-outcome-unknown-then-redrive",
        "routes-follow-tpf-outcome",
    );
}

#[test]
fn a_second_live_driver_is_caught() {
    let s = subject();
    let mut sc = scenario(&s, "happy-path");
    sc.actions.push(tpf_sfn_mapping::scenario::model::Action {
        when: tpf_sfn_mapping::scenario::model::When::Start,
        step: None,
        nth: None,
        after_seconds: 0,
        act: tpf_sfn_mapping::scenario::model::Do::StartExtraDriver,
    });
    assert!(failed_checks(&s, &sc).contains(&"single-live-generation"));
}

#[test]
fn waking_twice_for_one_park_is_caught() {
    // After waking, the broken driver parks again without asking TPF; the bridge sees the record
    // has moved on and wakes it a second time.
    let s = broken(|d| {
        let mut second = d.pointer(AWAIT).unwrap().clone();
        second["Next"] = json!("Process work item");
        d["States"]["Await again"] = second;
        *d.pointer_mut(&format!("{AWAIT}/Next")).unwrap() = json!("Await again");
    });
    assert_fails(&s, "happy-path", "one-resume-per-park");
}

#[test]
fn a_redrive_that_starts_no_driver_is_caught() {
    let s = subject();
    let mut sc = scenario(&s, "retries-exhausted-then-redrive");
    sc.faults.lose_redrive_starts = true;
    assert!(failed_checks(&s, &sc).contains(&"redrive-continues-same-execution"));
}

#[test]
fn an_idempotency_key_without_the_iteration_is_caught() {
    let s = broken(|d| {
        *d.pointer_mut(&format!(
            "{PROCESS}/Parameters/RequestBody/idempotencyKey.$"
        ))
        .unwrap() = json!("States.Format('{}', $.lineage)");
    });
    assert_fails(&s, "happy-path", "idempotency-keys-and-single-commits");
}

#[test]
fn re_asking_a_late_await_in_a_tight_loop_is_caught() {
    // TPF parks a re-driven execution whose await deadline has already passed (it reports a
    // wake-up due now); a driver whose back-off starts at one second instead of a minute is
    // rejected.
    let s = broken(|d| {
        *d.pointer_mut("/States/Back off: first wait/Parameters/seconds")
            .unwrap() = json!(1);
    });
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/late-decision-then-redrive.toml"),
    )
    .unwrap();
    let sc = Scenario::from_toml(&text).unwrap();
    assert!(
        failed_checks(&s, &sc).contains(&"routes-follow-tpf-outcome"),
        "{:?}",
        failed_checks(&s, &sc)
    );
}

#[test]
fn a_driver_that_does_not_back_off_past_a_deadline_breaks_the_call_bound() {
    // Against a TPF that strands a parked execution (a late completion, no deadline rule on
    // process-work-item), a driver that re-asks every second instead of backing off blows the
    // bound on calls the stranded-parent scenario sets; the compiled driver stays within it.
    let name = "late-completion-strands-parent/Await Restaurant Decision";
    let tight = broken(|d| {
        for state in ["Back off: first wait", "Back off: longest wait"] {
            *d.pointer_mut(&format!("/States/{state}/Parameters/seconds"))
                .unwrap() = json!(1);
        }
        let double = d
            .pointer_mut("/States/Back off: double the wait/Parameters")
            .unwrap()
            .as_object_mut()
            .unwrap();
        double.remove("seconds.$");
        double.insert("seconds".into(), json!(1));
    });
    let horizon = 2 * 3600;
    for (subject, within) in [(tight, false), (subject(), true)] {
        let mut sc = scenario(&subject, name);
        sc.horizon_seconds = horizon;
        sc.expect.max_action_calls = Some(matrix::late_reask_bound(&subject, horizon));
        let r = proof::run_one(&subject, &sc, proof::SEED);
        assert!(r.error.is_none(), "{:?}", r.error);
        let over = r
            .unmet_expectations
            .iter()
            .any(|u| u.contains("process-work-item calls"));
        assert_eq!(over, !within, "{:?} {:?}", r.metrics, r.unmet_expectations);
    }
}

/// The driver with one Wait's `Seconds` set to `seconds`.
fn waiting(state: &str, seconds: u64) -> Subject {
    broken(|d| {
        *d.pointer_mut(&format!("/States/{state}/Seconds")).unwrap() = json!(seconds);
    })
}

/// The longest Wait Step Functions accepts: about three years.
const YEARS: u64 = 99_999_999;

#[test]
fn a_lease_wait_of_zero_is_caught() {
    assert_fails(
        &waiting("Wait for lease", 0),
        "lease-held-elsewhere",
        "lease-wait-bounded",
    );
}

#[test]
fn a_lease_wait_of_years_is_caught() {
    assert_fails(
        &waiting("Wait for lease", YEARS),
        "lease-held-elsewhere",
        "lease-wait-bounded",
    );
}

#[test]
fn a_recheck_wait_of_zero_is_caught() {
    assert_fails(
        &waiting("Wait before re-checking TPF", 0),
        "token-registration-fails",
        "recheck-wait-bounded",
    );
}

#[test]
fn a_recheck_wait_of_years_is_caught() {
    assert_fails(
        &waiting("Wait before re-checking TPF", YEARS),
        "token-registration-fails",
        "recheck-wait-bounded",
    );
}

#[test]
fn the_new_scenarios_take_the_lease_and_recheck_paths() {
    // Without these paths in the matrix the wait-bound checks would have nothing to judge.
    let s = subject();
    for (name, state) in [
        ("lease-held-elsewhere", "Wait for lease"),
        ("token-registration-fails", "Wait before re-checking TPF"),
    ] {
        let r = proof::run_one(&s, &scenario(&s, name), proof::SEED);
        assert!(
            r.passed(),
            "{name}: {:?} {:?}",
            r.unmet_expectations,
            r.violations
        );
        assert!(
            r.trace.contains(&format!("\"{state}\"")) || r.trace.contains(state),
            "{name} never entered {state:?}"
        );
    }
}
