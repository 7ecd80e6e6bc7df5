//! Executions: name idempotency, nested starts, redrive, the history quota, Map and Parallel,
//! and the exact history of a small Task machine.

use crate::common;

use asl_interp::*;
use common::*;
use serde_json::{json, Value};

#[test]
fn start_execution_name_idempotency() {
    let mut engine = Engine::new(T0, 1);
    let def =
        json!({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 10, "End": true}}});
    let sm = engine
        .create_state_machine("m", machine(def.clone()))
        .unwrap();
    // CreateStateMachine is idempotent on an identical definition.
    assert_eq!(engine.create_state_machine("m", machine(def)).unwrap(), sm);
    let other = machine(json!({"StartAt": "S", "States": {"S": {"Type": "Succeed"}}}));
    assert!(matches!(
        engine.create_state_machine("m", other),
        Err(SfnError::StateMachineAlreadyExists(_))
    ));

    let a = engine
        .start_execution(&sm, "run-1", json!({"k": 1}))
        .unwrap();
    assert_eq!(
        a.execution_arn,
        "arn:aws:states:us-east-1:123456789012:execution:m:run-1"
    );
    engine.advance_to(T0 + 5_000, &mut NoTasks);
    // Same name + same input while running → same execution.
    assert_eq!(
        engine
            .start_execution(&sm, "run-1", json!({"k": 1}))
            .unwrap(),
        a
    );
    // Different input → ExecutionAlreadyExists.
    assert!(matches!(
        engine.start_execution(&sm, "run-1", json!({"k": 2})),
        Err(SfnError::ExecutionAlreadyExists(_))
    ));
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    // Closed → the name cannot be reused, even with the same input.
    assert!(matches!(
        engine.start_execution(&sm, "run-1", json!({"k": 1})),
        Err(SfnError::ExecutionAlreadyExists(_))
    ));
    assert!(matches!(
        engine.start_execution(&sm, "bad/name", json!({})),
        Err(SfnError::InvalidName(_))
    ));
    assert!(matches!(
        engine.start_execution("arn:nope", "n", json!({})),
        Err(SfnError::StateMachineDoesNotExist(_))
    ));
    assert_eq!(engine.list_executions(&sm), vec![a.execution_arn.as_str()]);
}

#[test]
fn nested_start_execution_and_sdk_calls() {
    let mut engine = Engine::new(T0, 1);
    let child = engine
        .create_state_machine(
            "child",
            machine(json!({"StartAt": "W", "States": {
            "W": {"Type": "Wait", "Seconds": 5, "Next": "P"},
            "P": {"Type": "Pass", "Parameters": {"got.$": "$.n"}, "End": true}}})),
        )
        .unwrap();
    let parent = json!({"StartAt": "Start", "States": {
        "Start": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
            "Parameters": {"StateMachineArn": child, "Name.$": "States.Format('c-{}', $.n)",
                           "Input": {"n.$": "$.n"}},
            "ResultPath": "$.started", "Next": "Again"},
        "Again": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:startExecution",
            "Parameters": {"StateMachineArn": child, "Name.$": "States.Format('c-{}', $.n)",
                           "Input": "{\"n\": 999}"},
            "Catch": [{"ErrorEquals": ["Sfn.ExecutionAlreadyExistsException"], "ResultPath": "$.dup", "Next": "Describe"}],
            "Next": "Describe"},
        "Describe": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeExecution",
            "Parameters": {"ExecutionArn.$": "$.started.ExecutionArn"},
            "ResultSelector": {"Status.$": "$.Status"}, "ResultPath": "$.desc", "End": true}}});
    let sm = engine
        .create_state_machine("parent", machine(parent))
        .unwrap();
    let p = engine
        .start_execution(&sm, "p", json!({"n": 3}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    let out = engine.output(&p).unwrap().clone();
    let child_arn = "arn:aws:states:us-east-1:123456789012:execution:child:c-3";
    assert_eq!(out["started"]["ExecutionArn"], child_arn);
    assert_eq!(out["started"]["StartDate"], "2026-01-01T00:00:00.000Z");
    assert_eq!(out["dup"]["Error"], "Sfn.ExecutionAlreadyExistsException");
    assert_eq!(out["desc"]["Status"], "RUNNING");
    assert_eq!(engine.status(child_arn), Some(ExecutionStatus::Running));
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    assert_eq!(engine.output(child_arn), Some(&json!({"got": 3})));

    // The optimized integration names the same error StepFunctions.*; same name + same input
    // while the child runs is idempotent.
    let dup = json!({"StartAt": "S", "States": {
        "S": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
              "Parameters": {"StateMachineArn": child, "Name": "c-3", "Input": {"n": 3}}, "End": true}}});
    let sm2 = engine.create_state_machine("dup", machine(dup)).unwrap();
    let d = engine
        .start_execution(&sm2, "d", json!({}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    let desc = engine.describe_execution(&d).unwrap();
    assert_eq!(
        desc.error.as_deref(),
        Some("StepFunctions.ExecutionAlreadyExistsException")
    );

    let missing = json!({"StartAt": "D", "States": {
        "D": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeExecution",
              "Parameters": {"ExecutionArn": "arn:aws:states:us-east-1:123456789012:execution:child:none"}, "End": true}}});
    let sm3 = engine
        .create_state_machine("missing", machine(missing))
        .unwrap();
    let x = engine
        .start_execution(&sm3, "x", json!({}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    assert_eq!(
        engine.describe_execution(&x).unwrap().error.as_deref(),
        Some("Sfn.ExecutionDoesNotExistException")
    );
}

#[test]
fn sdk_send_task_success_between_executions() {
    let mut engine = Engine::new(T0, 1);
    let waiter = engine
        .create_state_machine(
            "waiter",
            machine(json!({"StartAt": "T", "States": {
            "T": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                  "Parameters": {"token.$": "$$.Task.Token"}, "End": true}}})),
        )
        .unwrap();
    let w = engine
        .start_execution(&waiter, "w", json!({}))
        .unwrap()
        .execution_arn;
    let mut token = String::new();
    let mut h = |c: &TaskCall<'_>| {
        token = c.input["token"].as_str().unwrap().to_string();
        TaskOutcome::Pending
    };
    engine.run_until_idle(&mut h);
    let answer = json!({"StartAt": "A", "States": {
        "A": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess",
              "Parameters": {"TaskToken.$": "$.t", "Output": "{\"v\": 1}"}, "ResultPath": null, "Next": "B"},
        "B": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess",
              "Parameters": {"TaskToken.$": "$.t", "Output": "{}"}, "ResultPath": null,
              "Catch": [{"ErrorEquals": ["Sfn.TaskTimedOutException"], "ResultPath": "$.e", "Next": "C"}], "End": true},
        "C": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess",
              "Parameters": {"TaskToken": "bogus", "Output": "{}"},
              "Catch": [{"ErrorEquals": ["Sfn.InvalidTokenException"], "ResultPath": "$.e2", "Next": "D"}], "End": true},
        "D": {"Type": "Succeed"}}});
    let sm = engine
        .create_state_machine("answer", machine(answer))
        .unwrap();
    let a = engine
        .start_execution(&sm, "a", json!({"t": token}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    assert_eq!(engine.output(&w), Some(&json!({"v": 1})));
    let out = engine
        .output(&a)
        .unwrap_or_else(|| panic!("{:?}", engine.describe_execution(&a)));
    assert_eq!(out["e"]["Error"], "Sfn.TaskTimedOutException");
    assert_eq!(out["e2"]["Error"], "Sfn.InvalidTokenException");
}

#[test]
fn redrive_resumes_from_failed_state() {
    let def = json!({"StartAt": "A", "States": {
        "A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultPath": "$.a", "Next": "B"},
        "B": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"redrives.$": "$$.Execution.RedriveCount", "a.$": "$.a"}, "ResultPath": "$.b", "End": true}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({"in": 1}));
    let mut calls: Vec<(String, Value)> = Vec::new();
    let mut broken = true;
    let run = |engine: &mut Engine, broken: bool, calls: &mut Vec<(String, Value)>| {
        let mut h = |c: &TaskCall<'_>| {
            calls.push((c.state_name.to_string(), c.input.clone()));
            if c.state_name == "B" && broken {
                TaskOutcome::failed("Boom", "down")
            } else {
                TaskOutcome::Succeeded(json!(c.state_name))
            }
        };
        engine.advance_until_idle_or(i64::MAX, &mut h);
    };
    run(&mut engine, broken, &mut calls);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Failed));
    // Not redrivable once succeeded; unknown ARN is ExecutionDoesNotExist.
    assert!(matches!(
        engine.redrive_execution("arn:nope"),
        Err(SfnError::ExecutionDoesNotExist(_))
    ));
    engine.advance_to(T0 + 60_000, &mut NoTasks);
    let at = engine.redrive_execution(&arn).unwrap();
    assert_eq!(at, T0 + 60_000);
    broken = false;
    run(&mut engine, broken, &mut calls);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::Succeeded);
    assert_eq!(d.redrive_count, 1);
    assert_eq!(d.redrive_ms, Some(T0 + 60_000));
    assert_eq!(d.output, Some(json!({"in": 1, "a": "A", "b": "B"})));
    // A ran once; B twice, with the same input, and saw RedriveCount 0 then 1.
    let names: Vec<&str> = calls.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["A", "B", "B"]);
    assert_eq!(calls[1].1, json!({"redrives": 0, "a": "A"}));
    assert_eq!(calls[2].1, json!({"redrives": 1, "a": "A"}));
    let t = types(&engine, &arn);
    let i = t.iter().position(|e| *e == "ExecutionRedriven").unwrap();
    assert_eq!(t[i - 1], "ExecutionFailed");
    assert_eq!(t[i + 1], "TaskStateEntered");
    assert!(matches!(
        engine.redrive_execution(&arn),
        Err(SfnError::ExecutionNotRedrivable(_))
    ));
}

#[test]
fn redrive_after_abort_and_window() {
    let def =
        json!({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 100, "End": true}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    engine.advance_to(T0 + 10_000, &mut NoTasks);
    engine
        .stop_execution(&arn, Some("Stop"), Some("by test"))
        .unwrap();
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(
        (d.status, d.error.as_deref()),
        (ExecutionStatus::Aborted, Some("Stop"))
    );
    assert_eq!(engine.next_timer(), None);
    engine.redrive_execution(&arn).unwrap();
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    assert_eq!(engine.now_ms(), T0 + 110_000);

    let def = json!({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E"}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    engine.run_until_idle(&mut NoTasks);
    engine.advance_to(T0 + 15 * 86_400_000, &mut NoTasks);
    assert!(matches!(
        engine.redrive_execution(&arn),
        Err(SfnError::ExecutionNotRedrivable(_))
    ));
}

#[test]
fn history_cap_on_unbounded_pass_loop() {
    let def = json!({"StartAt": "A", "States": {
        "A": {"Type": "Pass", "Next": "B"},
        "B": {"Type": "Pass", "Next": "A"}}});
    let (engine, arn) = run(def, json!({}));
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::Failed);
    assert_eq!(d.error.as_deref(), Some("States.Runtime"));
    assert!(d.cause.unwrap().contains("history"));
    let h = engine.history(&arn);
    assert_eq!(h.len(), MAX_HISTORY_EVENTS);
    assert_eq!(h.last().unwrap().event_type, "ExecutionFailed");
    assert_eq!(h.last().unwrap().id, 25_000);
    assert_eq!(d.metrics.history_events, 25_000);
    assert_eq!(d.metrics.state_transitions, 12_499);
    // Too close to the quota to redrive.
    let mut engine = engine;
    assert!(matches!(
        engine.redrive_execution(&arn),
        Err(SfnError::ExecutionNotRedrivable(_))
    ));
}

#[test]
fn history_cap_with_terminal_event_exactly_at_25000() {
    // ExecutionStarted + n×(Entered, Exited) + Succeed(Entered, Exited) + ExecutionSucceeded:
    // a loop of 12,497 Pass visits lands the success on event 25,000 exactly.
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThanEquals": 6248, "Next": "Done"}], "Default": "P"},
        "P": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)"}, "Next": "C"},
        "Done": {"Type": "Succeed"}}});
    // 1 + 6248 × 4 (C + P) + 2 (C) + 2 (Done) + 1 = 24,998.
    let (engine, arn) = run(def.clone(), json!({"n": 0}));
    assert_eq!(engine.history(&arn).len(), 24_998);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    let def2 = json!({"StartAt": "X", "States": {
        "X": {"Type": "Pass", "Next": "C"},
        "C": def["States"]["C"], "P": def["States"]["P"], "Done": def["States"]["Done"]}});
    // Two more events: the success is event 25,000 and is allowed.
    let (engine, arn) = run(def2.clone(), json!({"n": 0}));
    assert_eq!(engine.history(&arn).len(), 25_000);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    // One more state visit does not fit.
    let def3 = json!({"StartAt": "Y", "States": {
        "Y": {"Type": "Pass", "Next": "X"},
        "X": {"Type": "Pass", "Next": "C"},
        "C": def["States"]["C"], "P": def["States"]["P"], "Done": def["States"]["Done"]}});
    let (engine, arn) = run(def3, json!({"n": 0}));
    assert_eq!(engine.history(&arn).len(), 25_000);
    assert_eq!(
        engine.describe_execution(&arn).unwrap().error.as_deref(),
        Some("States.Runtime")
    );
}

#[test]
fn map_inline_in_order_with_item_selector() {
    let def = json!({"StartAt": "M", "States": {
        "M": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
              "ItemSelector": {"v.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index", "k.$": "$.k"},
              "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "W", "States": {
                  "W": {"Type": "Wait", "SecondsPath": "$.v", "Next": "T"},
                  "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}},
              "ResultPath": "$.out", "Next": "Done"},
        "Done": {"Type": "Succeed"}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({"items": [3, 1, 2], "k": "x"}));
    let mut seen = Vec::new();
    let mut h = |c: &TaskCall<'_>| {
        seen.push((c.now_ms - T0, c.input.clone()));
        TaskOutcome::Succeeded(json!(c.input["i"]))
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    assert_eq!(engine.output(&arn).unwrap()["out"], json!([0, 1, 2]));
    // Two at a time: items 0 (3 s) and 1 (1 s) start at 0; item 2 (2 s) starts when 1 ends.
    assert_eq!(
        seen,
        vec![
            (1_000, json!({"v": 1, "i": 1, "k": "x"})),
            (3_000, json!({"v": 3, "i": 0, "k": "x"})),
            (3_000, json!({"v": 2, "i": 2, "k": "x"})),
        ]
    );
    let t = types(&engine, &arn);
    assert_eq!(
        &t[..5],
        [
            "ExecutionStarted",
            "MapStateEntered",
            "MapStateStarted",
            "MapIterationStarted",
            "MapIterationStarted"
        ]
    );
    assert_eq!(
        t.iter().filter(|e| **e == "MapIterationSucceeded").count(),
        3
    );
    assert_eq!(
        &t[t.len() - 5..],
        [
            "MapStateSucceeded",
            "MapStateExited",
            "SucceedStateEntered",
            "SucceedStateExited",
            "ExecutionSucceeded"
        ]
    );
}

#[test]
fn map_failure_is_caught_and_empty_map() {
    let def = json!({"StartAt": "M", "States": {
        "M": {"Type": "Map", "Iterator": {"StartAt": "C", "States": {
                  "C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "F"}], "Default": "S"},
                  "F": {"Type": "Fail", "Error": "Item.Bad", "Cause": "two"},
                  "S": {"Type": "Succeed"}}},
              "Catch": [{"ErrorEquals": ["Item.Bad"], "ResultPath": "$.err", "Next": "Done"}], "End": true},
        "Done": {"Type": "Pass", "End": true}}});
    let (engine, arn) = run(def.clone(), json!([1, 2, 3]));
    // The catcher's ResultPath cannot add a field to an array input: ResultPathMatchFailure.
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.error.as_deref(), Some("States.ResultPathMatchFailure"));
    let t = types(&engine, &arn);
    assert_eq!(
        &t[..],
        [
            "ExecutionStarted",
            "MapStateEntered",
            "MapStateStarted",
            "MapIterationStarted",
            "MapIterationStarted",
            "MapIterationStarted",
            // Iterations advance one state per turn, round-robin in item order.
            "ChoiceStateEntered",
            "ChoiceStateExited",
            "ChoiceStateEntered",
            "ChoiceStateExited",
            "ChoiceStateEntered",
            "ChoiceStateExited",
            "SucceedStateEntered",
            "SucceedStateExited",
            "MapIterationSucceeded",
            "FailStateEntered",
            "MapIterationFailed",
            "MapIterationAborted",
            "MapStateFailed",
            "ExecutionFailed"
        ]
    );
    let mut def2 = def.clone();
    def2["States"]["M"]["Catch"][0]
        .as_object_mut()
        .unwrap()
        .remove("ResultPath");
    let out = output(def2, json!([1, 2, 3]));
    assert_eq!(out, json!({"Error": "Item.Bad", "Cause": "two"}));
    assert_eq!(output(def, json!([])), json!([]));
}

#[test]
fn parallel_branches_join_in_order() {
    let def = json!({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Parameters": {"x.$": "$.x"}, "Branches": [
                {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 10, "Next": "R"},
                                            "R": {"Type": "Pass", "Result": "slow", "End": true}}},
                {"StartAt": "Q", "States": {"Q": {"Type": "Pass", "InputPath": "$.x", "End": true}}}],
              "ResultSelector": {"first.$": "$[0]", "second.$": "$[1]"},
              "ResultPath": "$.par", "End": true}}});
    let (engine, arn) = run(def, json!({"x": 5}));
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"x": 5, "par": {"first": "slow", "second": 5}}))
    );
    // Branches run concurrently: the whole state took 10 s, not more.
    assert_eq!(
        engine.describe_execution(&arn).unwrap().stop_ms,
        Some(T0 + 10_000)
    );
    let t = types(&engine, &arn);
    assert_eq!(
        &t[..3],
        [
            "ExecutionStarted",
            "ParallelStateEntered",
            "ParallelStateStarted"
        ]
    );
    assert_eq!(
        &t[t.len() - 3..],
        [
            "ParallelStateSucceeded",
            "ParallelStateExited",
            "ExecutionSucceeded"
        ]
    );

    // One failing branch aborts the other and fails the state with the branch's error.
    let def = json!({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Branches": [
                {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 10, "End": true}}},
                {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Branch.Err"}}}],
              "Retry": [{"ErrorEquals": ["Branch.Err"], "MaxAttempts": 1, "IntervalSeconds": 3}],
              "End": true}}});
    let (engine, arn) = run(def, json!({}));
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.error.as_deref(), Some("Branch.Err"));
    assert_eq!(d.stop_ms, Some(T0 + 3_000));
    let t = types(&engine, &arn);
    assert_eq!(
        t.iter().filter(|e| **e == "ParallelStateStarted").count(),
        2
    );
    assert_eq!(t.iter().filter(|e| **e == "ParallelStateFailed").count(), 2);
    assert!(!t.contains(&"WaitStateExited"));
}

#[test]
fn exact_history_of_a_small_task_machine() {
    let def = json!({"StartAt": "Call", "States": {
        "Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                 "Parameters": {"FunctionName": "f"},
                 "Retry": [{"ErrorEquals": ["States.TaskFailed"], "IntervalSeconds": 2, "MaxAttempts": 1}],
                 "ResultSelector": {"p.$": "$.Payload"}, "Next": "Check"},
        "Check": {"Type": "Choice", "Choices": [{"Variable": "$.p", "StringEquals": "ok", "Next": "Done"}], "Default": "Nap"},
        "Nap": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
        "Done": {"Type": "Succeed"}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    let mut n = 0;
    let mut h = |_: &TaskCall<'_>| {
        n += 1;
        if n == 1 {
            TaskOutcome::failed("Lambda.Unknown", "cold")
        } else {
            TaskOutcome::Succeeded(json!({"Payload": "ok"}))
        }
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    let got: Vec<(u32, i64, &str, Option<&str>)> = engine
        .history(&arn)
        .iter()
        .map(|e| {
            (
                e.id,
                e.timestamp_ms - T0,
                e.event_type,
                e.state_name.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 0, "ExecutionStarted", None),
            (2, 0, "TaskStateEntered", Some("Call")),
            (3, 0, "TaskScheduled", Some("Call")),
            (4, 0, "TaskStarted", Some("Call")),
            (5, 0, "TaskFailed", Some("Call")),
            (6, 2_000, "TaskScheduled", Some("Call")),
            (7, 2_000, "TaskStarted", Some("Call")),
            (8, 2_000, "TaskSucceeded", Some("Call")),
            (9, 2_000, "TaskStateExited", Some("Call")),
            (10, 2_000, "ChoiceStateEntered", Some("Check")),
            (11, 2_000, "ChoiceStateExited", Some("Check")),
            (12, 2_000, "SucceedStateEntered", Some("Done")),
            (13, 2_000, "SucceedStateExited", Some("Done")),
            (14, 2_000, "ExecutionSucceeded", None),
        ]
    );
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(
        d.metrics,
        ExecutionMetrics {
            state_transitions: 3,
            history_events: 14
        }
    );
    insta::assert_json_snapshot!("small_task_history", engine.history(&arn));
    // The global trace sees the same events.
    let (evs, cursor) = engine.events_since(0);
    assert_eq!(evs.len(), 14);
    assert_eq!(engine.events_since(cursor).0.len(), 0);
}

#[test]
fn many_executions_run_fast_and_deterministically() {
    // A wakeup-driver-like loop: wait, notify, await a callback answered by a deferred relay,
    // repeat until a budget is spent, then continue as new.
    let def = json!({"StartAt": "Sleep", "States": {
        "Sleep": {"Type": "Wait", "Seconds": 60, "Next": "Notify"},
        "Notify": {"Type": "Task", "Resource": "arn:aws:states:::http:invoke", "ResultPath": null,
                   "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 3, "JitterStrategy": "FULL"}],
                   "Next": "Await"},
        "Await": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                  "Parameters": {"token.$": "$$.Task.Token"}, "TimeoutSeconds": 600, "HeartbeatSeconds": 120,
                  "ResultPath": null, "Next": "Count"},
        "Count": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)"}, "Next": "More"},
        "More": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericLessThan": 200, "Next": "Sleep"}], "Default": "End"},
        "End": {"Type": "Succeed"}}});
    struct H {
        k: u64,
        out: Vec<Deferred>,
    }
    impl TaskHandler for H {
        fn invoke(&mut self, c: &TaskCall<'_>) -> TaskOutcome {
            self.k += 1;
            if let Some(tok) = c.task_token {
                self.out.push(Deferred {
                    at_ms: c.now_ms + 5_000,
                    callback: Callback::Success {
                        token: tok.to_string(),
                        output: json!({}),
                    },
                });
                return TaskOutcome::Succeeded(json!({}));
            }
            if self.k.is_multiple_of(7) {
                TaskOutcome::failed("States.Http.Socket", "flaky")
            } else {
                TaskOutcome::Succeeded(json!({}))
            }
        }
        fn deferred(&mut self) -> Vec<Deferred> {
            std::mem::take(&mut self.out)
        }
    }
    let go = || {
        let mut engine = Engine::new(T0, 99);
        engine.set_record_payloads(false);
        let sm = engine
            .create_state_machine("w", machine(def.clone()))
            .unwrap();
        for i in 0..20 {
            engine
                .start_execution(&sm, &format!("w-{i}"), json!({"n": 0}))
                .unwrap();
        }
        let mut h = H {
            k: 0,
            out: Vec::new(),
        };
        assert!(engine.advance_until_idle_or(i64::MAX, &mut h));
        let total: usize = engine
            .list_executions(&sm)
            .iter()
            .map(|a| engine.history(a).len())
            .sum();
        assert!(engine.open_executions().is_empty());
        (engine.now_ms(), total)
    };
    let started = std::time::Instant::now();
    let a = go();
    eprintln!("{} history events in {:?}", a.1, started.elapsed());
    assert_eq!(a, go());
    assert!(a.1 > 20 * 200 * 14, "{a:?}");
    // Generous bound for debug builds on a shared machine.
    assert!(started.elapsed().as_secs() < 30);
}

#[test]
fn nested_map_in_parallel_and_redrive_of_a_failed_map() {
    // Parallel → Map → Task; the Task fails for item 1 on the first run only.
    let def = json!({"StartAt": "Prep", "States": {
        "Prep": {"Type": "Pass", "Result": "prepared", "ResultPath": "$.prep", "Next": "P"},
        "P": {"Type": "Parallel", "Branches": [
            {"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.items",
                "ItemProcessor": {"StartAt": "T", "States": {
                    "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}},
                "End": true}}},
            {"StartAt": "B", "States": {"B": {"Type": "Pass", "Result": "b", "End": true}}}],
          "ResultPath": "$.res", "End": true}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({"items": [10, 11, 12]}));
    let mut first_run = true;
    let mut calls = Vec::new();
    let drive = |engine: &mut Engine, first_run: bool, calls: &mut Vec<Value>| {
        let mut h = |c: &TaskCall<'_>| {
            calls.push(c.input.clone());
            if first_run && *c.input == json!(11) {
                TaskOutcome::failed("Item.Failed", "eleven")
            } else {
                TaskOutcome::Succeeded(json!(c.input.as_i64().unwrap() * 2))
            }
        };
        engine.advance_until_idle_or(i64::MAX, &mut h);
    };
    drive(&mut engine, first_run, &mut calls);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(
        (d.status, d.error.as_deref()),
        (ExecutionStatus::Failed, Some("Item.Failed"))
    );
    first_run = false;
    engine.redrive_execution(&arn).unwrap();
    drive(&mut engine, first_run, &mut calls);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::Succeeded);
    assert_eq!(
        d.output,
        Some(json!({"items": [10, 11, 12], "prep": "prepared", "res": [[20, 22, 24], "b"]}))
    );
    // The whole Parallel state reran (per-iteration redrive is not modelled); Prep did not.
    let t = types(&engine, &arn);
    assert_eq!(
        t.iter().filter(|e| **e == "PassStateEntered").count(),
        1 + 2
    );
    assert_eq!(
        t.iter().filter(|e| **e == "ParallelStateEntered").count(),
        2
    );
}

#[test]
fn sdk_stop_execution_and_trace_cursor() {
    let mut engine = Engine::new(T0, 1);
    let sleeper = engine
        .create_state_machine(
            "sleeper",
            machine(json!({"StartAt": "W", "States": {
            "W": {"Type": "Wait", "Seconds": 1000, "End": true}}})),
        )
        .unwrap();
    let s = engine
        .start_execution(&sleeper, "s", json!({}))
        .unwrap()
        .execution_arn;
    let (evs, cursor) = engine.events_since(0);
    assert_eq!(evs.len(), 1);
    let stopper = json!({"StartAt": "S", "States": {
        "S": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:stopExecution",
              "Parameters": {"ExecutionArn.$": "$.arn", "Error": "Halt", "Cause": "enough"}, "End": true}}});
    let sm = engine
        .create_state_machine("stopper", machine(stopper))
        .unwrap();
    engine.advance_to(T0 + 7_000, &mut NoTasks);
    let x = engine
        .start_execution(&sm, "x", json!({"arn": s}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    assert_eq!(
        engine.output(&x),
        Some(&json!({"StopDate": "2026-01-01T00:00:07.000Z"}))
    );
    let d = engine.describe_execution(&s).unwrap();
    assert_eq!(
        (d.status, d.error.as_deref(), d.cause.as_deref()),
        (ExecutionStatus::Aborted, Some("Halt"), Some("enough"))
    );
    // The trace interleaves both executions in the order events happened.
    let (evs, _) = engine.events_since(cursor);
    let seen: Vec<(&str, &str)> = evs
        .iter()
        .map(|(a, e)| (&a[a.len() - 1..], e.event_type))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("s", "WaitStateEntered"),
            ("x", "ExecutionStarted"),
            ("x", "TaskStateEntered"),
            ("x", "TaskScheduled"),
            ("x", "TaskStarted"),
            ("s", "ExecutionAborted"),
            ("x", "TaskSucceeded"),
            ("x", "TaskStateExited"),
            ("x", "ExecutionSucceeded"),
        ]
    );
    assert!(engine.open_executions().is_empty());
}

#[test]
fn the_event_budget_stops_a_machine_that_restarts_itself_at_once() {
    // Each execution starts the next one with a new name and ends: no execution reaches its
    // own quota and no timer is ever set, so only the budget stops the engine.
    let def = json!({
        "StartAt": "Next",
        "States": {"Next": {
            "Type": "Task",
            "Resource": "arn:aws:states:::states:startExecution",
            "Parameters": {
                "StateMachineArn.$": "$$.StateMachine.Id",
                "Name.$": "States.Format('g{}', States.MathAdd($.n, 1))",
                "Input": {"n.$": "States.MathAdd($.n, 1)"}
            },
            "ResultPath": null,
            "End": true
        }}
    });
    let mut engine = Engine::new(T0, 1);
    engine.set_event_budget(Some(5_000));
    start(&mut engine, def, json!({"n": 0}));
    assert!(!engine.budget_spent());
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    assert!(engine.budget_spent());
    let written = engine.events_since(0).1;
    // It stops within one execution's worth of events past the budget.
    assert!((5_000..5_100).contains(&written), "{written}");
    assert_eq!(engine.now_ms(), T0, "all of it at one virtual instant");
    // Once spent, running again does nothing.
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    assert_eq!(engine.events_since(0).1, written);
}

#[test]
fn started_reads_the_description_in_place() {
    let mut engine = Engine::new(T0, 1);
    let def =
        json!({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 10, "End": true}}});
    let sm = engine.create_state_machine("m", machine(def)).unwrap();
    engine.advance_to(T0 + 5_000, &mut NoTasks);
    let arn = engine
        .start_execution(&sm, "run-1", json!({"executionId": "e-1"}))
        .unwrap()
        .execution_arn;
    engine.run_until_idle(&mut NoTasks);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(engine.started(&arn), Some((d.start_ms, &d.input)));
    assert_eq!(d.start_ms, T0 + 5_000);
    assert_eq!(
        engine.started("arn:aws:states:us-east-1:123456789012:execution:m:none"),
        None
    );
}
