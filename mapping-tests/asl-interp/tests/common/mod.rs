#![allow(dead_code)]

use asl_interp::*;
use serde_json::Value;

/// 2026-01-01T00:00:00Z
pub const T0: i64 = 1_767_225_600_000;

pub fn machine(def: Value) -> asl_model::StateMachine {
    asl_model::from_value(def).expect("valid test definition")
}

/// Registers `def` as machine `m` and starts execution `x` with `input`.
pub fn start(engine: &mut Engine, def: Value, input: Value) -> String {
    let arn = engine.create_state_machine("m", machine(def)).unwrap();
    engine
        .start_execution(&arn, "x", input)
        .unwrap()
        .execution_arn
}

/// Runs a machine with no external tasks to quiescence.
pub fn run(def: Value, input: Value) -> (Engine, String) {
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, input);
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    (engine, arn)
}

pub fn types(engine: &Engine, arn: &str) -> Vec<&'static str> {
    engine.history(arn).iter().map(|e| e.event_type).collect()
}

pub fn last_event(engine: &Engine, arn: &str) -> HistoryEvent {
    engine.history(arn).last().cloned().expect("history")
}

/// Output of a machine that must succeed.
pub fn output(def: Value, input: Value) -> Value {
    let (engine, arn) = run(def, input);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(
        d.status,
        ExecutionStatus::Succeeded,
        "{:?}",
        last_event(&engine, &arn)
    );
    d.output.unwrap()
}

/// (Error, Cause) of a machine that must fail.
pub fn failure(def: Value, input: Value) -> (String, String) {
    let (engine, arn) = run(def, input);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::Failed, "{:?}", d.output);
    (d.error.unwrap(), d.cause.unwrap())
}

/// A one-state Pass machine with the given Parameters.
pub fn pass_params(params: Value) -> Value {
    serde_json::json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": params, "End": true}}})
}
