//! The engine against hand-written handlers: each test would fail on an engine that re-ran
//! effects on replay, started a second execution under one name, lost a callback, miscounted
//! operations, let an execution past the cap or replayed a log the handler no longer matches.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use durable_interp::engine::Failed;
use durable_interp::{
    error, event, CallbackOutcome, ConditionOutcome, Context, Decision, Effects, Engine,
    ExecutionStatus, Program, StepCall, StepHandler, Stop,
};
use serde_json::{json, Value};

type Body = dyn Fn(&Context<'_>, &Value) -> Result<Result<Value, Failed>, Stop>;

struct Handler(Box<Body>);

impl Program for Handler {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop> {
        (self.0)(ctx, input)
    }
}

fn program(
    f: impl Fn(&Context<'_>, &Value) -> Result<Result<Value, Failed>, Stop> + 'static,
) -> Rc<dyn Program> {
    Rc::new(Handler(Box::new(f)))
}

/// Counts each step's runs and answers with the count; keeps the callback ids it hands out.
#[derive(Default)]
struct Effectful {
    runs: BTreeMap<String, u64>,
    callbacks: Vec<String>,
    fail_submitter: bool,
    /// What every step returns instead of its run count.
    result: Option<Value>,
}

impl StepHandler for Effectful {
    fn step(
        &mut self,
        call: &StepCall<'_>,
        _: &mut Effects,
    ) -> Result<Value, durable_interp::StepError> {
        let n = self.runs.entry(call.name.to_string()).or_default();
        *n += 1;
        if let Some(id) = call.callback_id {
            if self.fail_submitter {
                return Err("token row not written".into());
            }
            self.callbacks.push(id.to_string());
        }
        Ok(self.result.clone().unwrap_or(json!(*n)))
    }
}

const T0: i64 = 1_000_000;

fn events(engine: &Engine, arn: &str) -> Vec<&'static str> {
    engine
        .execution(arn)
        .unwrap()
        .history
        .iter()
        .map(|e| e.event_type)
        .collect()
}

#[test]
fn a_replay_returns_recorded_results_without_running_effects_again() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let a = ctx.step("a", &json!(null))?.unwrap();
            ctx.wait("pause", 10)?;
            let b = ctx.step("b", &json!(null))?.unwrap();
            ctx.wait("pause again", 5)?;
            Ok(Ok(json!([a, b])))
        }),
    );
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(&mut h);
    assert_eq!(e.execution(&arn).unwrap().status, ExecutionStatus::Running);
    assert_eq!(e.next_timer(), Some(T0 + 10_000));
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Succeeded);
    assert_eq!(x.result, Some(json!([1, 1])));
    assert_eq!(h.runs.get("a"), Some(&1), "step a ran again on replay");
    assert_eq!(h.runs.get("b"), Some(&1));
    assert_eq!(x.invocations, 3);
    // Invocation 2 replays a and the first wait; invocation 3 those, b and the second wait.
    assert_eq!(x.replayed, 2 + 4);
    assert_eq!(x.end_ms, Some(T0 + 15_000));
    assert_eq!(
        events(&e, &arn),
        [
            event::EXECUTION_STARTED,
            event::STEP_STARTED,
            event::STEP_SUCCEEDED,
            event::WAIT_STARTED,
            event::INVOCATION_COMPLETED,
            event::WAIT_SUCCEEDED,
            event::STEP_STARTED,
            event::STEP_SUCCEEDED,
            event::WAIT_STARTED,
            event::INVOCATION_COMPLETED,
            event::WAIT_SUCCEEDED,
            event::INVOCATION_COMPLETED,
            event::EXECUTION_SUCCEEDED,
        ]
    );
}

#[test]
fn a_name_starts_one_execution_per_function_version() {
    let mut e = Engine::new(T0);
    let body = || {
        program(|ctx, _| {
            ctx.wait("forever", 1_000_000)?;
            Ok(Ok(json!(null)))
        })
    };
    let v1 = e.publish_version("f", body());
    let v2 = e.publish_version("f", body());
    assert!(v1.ends_with(":f:1") && v2.ends_with(":f:2"), "{v1} {v2}");
    let a = e.start_execution(&v1, "lineage", json!({"n": 1})).unwrap();
    let b = e.start_execution(&v1, "lineage", json!({"n": 2})).unwrap();
    let c = e.start_execution(&v2, "lineage", json!({})).unwrap();
    assert!(!a.existing && b.existing && !c.existing);
    assert_eq!(a.arn, b.arn);
    assert_ne!(a.arn, c.arn);
    assert_eq!(e.executions().len(), 2);
    assert_eq!(e.execution(&a.arn).unwrap().input, json!({"n": 1}));
    let missing = e.start_execution(
        "arn:aws:lambda:us-east-1:123456789012:function:g:1",
        "x",
        json!({}),
    );
    assert_eq!(missing.unwrap_err().code, "ResourceNotFoundException");
}

fn parked() -> Rc<dyn Program> {
    program(|ctx, _| {
        let r = match ctx.wait_for_callback("park", 60, &json!({"row": 1}))? {
            CallbackOutcome::Succeeded(v) => json!({"woken": v}),
            CallbackOutcome::TimedOut => json!("timed out"),
            CallbackOutcome::Failed { error } => json!({"failed": error}),
            CallbackOutcome::SubmitterFailed(e) => json!({"unregistered": e}),
        };
        ctx.step("after", &json!(null))?.unwrap();
        Ok(Ok(r))
    })
}

#[test]
fn a_completed_callback_resumes_the_execution_once() {
    let mut e = Engine::new(T0);
    let f = e.publish_version("f", parked());
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(&mut h);
    let [id] = h.callbacks.as_slice() else {
        panic!("{:?}", h.callbacks)
    };
    let id = id.clone();
    e.send_callback_success(&id, json!({"by": "bridge"}))
        .unwrap();
    e.run_until_idle(&mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Succeeded);
    assert_eq!(x.result, Some(json!({"woken": {"by": "bridge"}})));
    assert_eq!(h.runs.get("park (submitter)"), Some(&1));
    let again = e.send_callback_success(&id, json!({})).unwrap_err();
    assert_eq!(again.code, "CallbackTimeoutException");
    assert_eq!(
        e.send_callback_success("nope", json!({})).unwrap_err().code,
        "ResourceNotFoundException"
    );
    let evs = events(&e, &arn);
    assert!(
        evs.contains(&event::CALLBACK_STARTED) && evs.contains(&event::CALLBACK_SUCCEEDED),
        "{evs:?}"
    );
    // The timeout set when it parked does nothing once the callback is closed.
    e.advance_to(T0 + 120_000, &mut h);
    assert!(!events(&e, &arn).contains(&event::CALLBACK_TIMED_OUT));
}

#[test]
fn a_callback_nobody_completes_times_out() {
    let mut e = Engine::new(T0);
    let f = e.publish_version("f", parked());
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.advance_to(T0 + 59_999, &mut h);
    assert_eq!(e.execution(&arn).unwrap().status, ExecutionStatus::Running);
    e.advance_to(T0 + 60_000, &mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.result, Some(json!("timed out")));
    assert!(events(&e, &arn).contains(&event::CALLBACK_TIMED_OUT));
    let failed = e
        .send_callback_failure(&h.callbacks[0], "late")
        .unwrap_err();
    assert_eq!(failed.code, "CallbackTimeoutException");
}

#[test]
fn a_callback_failure_and_a_failed_submitter_reach_the_handler() {
    let mut e = Engine::new(T0);
    let f = e.publish_version("f", parked());
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(&mut h);
    e.send_callback_failure(&h.callbacks[0], "Rejected")
        .unwrap();
    e.run_until_idle(&mut h);
    assert_eq!(
        e.execution(&arn).unwrap().result,
        Some(json!({"failed": "Rejected"}))
    );
    assert!(events(&e, &arn).contains(&event::CALLBACK_FAILED));

    let mut h = Effectful {
        fail_submitter: true,
        ..Effectful::default()
    };
    let arn = e.start_execution(&f, "y", json!({})).unwrap().arn;
    e.run_until_idle(&mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(
        x.result,
        Some(json!({"unregistered": "token row not written"}))
    );
    assert_eq!(x.invocations, 1, "a failed submitter must not suspend");
}

#[test]
fn operations_are_counted_as_the_service_bills_them() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            ctx.step("one", &json!(null))?.unwrap();
            ctx.wait("two", 1)?;
            let _ = ctx.wait_for_callback("three to five", 1, &json!(null))?;
            Ok(Ok(json!(null)))
        }),
    );
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Succeeded);
    assert_eq!(x.operations_billed, 5);
    assert_eq!(x.ops.len(), 5);
}

/// Runs a handler that takes steps for ever, each answered by `h`, until the engine stops it.
fn run_endless_steps(e: &mut Engine, h: &mut Effectful) -> String {
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            for i in 0.. {
                ctx.step(&format!("s{i}"), &json!(null))?.unwrap();
            }
            unreachable!()
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(h);
    arn
}

#[test]
fn an_execution_fails_at_the_operation_cap() {
    let mut e = Engine::new(T0);
    let mut h = Effectful::default();
    let arn = run_endless_steps(&mut e, &mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Failed);
    assert_eq!(x.error.as_ref().unwrap().error, error::OPERATION_LIMIT);
    assert_eq!(x.operations_billed, durable_interp::OPERATION_CAP);
    assert_eq!(h.runs.len() as u64, durable_interp::OPERATION_CAP);
}

#[test]
fn a_handler_that_asks_for_other_operations_on_replay_fails_as_non_deterministic() {
    let mut e = Engine::new(T0);
    let c = Rc::new(Cell::new(0));
    let f = e.publish_version(
        "f",
        program(move |ctx, _| {
            c.set(c.get() + 1);
            ctx.step(&format!("ask #{}", c.get()), &json!(null))?
                .unwrap();
            ctx.wait("pause", 1)?;
            Ok(Ok(json!(null)))
        }),
    );
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Failed);
    let err = x.error.as_ref().unwrap();
    assert_eq!(err.error, error::NON_DETERMINISTIC);
    assert!(
        err.cause.contains("ask #1") && err.cause.contains("ask #2"),
        "{}",
        err.cause
    );
    assert_eq!(h.runs.get("ask #2"), None, "the mismatched step ran");
}

#[test]
fn a_pending_poll_fails_the_execution_with_its_code() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|_, _| {
            durable_interp::poll::ready(std::future::pending::<()>())?;
            Ok(Ok(json!(null)))
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(&mut Effectful::default());
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.error.as_ref().unwrap().error, error::PENDING_POLL);
}

#[test]
fn a_handler_that_never_waits_long_is_stopped_by_the_budgets() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            for i in 0.. {
                ctx.wait(&format!("w{i}"), 0)?;
            }
            unreachable!()
        }),
    );
    // An event budget the execution meets before the service's operation cap.
    e.set_budgets(Some(5_000), None);
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    let mut h = Effectful::default();
    while e.step_timer(&mut h).is_some() {}
    assert!(e.budget_spent());
    assert_eq!(e.execution(&arn).unwrap().status, ExecutionStatus::Running);
    assert!(e.events_since(0).1 <= 5_010);

    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            for i in 0.. {
                ctx.wait(&format!("w{i}"), 0)?;
            }
            unreachable!()
        }),
    );
    e.set_budgets(None, Some(50));
    e.start_execution(&f, "x", json!({})).unwrap();
    while e.step_timer(&mut h).is_some() {}
    assert!(e.budget_spent());
    assert_eq!(e.invocations(), 50);
}

#[test]
fn a_stopped_execution_runs_nothing_more() {
    let mut e = Engine::new(T0);
    let f = e.publish_version("f", parked());
    let mut h = Effectful::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    e.run_until_idle(&mut h);
    e.stop_execution(&arn, "Operator.Abort", "console").unwrap();
    assert_eq!(
        e.stop_execution(&arn, "again", "").unwrap_err().code,
        "ConflictException"
    );
    assert!(e.send_callback_success(&h.callbacks[0], json!({})).is_err());
    e.advance_to(T0 + 3_600_000, &mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Stopped);
    assert_eq!(events(&e, &arn).last(), Some(&event::EXECUTION_STOPPED));
}

#[test]
fn a_step_can_start_another_execution_by_name() {
    struct Starter;
    impl StepHandler for Starter {
        fn step(
            &mut self,
            call: &StepCall<'_>,
            fx: &mut Effects,
        ) -> Result<Value, durable_interp::StepError> {
            fx.start_execution(
                call.function_arn,
                "next",
                json!({"from": call.execution_name}),
            );
            Ok(json!(null))
        }
    }
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, input| {
            if input.get("from").is_none() {
                ctx.step("hand over", &json!(null))?.unwrap();
            }
            Ok(Ok(json!(null)))
        }),
    );
    e.start_execution(&f, "first", json!({})).unwrap();
    e.run_until_idle(&mut Starter);
    let names: Vec<_> = e
        .executions()
        .iter()
        .map(|x| (x.name.as_str(), x.status))
        .collect();
    assert_eq!(
        names,
        [
            ("first", ExecutionStatus::Succeeded),
            ("next", ExecutionStatus::Succeeded)
        ]
    );
}

#[test]
fn a_step_whose_function_crashed_before_its_checkpoint_runs_again() {
    /// Crashes after the first run of every step and of every callback's submitter.
    #[derive(Default)]
    struct Crashing(BTreeMap<String, u64>);
    impl StepHandler for Crashing {
        fn step(
            &mut self,
            call: &StepCall<'_>,
            fx: &mut Effects,
        ) -> Result<Value, durable_interp::StepError> {
            let n = self.0.entry(call.name.to_string()).or_default();
            *n += 1;
            if *n == 1 {
                fx.crash_after();
            }
            Ok(json!(*n))
        }
    }
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let a = ctx.step("a", &json!(null))?.unwrap();
            let _ = ctx.wait_for_callback("park", 1, &json!(null))?;
            Ok(Ok(a))
        }),
    );
    let mut h = Crashing::default();
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Succeeded);
    // The effect ran twice (at least once), and the second run's result is the checkpoint.
    assert_eq!(x.result, Some(json!(2)));
    assert_eq!(h.0.get("a"), Some(&2));
    assert_eq!(h.0.get("park (submitter)"), Some(&2));
    // Only what was checkpointed is billed: the step and the callback once each.
    assert_eq!(x.operations_billed, 4);
    let crashed = x
        .history
        .iter()
        .filter(|ev| ev.detail.as_deref() == Some(durable_interp::engine::CRASHED))
        .count();
    assert_eq!(crashed, 2);
}

#[test]
fn an_execution_that_writes_more_than_the_state_cap_fails_at_the_cap() {
    let mut e = Engine::new(T0);
    // Each step returns 1 MiB of text, 2 bytes more as JSON, so the cap of 100 MiB is passed at
    // the 100th step, well before the operation cap.
    let mut h = Effectful {
        result: Some(json!("x".repeat(1024 * 1024))),
        ..Effectful::default()
    };
    let arn = run_endless_steps(&mut e, &mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Failed);
    assert_eq!(x.error.as_ref().unwrap().error, error::WRITTEN_STATE_LIMIT);
    assert_eq!(x.operations_billed, 100);
    assert!(x.state_bytes_written > durable_interp::WRITTEN_STATE_CAP);
}

/// A step whose effect fails its first `fails` attempts, and a condition check that counts up
/// from the carried state; both record what they were asked with.
#[derive(Default)]
struct Flaky {
    fails: u32,
    attempts: Vec<(String, u32, Option<Value>, i64)>,
}

impl StepHandler for Flaky {
    fn step(
        &mut self,
        call: &StepCall<'_>,
        _: &mut Effects,
    ) -> Result<Value, durable_interp::StepError> {
        self.attempts.push((
            call.name.to_string(),
            call.attempt,
            call.state.cloned(),
            call.now_ms,
        ));
        if let Some(s) = call.state {
            return Ok(json!(s.as_i64().unwrap_or(0) + 1));
        }
        if call.name == "submit" && call.attempt <= self.fails {
            return Err(format!("attempt {} failed", call.attempt).into());
        }
        Ok(json!("ok"))
    }
}

fn retry_up_to(max: u32) -> impl Fn(&durable_interp::StepError, u32) -> Decision {
    move |_, n| {
        if n >= max {
            Decision::Stop
        } else {
            Decision::Again {
                delay_seconds: 5 << (n - 1),
            }
        }
    }
}

#[test]
fn a_retried_step_suspends_between_attempts_and_replays_its_final_result() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let r = ctx.step_with_retry("submit", &json!(null), &retry_up_to(6))?;
            let again = ctx.step("after", &json!(null))?;
            Ok(Ok(json!([r.map_err(|e| e.0).unwrap(), again.unwrap()])))
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    let mut h = Flaky {
        fails: 2,
        ..Flaky::default()
    };
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.status, ExecutionStatus::Succeeded);
    assert_eq!(x.result, Some(json!(["ok", "ok"])));
    // Three attempts of one operation, 5 s then 10 s apart, each in its own invocation.
    let submits: Vec<_> = h.attempts.iter().filter(|a| a.0 == "submit").collect();
    assert_eq!(
        submits.iter().map(|a| (a.1, a.3 - T0)).collect::<Vec<_>>(),
        [(1, 0), (2, 5_000), (3, 15_000)]
    );
    assert_eq!(x.ops.len(), 2, "retries are attempts of one operation");
    assert_eq!(x.ops[0].attempt, 3);
    assert_eq!(x.operations_billed, 2);
    assert_eq!(x.invocations, 3);
    let failed = x
        .history
        .iter()
        .filter(|ev| ev.event_type == event::STEP_FAILED)
        .count();
    assert_eq!(
        failed, 2,
        "each retried attempt is a StepFailed with its retry"
    );
}

#[test]
fn a_retried_step_fails_after_its_last_attempt_and_the_replay_keeps_the_failure() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let r = ctx.step_with_retry("submit", &json!(null), &retry_up_to(3))?;
            ctx.wait("pause", 1)?;
            Ok(Ok(json!(r.map_err(|e| e.0).unwrap_err())))
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    let mut h = Flaky {
        fails: 99,
        ..Flaky::default()
    };
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.result, Some(json!("attempt 3 failed")));
    assert_eq!(
        h.attempts.len(),
        3,
        "the replay after the wait runs nothing again"
    );
}

#[test]
fn a_condition_carries_its_state_between_checks_and_completes_when_the_strategy_says() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let ladder = [5, 8, 11];
            let out = ctx.wait_for_condition("poll", &json!(null), json!(0), &|s, n| {
                if s.as_i64() == Some(4) {
                    Decision::Stop
                } else {
                    Decision::Again {
                        delay_seconds: ladder[(n - 1) as usize],
                    }
                }
            })?;
            let ConditionOutcome::Met(v) = out else {
                return Ok(Err(Failed {
                    error: "x".into(),
                    cause: format!("{out:?}"),
                }));
            };
            ctx.step("after", &json!(null))?.unwrap();
            Ok(Ok(v))
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    let mut h = Flaky::default();
    while e.step_timer(&mut h).is_some() {}
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.result, Some(json!(4)));
    let checks: Vec<_> = h
        .attempts
        .iter()
        .filter(|a| a.0 == "poll")
        .map(|a| (a.1, a.2.clone(), a.3 - T0))
        .collect();
    assert_eq!(
        checks,
        [
            (1, Some(json!(0)), 0),
            (2, Some(json!(1)), 5_000),
            (3, Some(json!(2)), 13_000),
            (4, Some(json!(3)), 24_000)
        ]
    );
    assert_eq!(x.operations_billed, 2);
}

#[test]
fn a_condition_that_gives_up_or_whose_check_fails_ends_without_another_check() {
    for exhaust in [true, false] {
        let mut e = Engine::new(T0);
        let f = e.publish_version(
            "f",
            program(move |ctx, _| {
                let out = ctx.wait_for_condition("poll", &json!(null), json!(0), &|_, n| {
                    if exhaust && n >= 2 {
                        Decision::Exhausted {
                            reason: "2 checks".into(),
                        }
                    } else {
                        Decision::Again { delay_seconds: 1 }
                    }
                })?;
                ctx.wait("pause", 1)?;
                Ok(Ok(json!(format!("{out:?}"))))
            }),
        );
        let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
        let mut h = Flaky::default();
        if !exhaust {
            // A check that fails: a handler that errors on a state.
            struct Broken;
            impl StepHandler for Broken {
                fn step(
                    &mut self,
                    _: &StepCall<'_>,
                    _: &mut Effects,
                ) -> Result<Value, durable_interp::StepError> {
                    Err("gateway unreachable".into())
                }
            }
            while e.step_timer(&mut Broken).is_some() {}
            let x = e.execution(&arn).unwrap();
            assert_eq!(
                x.result,
                Some(json!("CheckFailed(\"gateway unreachable\")"))
            );
            assert_eq!(x.ops[0].attempt, 1, "a failed check is not retried");
            continue;
        }
        while e.step_timer(&mut h).is_some() {}
        let x = e.execution(&arn).unwrap();
        assert_eq!(
            x.result,
            Some(json!("Exhausted { reason: \"2 checks\" }")),
            "the replay after the wait tells exhaustion from a failed check"
        );
        assert_eq!(h.attempts.len(), 2);
    }
}

/// A submitter that fails its first attempts, recording the callback id each attempt gets.
#[derive(Default)]
struct FlakySubmitter {
    ids: Vec<(String, i64)>,
}

impl StepHandler for FlakySubmitter {
    fn step(
        &mut self,
        call: &StepCall<'_>,
        _: &mut Effects,
    ) -> Result<Value, durable_interp::StepError> {
        let id = call.callback_id.unwrap_or_default().to_owned();
        self.ids.push((id, call.now_ms));
        if call.attempt < 3 {
            return Err(format!("registration {} throttled", call.attempt).into());
        }
        Ok(json!(null))
    }
}

#[test]
fn a_retried_submitter_hands_out_the_same_callback_id_until_it_succeeds() {
    let mut e = Engine::new(T0);
    let f = e.publish_version(
        "f",
        program(|ctx, _| {
            let out = ctx.wait_for_callback_retrying("park", 600, &json!(null), &|_, n| {
                if n >= 5 {
                    Decision::Stop
                } else {
                    Decision::Again { delay_seconds: 5 }
                }
            })?;
            Ok(Ok(json!(format!("{out:?}"))))
        }),
    );
    let arn = e.start_execution(&f, "x", json!({})).unwrap().arn;
    let mut h = FlakySubmitter::default();
    e.run_until_idle(&mut h);
    e.advance_to(T0 + 11_000, &mut h);
    assert_eq!(
        h.ids
            .iter()
            .map(|(id, at)| (id.as_str(), at - T0))
            .collect::<Vec<_>>(),
        [
            ("callback-000001", 0),
            ("callback-000001", 5_000),
            ("callback-000001", 10_000)
        ]
    );
    e.send_callback_success("callback-000001", json!("woken"))
        .unwrap();
    e.run_until_idle(&mut h);
    let x = e.execution(&arn).unwrap();
    assert_eq!(x.result, Some(json!("Succeeded(String(\"woken\"))")));
    assert_eq!(
        x.operations_billed, 3,
        "retries are attempts of the submitter"
    );
}
