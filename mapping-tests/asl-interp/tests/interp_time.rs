//! Virtual time: Wait, retry backoff and jitter, task timeouts, heartbeats, callbacks.

use crate::common;

use asl_interp::*;
use common::*;
use serde_json::{json, Value};

fn exit_time(engine: &Engine, arn: &str, ty: &str) -> i64 {
    engine
        .history(arn)
        .iter()
        .find(|e| e.event_type == ty)
        .map(|e| e.timestamp_ms)
        .expect("event present")
}

fn wait_machine(wait: Value) -> Value {
    let mut w = wait;
    w["Type"] = json!("Wait");
    w["Next"] = json!("Done");
    json!({"StartAt": "W", "States": {"W": w, "Done": {"Type": "Succeed"}}})
}

#[test]
fn wait_all_four_forms() {
    let cases = [
        (json!({"Seconds": 90}), json!({}), T0 + 90_000),
        (json!({"SecondsPath": "$.s"}), json!({"s": 30}), T0 + 30_000),
        (
            json!({"Timestamp": "2026-01-01T01:00:00Z"}),
            json!({}),
            T0 + 3_600_000,
        ),
        (
            json!({"TimestampPath": "$.t"}),
            json!({"t": "2026-01-02T00:00:00.500Z"}),
            T0 + 86_400_500,
        ),
        // A timestamp in the past proceeds at once.
        (json!({"Timestamp": "2025-01-01T00:00:00Z"}), json!({}), T0),
    ];
    for (w, input, at) in cases {
        let mut engine = Engine::new(T0, 1);
        let arn = start(&mut engine, wait_machine(w.clone()), input);
        engine.run_until_idle(&mut NoTasks);
        if at > T0 {
            assert_eq!(engine.status(&arn), Some(ExecutionStatus::Running));
            assert_eq!(engine.next_timer(), Some(at), "{w}");
            assert_eq!(engine.positions(&arn)[0].waiting, Waiting::Timer(at));
            engine.advance_to(at - 1, &mut NoTasks);
            assert_eq!(engine.now_ms(), at - 1);
            assert_eq!(engine.status(&arn), Some(ExecutionStatus::Running));
        }
        engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
        assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded), "{w}");
        assert_eq!(exit_time(&engine, &arn, "WaitStateExited"), at, "{w}");
        assert_eq!(engine.now_ms(), at);
    }
    // Bad values are runtime errors.
    for (w, input) in [
        (json!({"SecondsPath": "$.s"}), json!({"s": -1})),
        (json!({"SecondsPath": "$.s"}), json!({})),
        (json!({"TimestampPath": "$.t"}), json!({"t": "tomorrow"})),
    ] {
        assert_eq!(failure(wait_machine(w), input).0, "States.Runtime");
    }
}

#[test]
fn wait_refusals_in_aws_words() {
    // Causes as AWS records them, after the state/event prefix.
    let cases = [
        (json!({"SecondsPath": "$.s"}), json!({}), "The SecondsPath parameter does not reference an input value: $.s"),
        (json!({"SecondsPath": "$.s"}), json!({"s": -1}), "The SecondsPath parameter references a negative value: $.s == -1"),
        (json!({"SecondsPath": "$.s"}), json!({"s": 1.5}), "The SecondsPath parameter cannot be parsed as a long value: $.s == 1.5"),
        // No `T`, no offset, impossible dates: refused (RFC 3339 alone would allow the space).
        (json!({"TimestampPath": "$.t"}), json!({"t": "2016-12-05 21:29:29Z"}),
            "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == 2016-12-05 21:29:29Z"),
        (json!({"TimestampPath": "$.t"}), json!({"t": "2016-12-05T21:29:29"}),
            "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == 2016-12-05T21:29:29"),
        (json!({"TimestampPath": "$.t"}), json!({"t": "2016-13-05T21:29:29Z"}),
            "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == 2016-13-05T21:29:29Z"),
        // More than 2^31-1 seconds ahead.
        (json!({"SecondsPath": "$.s"}), json!({"s": 2_147_483_648u64}), "Wait state delay is too long."),
    ];
    for (w, input, why) in cases {
        let (e, c) = failure(wait_machine(w.clone()), input);
        assert_eq!(e, "States.Runtime");
        assert_eq!(
            c,
            format!("An error occurred while executing the state 'W' (entered at the event id #2). {why}"),
            "{w}"
        );
    }
    // Nanoseconds and the longest allowed wait are fine.
    for (w, input) in [
        (
            json!({"TimestampPath": "$.t"}),
            json!({"t": "2016-03-05T21:29:29.243167252Z"}),
        ),
        (
            json!({"SecondsPath": "$.s"}),
            json!({"s": 2_147_483_647u64}),
        ),
    ] {
        let (engine, arn) = run(wait_machine(w.clone()), input);
        assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded), "{w}");
    }
}

#[test]
fn data_limit_from_a_task_is_caught() {
    // AWS catches a task's States.DataLimitExceeded by name and by States.ALL (recorded).
    for catcher in ["States.DataLimitExceeded", "States.ALL"] {
        let def = json!({"StartAt": "T", "States": {
            "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                  "Catch": [{"ErrorEquals": [catcher], "Next": "C"}], "End": true},
            "C": {"Type": "Pass", "End": true}}});
        let mut engine = Engine::new(T0, 1);
        let arn = start(&mut engine, def, json!({}));
        let big = "x".repeat(300_000);
        let mut h = |_: &TaskCall<'_>| TaskOutcome::Succeeded(json!(big.clone()));
        engine.advance_until_idle_or(i64::MAX, &mut h);
        assert_eq!(
            engine.status(&arn),
            Some(ExecutionStatus::Succeeded),
            "{catcher}"
        );
        assert_eq!(
            engine.output(&arn).unwrap(),
            &json!({"Error": "States.DataLimitExceeded",
                "Cause": "The state/task 'lambda' returned a result with a size exceeding the maximum number of bytes service limit."})
        );
    }
    // A Pass state's oversized output fails the execution, naming the state.
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass",
        "Result": "y".repeat(300_000), "End": true}}});
    let (e, c) = failure(def, json!({}));
    assert_eq!(e, "States.DataLimitExceeded");
    assert!(c.starts_with("The state/task 'P' returned a result"), "{c}");
}

#[test]
fn failures_reported_without_error_or_cause_are_caught_as_null() {
    // SendTaskFailure with neither error nor cause: a Catch writes nulls, the events leave
    // the fields out (recorded).
    let def = callback_machine(
        json!({"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Timeout"}]}),
    );
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    let mut h = Parker::default();
    engine.run_until_idle(&mut h);
    engine.send_task_failure(&h.tokens[0], "", "").unwrap();
    engine.run_until_idle(&mut h);
    assert_eq!(
        engine.output(&arn).unwrap()["err"],
        json!({"Error": null, "Cause": null})
    );
    let failed = engine
        .history(&arn)
        .iter()
        .find(|e| e.event_type == "TaskFailed")
        .unwrap();
    assert!(failed.details.get("error").is_none() && failed.details.get("cause").is_none());
}

fn flaky_task(retry: Value, catch: Value) -> Value {
    json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Retry": retry,
              "Catch": catch, "Next": "Ok"},
        "Ok": {"Type": "Succeed"},
        "Caught": {"Type": "Pass", "End": true}}})
}

/// Runs `def` with a handler failing with `error` for the first `fails` calls; returns the
/// engine, the execution and the virtual times of each call.
fn run_flaky(def: Value, error: &str, fails: usize, seed: u64) -> (Engine, String, Vec<i64>) {
    let mut engine = Engine::new(T0, seed);
    let arn = start(&mut engine, def, json!({}));
    let mut calls = Vec::new();
    let mut h = |c: &TaskCall<'_>| {
        calls.push(c.now_ms);
        if calls.len() <= fails {
            TaskOutcome::failed(error, "boom")
        } else {
            TaskOutcome::Succeeded(json!("ok"))
        }
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    (engine, arn, calls)
}

fn offsets(calls: &[i64]) -> Vec<i64> {
    calls.iter().map(|t| t - T0).collect()
}

#[test]
fn retry_backoff_timings() {
    let def = flaky_task(
        json!([{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 2, "BackoffRate": 3.0, "MaxAttempts": 3}]),
        json!([]),
    );
    let (engine, arn, calls) = run_flaky(def, "E", 3, 1);
    assert_eq!(offsets(&calls), vec![0, 2_000, 8_000, 26_000]);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));

    // MaxDelaySeconds caps each delay.
    let def = flaky_task(
        json!([{"ErrorEquals": ["E"], "IntervalSeconds": 2, "BackoffRate": 3.0, "MaxAttempts": 4, "MaxDelaySeconds": 10}]),
        json!([]),
    );
    let (_, _, calls) = run_flaky(def, "E", 4, 1);
    assert_eq!(offsets(&calls), vec![0, 2_000, 8_000, 18_000, 28_000]);

    // Defaults: 1 s, x2, 3 attempts; a fourth failure fails the execution.
    let def = flaky_task(json!([{"ErrorEquals": ["E"]}]), json!([]));
    let (engine, arn, calls) = run_flaky(def, "E", 10, 1);
    assert_eq!(offsets(&calls), vec![0, 1_000, 3_000, 7_000]);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(
        (d.status, d.error.as_deref()),
        (ExecutionStatus::Failed, Some("E"))
    );

    // MaxAttempts 0 never retries, and the first matching retrier wins.
    let def = flaky_task(
        json!([{"ErrorEquals": ["E"], "MaxAttempts": 0}, {"ErrorEquals": ["States.ALL"], "MaxAttempts": 5}]),
        json!([]),
    );
    let (_, _, calls) = run_flaky(def, "E", 10, 1);
    assert_eq!(calls.len(), 1);

    // Each retrier counts its own attempts.
    let def = flaky_task(
        json!([{"ErrorEquals": ["A"], "MaxAttempts": 1, "IntervalSeconds": 1}, {"ErrorEquals": ["B"], "MaxAttempts": 1, "IntervalSeconds": 5}]),
        json!([]),
    );
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    let mut calls = Vec::new();
    let mut h = |c: &TaskCall<'_>| {
        calls.push((c.now_ms - T0, c.retry_count));
        match calls.len() {
            1 => TaskOutcome::failed("A", ""),
            2 => TaskOutcome::failed("B", ""),
            _ => TaskOutcome::Succeeded(json!(1)),
        }
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    assert_eq!(calls, vec![(0, 0), (1_000, 1), (6_000, 2)]);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
}

#[test]
fn full_jitter_is_reproducible_by_seed() {
    let def = || {
        flaky_task(
            json!([{"ErrorEquals": ["E"], "IntervalSeconds": 10, "MaxAttempts": 5, "JitterStrategy": "FULL"}]),
            json!([]),
        )
    };
    let (_, _, a) = run_flaky(def(), "E", 5, 7);
    let (_, _, b) = run_flaky(def(), "E", 5, 7);
    let (_, _, c) = run_flaky(def(), "E", 5, 8);
    assert_eq!(a, b);
    assert_ne!(a, c);
    // Each delay lies in [0, 10 × 2^n] seconds.
    for (n, w) in a.windows(2).enumerate() {
        let d = w[1] - w[0];
        assert!((0..=10_000 << n).contains(&d), "{d}");
    }
    let none = flaky_task(
        json!([{"ErrorEquals": ["E"], "IntervalSeconds": 10, "MaxAttempts": 1, "JitterStrategy": "NONE"}]),
        json!([]),
    );
    assert_eq!(offsets(&run_flaky(none, "E", 1, 7).2), vec![0, 10_000]);
}

#[test]
fn catch_order_and_result_path() {
    let def = flaky_task(
        json!([]),
        json!([
            {"ErrorEquals": ["Other"], "Next": "Ok"},
            {"ErrorEquals": ["E", "States.ALL"], "ResultPath": "$.err", "Next": "Caught"},
            {"ErrorEquals": ["E"], "Next": "Ok"}
        ]),
    );
    let (engine, arn, _) = run_flaky(def, "E", 10, 1);
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"err": {"Error": "E", "Cause": "boom"}}))
    );
    assert_eq!(engine.current_state(&arn), None);
    let t = types(&engine, &arn);
    assert_eq!(
        &t[t.len() - 4..],
        [
            "TaskStateExited",
            "PassStateEntered",
            "PassStateExited",
            "ExecutionSucceeded"
        ]
    );

    // Retry exhausts before Catch; States.TaskFailed catches task errors but not timeouts.
    let def = flaky_task(
        json!([{"ErrorEquals": ["E"], "MaxAttempts": 2, "IntervalSeconds": 1}]),
        json!([{"ErrorEquals": ["States.TaskFailed"], "Next": "Caught"}]),
    );
    let (engine, arn, calls) = run_flaky(def, "E", 10, 1);
    assert_eq!(calls.len(), 3);
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"Error": "E", "Cause": "boom"}))
    );
}

#[test]
fn states_all_does_not_catch_runtime() {
    let def = json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"x.$": "$.missing"},
              "Retry": [{"ErrorEquals": ["States.ALL"]}],
              "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "C"}], "End": true},
        "C": {"Type": "Succeed"}}});
    let (engine, arn, calls) = run_flaky(def, "E", 0, 1);
    assert!(calls.is_empty());
    assert_eq!(
        engine.describe_execution(&arn).unwrap().error.as_deref(),
        Some("States.Runtime")
    );
    assert_eq!(
        types(&engine, &arn),
        vec!["ExecutionStarted", "TaskStateEntered", "ExecutionFailed"]
    );

    // A catchable intrinsic failure in Parameters is caught.
    let def = json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"x.$": "States.ArrayGetItem(States.Array(1), 9)"},
              "Catch": [{"ErrorEquals": ["States.IntrinsicFailure"], "Next": "C"}], "End": true},
        "C": {"Type": "Succeed"}}});
    let (engine, arn, _) = run_flaky(def, "E", 0, 1);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
}

fn callback_machine(task: Value) -> Value {
    let mut t = json!({"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": "q", "MessageBody": {"token.$": "$$.Task.Token"}}, "Next": "Ok"});
    for (k, v) in task.as_object().unwrap() {
        t[k] = v.clone();
    }
    json!({"StartAt": "T", "States": {"T": t, "Ok": {"Type": "Succeed"},
        "Timeout": {"Type": "Pass", "End": true}}})
}

/// A handler that records tokens and answers nothing.
#[derive(Default)]
struct Parker {
    tokens: Vec<String>,
}

impl TaskHandler for Parker {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        let tok = call.input["MessageBody"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(Some(tok.as_str()), call.task_token);
        self.tokens.push(tok);
        TaskOutcome::Succeeded(json!({"MessageId": "m"}))
    }
}

#[test]
fn task_timeout_seconds_and_path() {
    for (task, input, at) in [
        (json!({"TimeoutSeconds": 300}), json!({}), 300_000),
        (
            json!({"TimeoutSecondsPath": "$.to"}),
            json!({"to": 42}),
            42_000,
        ),
    ] {
        let mut engine = Engine::new(T0, 1);
        let arn = start(&mut engine, callback_machine(task), input);
        let mut h = Parker::default();
        engine.advance_until_idle_or(i64::MAX, &mut h);
        let d = engine.describe_execution(&arn).unwrap();
        assert_eq!(
            (d.status, d.error.as_deref()),
            (ExecutionStatus::Failed, Some("States.Timeout"))
        );
        assert_eq!(exit_time(&engine, &arn, "TaskTimedOut") - T0, at);
        // The token is closed now.
        assert!(matches!(
            engine.send_task_success(&h.tokens[0], json!({})),
            Err(SfnError::TaskTimedOut(_))
        ));
    }
}

#[test]
fn heartbeat_timeout_and_keep_alive() {
    let task = json!({"TimeoutSeconds": 600, "HeartbeatSeconds": 60,
        "Catch": [{"ErrorEquals": ["States.HeartbeatTimeout"], "Next": "Timeout"}]});
    // No heartbeat: times out after 60 s, caught by a HeartbeatTimeout catcher.
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, callback_machine(task.clone()), json!({}));
    let mut h = Parker::default();
    engine.advance_until_idle_or(i64::MAX, &mut h);
    assert_eq!(exit_time(&engine, &arn, "TaskTimedOut") - T0, 60_000);
    // A timeout has an empty cause: "" in the Catch output, no field in the event (recorded).
    assert_eq!(
        engine.output(&arn).unwrap(),
        &json!({"Error": "States.Timeout", "Cause": ""})
    );
    let timed_out = engine
        .history(&arn)
        .iter()
        .find(|e| e.event_type == "TaskTimedOut")
        .unwrap();
    assert!(
        timed_out.details.get("cause").is_none(),
        "{:?}",
        timed_out.details
    );

    // Heartbeats every 50 s keep it alive; no history events for heartbeats; success at 170 s.
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, callback_machine(task), json!({}));
    let mut h = Parker::default();
    engine.run_until_idle(&mut h);
    let tok = h.tokens[0].clone();
    assert_eq!(engine.open_tokens(&arn), vec![tok.as_str()]);
    assert_eq!(
        engine.positions(&arn)[0].waiting,
        Waiting::Token(tok.clone())
    );
    let before = engine.history(&arn).len();
    for k in 1..=3 {
        engine.advance_to(T0 + k * 50_000, &mut h);
        engine.send_task_heartbeat(&tok).unwrap();
    }
    assert_eq!(engine.history(&arn).len(), before);
    engine.advance_to(T0 + 170_000, &mut h);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Running));
    engine.send_task_success(&tok, json!({"done": 1})).unwrap();
    engine.run_until_idle(&mut h);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    assert_eq!(engine.output(&arn), Some(&json!({"done": 1})));

    // TimeoutSeconds is a hard cap regardless of heartbeats.
    let mut engine = Engine::new(T0, 1);
    let arn = start(
        &mut engine,
        callback_machine(json!({"TimeoutSeconds": 100, "HeartbeatSeconds": 30})),
        json!({}),
    );
    let mut h = Parker::default();
    engine.run_until_idle(&mut h);
    let tok = h.tokens[0].clone();
    for k in 1..=5 {
        engine.advance_to(T0 + k * 25_000, &mut h);
        let _ = engine.send_task_heartbeat(&tok);
    }
    assert_eq!(exit_time(&engine, &arn, "TaskTimedOut") - T0, 100_000);
    assert!(matches!(
        engine.send_task_heartbeat(&tok),
        Err(SfnError::TaskTimedOut(_))
    ));
}

#[test]
fn wait_for_task_token_success_failure_and_closed_token() {
    let def = callback_machine(
        json!({"ResultPath": "$.cb", "Catch": [{"ErrorEquals": ["Custom.Error"], "ResultPath": "$.err", "Next": "Timeout"}]}),
    );
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def.clone(), json!({"a": 1}));
    let mut h = Parker::default();
    engine.run_until_idle(&mut h);
    let tok = h.tokens[0].clone();
    assert_eq!(engine.open_executions(), vec![arn.as_str()]);
    engine.advance_to(T0 + 5_000, &mut h);
    engine.send_task_success(&tok, json!({"ok": true})).unwrap();
    engine.run_until_idle(&mut h);
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"a": 1, "cb": {"ok": true}}))
    );
    assert_eq!(
        types(&engine, &arn),
        vec![
            "ExecutionStarted",
            "TaskStateEntered",
            "TaskScheduled",
            "TaskStarted",
            "TaskSubmitted",
            "TaskSucceeded",
            "TaskStateExited",
            "SucceedStateEntered",
            "SucceedStateExited",
            "ExecutionSucceeded"
        ]
    );
    // Closed token → TaskTimedOut; never-issued token → InvalidToken.
    assert!(matches!(
        engine.send_task_success(&tok, json!({})),
        Err(SfnError::TaskTimedOut(_))
    ));
    assert!(matches!(
        engine.send_task_failure("garbage", "E", "c"),
        Err(SfnError::InvalidToken(_))
    ));

    // Failure through the token is caught by name.
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({"a": 1}));
    let mut h = Parker::default();
    engine.run_until_idle(&mut h);
    engine
        .send_task_failure(&h.tokens[0], "Custom.Error", "nope")
        .unwrap();
    engine.run_until_idle(&mut h);
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"a": 1, "err": {"Error": "Custom.Error", "Cause": "nope"}}))
    );
}

/// A relay that answers each token 30 s later through the deferred list.
struct Relay;

impl TaskHandler for Relay {
    fn invoke(&mut self, _call: &TaskCall<'_>) -> TaskOutcome {
        TaskOutcome::Pending
    }
}

#[test]
fn deferred_callbacks_arrive_in_virtual_time() {
    struct Delayed {
        pending: Vec<Deferred>,
    }
    impl TaskHandler for Delayed {
        fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
            self.pending.push(Deferred {
                at_ms: call.now_ms + 30_000,
                callback: Callback::Success {
                    token: call.token.to_string(),
                    output: json!({"late": true}),
                },
            });
            TaskOutcome::Pending
        }
        fn deferred(&mut self) -> Vec<Deferred> {
            std::mem::take(&mut self.pending)
        }
    }
    let def = callback_machine(json!({"TimeoutSeconds": 3600}));
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    let mut h = Delayed {
        pending: Vec::new(),
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    assert_eq!(exit_time(&engine, &arn, "TaskSucceeded") - T0, 30_000);
    assert!(engine.rejected_callbacks().is_empty());

    // A request-response task left Pending completes through its engine token.
    let def = json!({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    engine.run_until_idle(&mut Relay);
    let tok = engine.open_tokens(&arn)[0].to_string();
    engine.schedule_callback(
        T0 + 10,
        Callback::Success {
            token: tok.clone(),
            output: json!(1),
        },
    );
    engine.schedule_callback(
        T0 + 20,
        Callback::Success {
            token: tok,
            output: json!(2),
        },
    );
    engine.advance_until_idle_or(i64::MAX, &mut Relay);
    assert_eq!(engine.output(&arn), Some(&json!(1)));
    assert_eq!(engine.rejected_callbacks().len(), 1);
    assert!(!types(&engine, &arn).contains(&"TaskSubmitted"));
}

#[test]
fn execution_timeout() {
    let def = json!({"TimeoutSeconds": 60, "StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}});
    let (engine, arn) = run(def, json!({}));
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::TimedOut);
    // DescribeExecution of a timed-out execution has no error or cause on AWS (recorded).
    assert_eq!((d.error, d.cause), (None, None));
    assert_eq!(d.stop_ms, Some(T0 + 60_000));
    assert_eq!(last_event(&engine, &arn).event_type, "ExecutionTimedOut");
    assert_eq!(engine.next_timer(), None);
}
