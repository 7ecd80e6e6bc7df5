//! Every validator rule against a definition that breaks it: exact code and JSON pointer, and
//! nothing else reported. Fixtures live in `tests/fixtures/asl/`.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_compiler::sfn::validate::{
    analyze_history, validate, validate_bytes, LoopGuard, Profile, Report, ValidateOptions, CODES,
};
use tpf_sfn_compiler::Severity;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/asl/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn opts(profile: Profile, bounds: &[(&str, u64)]) -> ValidateOptions {
    ValidateOptions {
        profile,
        map_item_bounds: bounds.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..ValidateOptions::default()
    }
}

fn found(report: &Report) -> BTreeSet<(String, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.to_string(),
                d.location.pointer.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Asserts the report holds exactly `expected` (code, pointer) pairs, each with a message and
/// a hint.
fn assert_exact(name: &str, report: &Report, expected: &[(&str, &str)]) {
    let want: BTreeSet<(String, String)> = expected
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    let all: Vec<String> = report.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(found(report), want, "{name}:\n{}", all.join("\n"));
    for d in &report.diagnostics {
        assert!(!d.message.is_empty() && !d.hint.is_empty(), "{name}: {d}");
        assert_eq!(d.location.file, format!("{name}.json"));
    }
}

fn run(name: &str, profile: Profile, bounds: &[(&str, u64)], expected: &[(&str, &str)]) -> Report {
    let report = validate_bytes(
        &format!("{name}.json"),
        &fixture(name),
        &opts(profile, bounds),
    );
    assert_exact(name, &report, expected);
    report
}

macro_rules! cases {
    ($($test:ident: $fixture:literal, $profile:expr, $bounds:expr, [$(($code:literal, $ptr:expr)),* $(,)?];)*) => {
        $(
            #[test]
            fn $test() {
                run($fixture, $profile, $bounds, &[$(($code, $ptr)),*]);
            }
        )*
        /// Every table case, for the coverage test.
        const CASES: &[(&str, Profile, &[(&str, u64)], &[(&str, &str)])] =
            &[$(($fixture, $profile, $bounds, &[$(($code, $ptr)),*])),*];
    };
}

const G: Profile = Profile::Generic;
const T: Profile = Profile::TpfDriver;
const NO_BOUNDS: &[(&str, u64)] = &[];

cases! {
    valid_reference_definition: "valid", T, NO_BOUNDS, [];
    states_all_not_last: "states_all_not_last", G, NO_BOUNDS, [("ASL_STATES_ALL_NOT_LAST", "/States/Work/Retry/0/ErrorEquals/0")];
    states_all_not_alone: "states_all_not_alone", G, NO_BOUNDS,
        [("ASL_STATES_ALL_NOT_ALONE", "/States/Process work item/Catch/0/ErrorEquals/1")];
    empty_error_equals: "empty_error_equals", G, NO_BOUNDS, [("ASL_EMPTY_ERROR_EQUALS", "/States/Work/Retry/0/ErrorEquals")];
    unknown_states_error: "unknown_states_error", G, NO_BOUNDS,
        [("ASL_UNKNOWN_STATES_ERROR", "/States/Work/Retry/0/ErrorEquals/0")];
    retrier_invalid: "retrier_invalid", G, NO_BOUNDS, [
        ("ASL_RETRIER_INVALID", "/States/Work/Retry/0/BackoffRate"),
        ("ASL_RETRIER_INVALID", "/States/Work/Retry/0/JitterStrategy"),
    ];
    heartbeat_not_less_than_timeout: "heartbeat_not_less_than_timeout", G, NO_BOUNDS,
        [("ASL_HEARTBEAT_NOT_LESS_THAN_TIMEOUT", "/States/Await/HeartbeatSeconds")];
    timeout_and_path: "timeout_and_path", G, NO_BOUNDS, [("ASL_TIMEOUT_AND_PATH", "/States/Work/TimeoutSecondsPath")];
    timeout_range: "timeout_range", G, NO_BOUNDS, [("ASL_TIMEOUT_RANGE", "/States/Work/TimeoutSeconds")];
    missing_transition_target: "missing_transition_target", G, NO_BOUNDS, [
        ("ASL_MISSING_TRANSITION_TARGET", "/States/Work/Next"),
        // With the only exit gone, Done is orphaned and nothing terminal is reachable.
        ("ASL_UNREACHABLE_STATE", "/States/Done"),
        ("ASL_NO_REACHABLE_TERMINAL", "/StartAt"),
    ];
    missing_start_at: "missing_start_at", G, NO_BOUNDS, [("ASL_MISSING_TRANSITION_TARGET", "/StartAt")];
    missing_next_or_end: "missing_next_or_end", G, NO_BOUNDS, [
        ("ASL_MISSING_NEXT_OR_END", "/States/Work"),
        ("ASL_NO_REACHABLE_TERMINAL", "/StartAt"),
    ];
    unreachable_state: "unreachable_state", G, NO_BOUNDS, [("ASL_UNREACHABLE_STATE", "/States/Orphan")];
    unreachable_in_parallel_branch: "unreachable_in_parallel_branch", G, NO_BOUNDS,
        [("ASL_UNREACHABLE_STATE", "/States/Fan/Branches/1/States/B2 orphan")];
    no_reachable_terminal: "no_reachable_terminal", G, NO_BOUNDS, [
        ("ASL_NO_REACHABLE_TERMINAL", "/StartAt"),
        ("ASL_HISTORY_UNBOUNDED", "/States/A"),
    ];
    duplicate_state_name: "duplicate_state_name", G, NO_BOUNDS,
        [("ASL_DUPLICATE_STATE_NAME", "/States/Fan/Branches/0/States/Work")];
    state_name_too_long: "state_name_too_long", G, NO_BOUNDS, [("ASL_STATE_NAME", concat!(
        "/States/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN",
        "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN"
    ))];
    state_name_utf16: "state_name_utf16", T, NO_BOUNDS, [("ASL_STATE_NAME", concat!(
        "/States/😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀",
        "😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀"
    ))];
    state_name_control: "state_name_control", G, NO_BOUNDS, [("ASL_STATE_NAME", "/States/Line\nbreak")];
    jsonata_tpf: "jsonata", T, NO_BOUNDS, [
        ("ASL_JSONATA_OR_VARIABLES", "/QueryLanguage"),
        ("ASL_JSONATA_OR_VARIABLES", "/States/Work/Assign"),
    ];
    variable_reference: "variable_reference", T, NO_BOUNDS,
        [("ASL_JSONATA_OR_VARIABLES", "/States/Work/Parameters/Payload.$")];
    invalid_path: "invalid_path", G, NO_BOUNDS, [
        ("ASL_INVALID_PATH", "/States/Work/Parameters/Payload.$"),
        ("ASL_INVALID_PATH", "/States/Work/Parameters/Static/nested.$"),
    ];
    invalid_intrinsic: "invalid_intrinsic", G, NO_BOUNDS, [("ASL_INVALID_PATH", "/States/Work/Parameters/FunctionName.$")];
    invalid_input_and_result_path: "invalid_input_path", G, NO_BOUNDS, [
        ("ASL_INVALID_PATH", "/States/Work/InputPath"),
        ("ASL_INVALID_PATH", "/States/Work/ResultPath"),
    ];
    unknown_field: "unknown_field", G, NO_BOUNDS, [("ASL_UNKNOWN_FIELD", "/States/Work/Retries")];
    next_or_end_not_allowed: "next_or_end_not_allowed", G, NO_BOUNDS, [
        ("ASL_UNKNOWN_FIELD", "/States/Decide/End"),
        ("ASL_UNKNOWN_FIELD", "/States/Done/Next"),
    ];
    unmodelled_field: "unmodelled_field", G, &[("Each", 10)], [("ASL_UNMODELLED_FIELD", "/States/Each/ItemReader")];
    resource_not_arn: "resource_not_arn", G, NO_BOUNDS, [("ASL_RESOURCE_NOT_ARN", "/States/Work/Resource")];
    choice_no_rules: "choice_no_rules", G, NO_BOUNDS, [("ASL_CHOICE_NO_RULES", "/States/Decide/Choices")];
    choice_rule_next: "choice_rule_next", G, NO_BOUNDS, [
        ("ASL_CHOICE_RULE_NEXT", "/States/Decide/Choices/0"),
        ("ASL_CHOICE_RULE_NEXT", "/States/Decide/Choices/1/And/0/Next"),
    ];
    choice_rule_variable: "choice_rule_variable", G, NO_BOUNDS, [("ASL_CHOICE_RULE_VARIABLE", "/States/Decide/Choices/0")];
    choice_rule_operator: "choice_rule_operator", G, NO_BOUNDS, [
        ("ASL_CHOICE_RULE_OPERATOR", "/States/Decide/Choices/0"),
        ("ASL_CHOICE_RULE_OPERATOR", "/States/Decide/Choices/1/NumericEquals"),
        ("ASL_UNKNOWN_FIELD", "/States/Decide/Choices/2/StringEqualz"),
        ("ASL_CHOICE_RULE_OPERATOR", "/States/Decide/Choices/2"),
    ];
    wait_duration: "wait_duration", G, NO_BOUNDS, [("ASL_WAIT_DURATION", "/States/Pause")];
    wait_range: "wait_range", G, NO_BOUNDS, [("ASL_WAIT_RANGE", "/States/Pause/Seconds")];
    fail_both_forms: "fail_both_forms", G, NO_BOUNDS, [("ASL_FAIL_BOTH_FORMS", "/States/Stop/ErrorPath")];
    map_processor: "map_processor", G, &[("Each", 1)], [("ASL_MAP_PROCESSOR", "/States/Each")];
    parallel_no_branches: "parallel_no_branches", G, NO_BOUNDS, [("ASL_PARALLEL_NO_BRANCHES", "/States/Fan/Branches")];
    history_unbounded_polling: "history_unbounded_polling", T, NO_BOUNDS, [("ASL_HISTORY_UNBOUNDED", "/States/Work")];
    history_counter_not_initialised: "history_counter_not_initialised", T, NO_BOUNDS,
        [("ASL_HISTORY_UNBOUNDED", "/States/Check")];
    history_budget_exceeded: "history_budget_exceeded", T, NO_BOUNDS, [("ASL_HISTORY_BUDGET_EXCEEDED", "/States/Check")];
    history_counted_loop: "history_counted_loop", T, NO_BOUNDS, [];
    loop_unpaced: "loop_unpaced", T, NO_BOUNDS, [("ASL_LOOP_UNPACED", "/States/Check")];
    loop_unpaced_foreign: "loop_unpaced", G, NO_BOUNDS, [("ASL_LOOP_UNPACED", "/States/Check")];
    history_map_unproven: "history_map_unproven", T, NO_BOUNDS, [("ASL_HISTORY_UNPROVEN", "/States/Each")];
    history_map_bounded: "history_map_bounded", T, &[("Each", 10)], [];
    history_loop_in_map: "history_loop_in_map", T, &[("Each", 10)],
        [("ASL_HISTORY_UNBOUNDED", "/States/Each/ItemProcessor/States/Poll")];
}

#[test]
fn an_unpaced_loop_is_an_error_for_drivers_and_a_warning_for_foreign_definitions() {
    for (profile, error) in [(T, true), (G, false)] {
        let report = run(
            "loop_unpaced",
            profile,
            NO_BOUNDS,
            &[("ASL_LOOP_UNPACED", "/States/Check")],
        );
        assert_eq!(report.has_errors(), error, "{profile:?}");
    }
    // The same loop with its one-second-or-longer Wait back is paced.
    run("history_counted_loop", G, NO_BOUNDS, &[]);
}

#[test]
fn a_hand_over_that_no_counted_loop_precedes_is_unpaced() {
    // Continue-as-new straight after the first call: each generation starts the next at once.
    let doc = json!({
        "StartAt": "Call",
        "States": {
            "Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                     "Parameters": {"FunctionName": "f"}, "ResultPath": "$.r", "Next": "Again"},
            "Again": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
                      "Parameters": {"StateMachineArn.$": "$$.StateMachine.Id", "Input.$": "$"},
                      "ResultPath": null, "End": true}
        }
    });
    let report = validate_bytes(
        "handover.json",
        doc.to_string().as_bytes(),
        &opts(T, NO_BOUNDS),
    );
    assert_exact("handover", &report, &[("ASL_LOOP_UNPACED", "/States/Call")]);
    // Waiting first paces it.
    let mut paced = doc.clone();
    paced["States"]["Call"]["Next"] = json!("Pause");
    paced["States"]["Pause"] = json!({"Type": "Wait", "Seconds": 1, "Next": "Again"});
    let report = validate_bytes(
        "handover.json",
        paced.to_string().as_bytes(),
        &opts(T, NO_BOUNDS),
    );
    assert_exact("handover", &report, &[]);
}

#[test]
fn jsonata_is_only_a_warning_for_foreign_definitions() {
    let report = run(
        "jsonata",
        G,
        NO_BOUNDS,
        &[
            ("ASL_JSONATA_OR_VARIABLES", "/QueryLanguage"),
            ("ASL_JSONATA_OR_VARIABLES", "/States/Work/Assign"),
        ],
    );
    assert!(report
        .diagnostics
        .iter()
        .all(|d| d.severity == Severity::Warning));
    let strict = validate_bytes("jsonata.json", &fixture("jsonata"), &opts(T, NO_BOUNDS));
    assert!(strict
        .diagnostics
        .iter()
        .all(|d| d.severity == Severity::Error));
}

#[test]
fn valid_reference_definition_history() {
    // Load: Task 5 + 3 retries × 3 = 14; Sleep: Wait 2; Notify: Task 5;
    // Await: callback Task 6 (TaskSubmitted); Done: Succeed 2 → 29, + ExecutionStarted and
    // ExecutionSucceeded = 31. (Await → Failed, 1, is lighter than → Done.)
    let report = run("valid", T, NO_BOUNDS, &[]);
    assert_eq!(report.history.max_events, Some(31));
    assert_eq!(report.history.fixed, 31);
    assert_eq!(report.history.loop_guard, None);
}

#[test]
fn counted_loop_bound_is_hand_derived() {
    let report = run("history_counted_loop", T, NO_BOUNDS, &[]);
    // Costs: Init (Pass) 2, Check (Choice) 2, Work (Task, retriers' MaxAttempts sum 2) 5 + 2×3
    // = 11, Poll (Choice) 2, Sleep (Wait) 2, Increment (Pass) 2, Handoff (Task) 5, Done 2,
    // Failed 1.
    // prefix (StartAt → first Check, Check excluded) = Init = 2.
    // per_iteration (Check → Work → Poll → Sleep → Increment → Check) = 2+11+2+2+2 = 19.
    // suffix (from Check, never returning) = Check 2 + Work 11 + Poll 2 + Sleep 2 + Increment 2
    //   (any state may end the execution by failing, so the cut path counts) = 19.
    // bypass (paths avoiding Check) = Init 2.
    // fixed = 2 (execution start/end) + max(2 + 19, 2) = 23.
    // max_events = 23 + (3 + 1) × 19 = 99.
    let h = &report.history;
    assert_eq!(
        h.loop_guard,
        Some(LoopGuard {
            state: "Check".into(),
            counter_path: "$.driver.iteration".into(),
            limit: 3
        })
    );
    assert_eq!(h.per_iteration, Some(19));
    assert_eq!(h.fixed, 23);
    assert_eq!(h.max_events, Some(99));
}

#[test]
fn budget_exceeded_reports_the_numbers_and_formula_is_exact() {
    let report = validate_bytes(
        "x.json",
        &fixture("history_budget_exceeded"),
        &opts(T, NO_BOUNDS),
    );
    let h = &report.history;
    // Same loop with limit 1400: 23 + 1401 × 19 = 26,642 > 25,000.
    assert_eq!(h.max_events, Some(26_642));
    let (Some(guard), Some(per)) = (&h.loop_guard, h.per_iteration) else {
        panic!("no loop proof: {h:?}")
    };
    assert_eq!(h.max_events, Some(h.fixed + (guard.limit + 1) * per));
    let d = report
        .with_code("ASL_HISTORY_BUDGET_EXCEEDED")
        .next()
        .expect("budget diagnostic");
    assert!(
        d.message.contains("26642") && d.message.contains("25000"),
        "{}",
        d.message
    );
    // A compiler solving for the largest limit under the cap gets one that passes.
    let limit = (25_000 - h.fixed) / per - 1;
    let mut doc: Value = serde_json::from_slice(&fixture("history_budget_exceeded")).unwrap();
    doc["States"]["Check"]["Choices"][0]["NumericGreaterThanEquals"] = json!(limit);
    let ok = validate_bytes("x.json", doc.to_string().as_bytes(), &opts(T, NO_BOUNDS));
    assert_exact("x", &ok, &[]);
    assert!(ok.history.max_events.is_some_and(|m| m <= 25_000));
}

#[test]
fn event_limit_option_is_honoured() {
    let mut o = opts(T, NO_BOUNDS);
    o.event_limit = 98;
    let report = validate_bytes(
        "history_counted_loop.json",
        &fixture("history_counted_loop"),
        &o,
    );
    assert_exact(
        "history_counted_loop",
        &report,
        &[("ASL_HISTORY_BUDGET_EXCEEDED", "/States/Check")],
    );
}

#[test]
fn map_bound_enters_the_history() {
    // Map: 4 + 10 items × (2 + One: Task 5) = 74; Done 2; execution 2 → 78.
    let report = run("history_map_bounded", T, &[("Each", 10)], &[]);
    assert_eq!(report.history.max_events, Some(78));
    let unproven = run(
        "history_map_bounded",
        T,
        NO_BOUNDS,
        &[("ASL_HISTORY_UNPROVEN", "/States/Each")],
    );
    assert_eq!(unproven.history.max_events, None);
}

#[test]
fn analyze_history_matches_validate() {
    for name in [
        "valid",
        "history_counted_loop",
        "history_budget_exceeded",
        "history_unbounded_polling",
    ] {
        let machine = asl::parse("x", &fixture(name)).unwrap();
        let o = opts(T, NO_BOUNDS);
        assert_eq!(
            analyze_history(&machine, &o),
            validate("x", &machine, &o).history,
            "{name}"
        );
    }
}

fn counted_loop() -> Value {
    serde_json::from_slice(&fixture("history_counted_loop")).unwrap()
}

fn unbounded_at(doc: &Value, pointer: &str) {
    let report = validate_bytes("loop.json", doc.to_string().as_bytes(), &opts(T, NO_BOUNDS));
    assert_exact("loop", &report, &[("ASL_HISTORY_UNBOUNDED", pointer)]);
    assert_eq!(report.history.max_events, None);
}

#[test]
fn loop_with_a_cycle_that_skips_the_increment_is_unbounded() {
    let mut doc = counted_loop();
    doc["States"]["Sleep"]["Next"] = json!("Check");
    doc["States"]["Poll"]["Choices"].as_array_mut().unwrap().push(json!({"Variable": "$.result.Payload.fast", "BooleanEquals": true, "Next": "Increment"}));
    // Poll → Increment → Check counts, but Poll → Sleep → Check does not. The new way round
    // through Increment skips Sleep too, so it is also a loop that does not wait.
    let report = validate_bytes("loop.json", doc.to_string().as_bytes(), &opts(T, NO_BOUNDS));
    assert_exact(
        "loop",
        &report,
        &[
            ("ASL_HISTORY_UNBOUNDED", "/States/Sleep"),
            ("ASL_LOOP_UNPACED", "/States/Check"),
        ],
    );
    assert_eq!(report.history.max_events, None);
}

#[test]
fn loop_whose_task_overwrites_the_counter_is_unbounded() {
    let mut doc = counted_loop();
    doc["States"]["Work"]["ResultPath"] = json!("$.driver");
    unbounded_at(&doc, "/States/Work");
    let mut doc = counted_loop();
    doc["States"]["Work"]
        .as_object_mut()
        .unwrap()
        .remove("ResultPath");
    unbounded_at(&doc, "/States/Work");
    // A task result is not the counter's old value, whatever the selector adds to it: the
    // driver counts in a Pass.
    let mut doc = counted_loop();
    doc["States"]["Work"]["Parameters"] =
        json!({"FunctionName": "f", "Payload": {"iteration.$": "$.driver.iteration"}});
    doc["States"]["Work"]["ResultSelector"] =
        json!({"iteration.$": "States.MathAdd($.Payload.iteration, 1)"});
    doc["States"]["Work"]["ResultPath"] = json!("$.driver");
    unbounded_at(&doc, "/States/Work");
}

#[test]
fn loop_whose_catch_overwrites_the_counter_inside_the_loop_is_unbounded() {
    let mut doc = counted_loop();
    doc["States"]["Work"]["Catch"] = json!([{"ErrorEquals": ["States.ALL"], "Next": "Sleep"}]);
    doc["States"].as_object_mut().unwrap().remove("Failed");
    unbounded_at(&doc, "/States/Work");
}

#[test]
fn guard_rule_after_a_rule_that_stays_in_the_loop_is_not_a_guard() {
    let mut doc = counted_loop();
    doc["States"]["Check"]["Choices"] = json!([
        {"Variable": "$.again", "IsPresent": true, "Next": "Work"},
        {"Variable": "$.driver.iteration", "NumericGreaterThanEquals": 3, "Next": "Handoff"}
    ]);
    // Reported at the loop's first state: no Choice on it qualifies as a guard.
    unbounded_at(&doc, "/States/Check");
}

#[test]
fn guard_inside_and_with_presence_checks_is_accepted() {
    let mut doc = counted_loop();
    doc["States"]["Check"]["Choices"] = json!([{"And": [
        {"Variable": "$.driver.iteration", "IsPresent": true},
        {"Variable": "$.driver.iteration", "NumericGreaterThanEquals": 3}
    ], "Next": "Handoff"}]);
    let report = validate_bytes("and.json", doc.to_string().as_bytes(), &opts(T, NO_BOUNDS));
    assert_exact("and", &report, &[]);
    assert_eq!(report.history.max_events, Some(99));
    // An And with an unrelated condition does not force the exit.
    doc["States"]["Check"]["Choices"][0]["And"][0] =
        json!({"Variable": "$.other", "IsPresent": true});
    unbounded_at(&doc, "/States/Check");
}

#[test]
fn counter_initialised_with_result_and_bracket_paths() {
    let mut doc = counted_loop();
    doc["States"]["Init"] = json!({"Type": "Pass", "Result": {"iteration": 0, "generation": 1}, "ResultPath": "$['driver']", "Next": "Check"});
    let report = validate_bytes("init.json", doc.to_string().as_bytes(), &opts(T, NO_BOUNDS));
    assert_exact("init", &report, &[]);
    assert_eq!(report.history.max_events, Some(99));
}

#[test]
fn definition_over_one_megabyte() {
    let doc = json!({"Comment": "x".repeat(1_100_000), "StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}});
    let bytes = doc.to_string().into_bytes();
    let report = validate_bytes("big.json", &bytes, &opts(G, NO_BOUNDS));
    assert_exact("big", &report, &[("ASL_DEFINITION_TOO_LARGE", "")]);
    let machine = asl::parse("big.json", &bytes).unwrap();
    let report = validate("big.json", &machine, &opts(G, NO_BOUNDS));
    assert_exact("big", &report, &[("ASL_DEFINITION_TOO_LARGE", "")]);
    assert!(report.diagnostics[0].message.contains("canonical"));
}

#[test]
fn oversized_parameters() {
    let doc = json!({"StartAt": "Work", "States": {"Work": {
        "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true,
        "Parameters": {"FunctionName": "f", "Payload": {"blob": "y".repeat(270_000)}}}}});
    let report = validate_bytes(
        "params.json",
        doc.to_string().as_bytes(),
        &opts(G, NO_BOUNDS),
    );
    assert_exact(
        "params",
        &report,
        &[("ASL_PAYLOAD_TEMPLATE_TOO_LARGE", "/States/Work/Parameters")],
    );
}

#[test]
fn parse_errors_become_diagnostics() {
    let report = validate_bytes("bad.json", b"{\"StartAt\": ", &opts(G, NO_BOUNDS));
    assert_eq!(report.diagnostics.len(), 1);
    assert_eq!(report.diagnostics[0].code, "ASL_JSON_SYNTAX");
    let report = validate_bytes(
        "bad.json",
        br#"{"StartAt": "A", "States": {"A": {"Type": "Nope"}}}"#,
        &opts(G, NO_BOUNDS),
    );
    assert_eq!(report.diagnostics[0].code, "ASL_SCHEMA");
    assert_eq!(
        report.diagnostics[0].location.pointer.as_deref(),
        Some("/States/A/Type")
    );
}

#[test]
fn every_code_has_a_violating_definition() {
    let mut covered: BTreeSet<&str> = CASES
        .iter()
        .flat_map(|(_, _, _, e)| e.iter().map(|(c, _)| *c))
        .collect();
    // Generated in the tests above rather than stored as fixtures.
    covered.extend([
        "ASL_DEFINITION_TOO_LARGE",
        "ASL_PAYLOAD_TEMPLATE_TOO_LARGE",
        "ASL_JSON_SYNTAX",
        "ASL_SCHEMA",
    ]);
    let missing: Vec<&str> = CODES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !covered.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a violating definition: {missing:?}"
    );
    for (fixture_name, profile, bounds, expected) in CASES {
        run(fixture_name, *profile, bounds, expected);
    }
}

#[test]
fn increment_reading_a_filtered_input_is_not_an_increment() {
    // With InputPath `$.driver`, `$.driver.iteration` in Parameters reads `$.driver.driver.iteration`.
    let mut doc = counted_loop();
    doc["States"]["Increment"]["InputPath"] = json!("$.driver");
    unbounded_at(&doc, "/States/Increment");
}
