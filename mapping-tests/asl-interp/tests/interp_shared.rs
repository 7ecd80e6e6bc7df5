//! Definitions registered through `create_state_machine_shared` (compiled once per thread and
//! shared by every engine) behave exactly as ones registered with `create_state_machine`.

use crate::common;

use asl_interp::*;
use common::*;
use serde_json::json;

fn echo(result: &str) -> serde_json::Value {
    json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": result, "End": true}}})
}

fn run_shared(def: &asl_model::StateMachine) -> serde_json::Value {
    let mut engine = Engine::new(T0, 1);
    let sm = engine.create_state_machine_shared("m", def).unwrap();
    let x = engine.start_execution(&sm, "x", json!({})).unwrap();
    engine.advance_until_idle_or(i64::MAX, &mut NoTasks);
    engine.output(&x.execution_arn).cloned().unwrap()
}

#[test]
fn a_shared_definition_runs_in_every_engine_and_a_changed_one_is_not_served_stale() {
    let first = machine(echo("first"));
    assert_eq!(run_shared(&first), json!("first"));
    assert_eq!(run_shared(&first), json!("first"));
    // Same name, same shape, another result: an equal-looking cache entry must not answer.
    let second = machine(echo("second"));
    assert_eq!(run_shared(&second), json!("second"));
    assert_eq!(run_shared(&first), json!("first"));
}

#[test]
fn shared_registration_answers_like_the_plain_one() {
    let def = machine(echo("a"));
    let mut plain = Engine::new(T0, 1);
    let mut shared = Engine::new(T0, 1);
    let a = plain.create_state_machine("m", def.clone()).unwrap();
    let b = shared.create_state_machine_shared("m", &def).unwrap();
    assert_eq!(a, b);
    // Idempotent for the same definition, refused for another, under either call.
    assert_eq!(shared.create_state_machine_shared("m", &def).unwrap(), b);
    assert_eq!(shared.create_state_machine("m", def.clone()).unwrap(), b);
    let other = machine(echo("b"));
    let refused = |r: Result<String, SfnError>| r.unwrap_err().to_string();
    assert_eq!(
        refused(shared.create_state_machine_shared("m", &other)),
        refused(plain.create_state_machine("m", other.clone()))
    );
    // The name is checked before the definition, as by the plain call.
    let bad =
        machine(json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "Next": "Nowhere"}}}));
    assert_eq!(
        refused(shared.create_state_machine_shared("bad name", &bad)),
        refused(plain.create_state_machine("bad name", bad.clone()))
    );
    assert_eq!(
        refused(shared.create_state_machine_shared("bad", &bad)),
        refused(plain.create_state_machine("bad", bad.clone()))
    );
}

#[test]
fn context_leaves_read_directly_equal_the_context_object() {
    // Each `$$` leaf the engine answers without building the context object, next to the same
    // leaf read through a path the fast path does not know (bracket notation).
    let leaves = [
        ("Execution", "Id"),
        ("Execution", "Name"),
        ("StateMachine", "Id"),
        ("StateMachine", "Name"),
        ("State", "Name"),
    ];
    let mut params = serde_json::Map::new();
    for (a, b) in leaves {
        params.insert(format!("{a}{b}.$"), json!(format!("$$.{a}.{b}")));
        params.insert(format!("{a}{b}Slow.$"), json!(format!("$$['{a}']['{b}']")));
    }
    let out = output(pass_params(serde_json::Value::Object(params)), json!({}));
    for (a, b) in leaves {
        assert_eq!(
            out[format!("{a}{b}")],
            out[format!("{a}{b}Slow")],
            "{a}.{b}"
        );
        assert!(out[format!("{a}{b}")].is_string(), "{a}.{b}: {out}");
    }
    let def = json!({"StartAt": "M", "States": {"M": {
        "Type": "Map", "ItemsPath": "$.items",
        "ItemSelector": {"v.$": "$$.Map.Item.Value", "vs.$": "$$['Map']['Item']['Value']",
                         "i.$": "$$.Map.Item.Index", "is.$": "$$['Map']['Item']['Index']"},
        "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
        "End": true}}});
    let out = output(def, json!({"items": [{"a": 1}, "b"]}));
    assert_eq!(
        out,
        json!([{"v": {"a": 1}, "vs": {"a": 1}, "i": 0, "is": 0}, {"v": "b", "vs": "b", "i": 1, "is": 1}])
    );
    // No task token outside a Task: the leaf selects nothing, like the context object's.
    let (error, _) = failure(pass_params(json!({"t.$": "$$.Task.Token"})), json!({}));
    let (error_slow, _) = failure(
        pass_params(json!({"t.$": "$$['Task']['Token']"})),
        json!({}),
    );
    assert_eq!(error, error_slow);
}

#[test]
fn a_pinned_definition_runs_as_registered_and_its_address_is_forgotten_when_unpinned() {
    let mut def = machine(echo("first"));
    {
        let _pinned = pin(&def);
        assert_eq!(run_shared(&def), json!("first"));
        assert_eq!(run_shared(&def), json!("first"));
        // Another definition, not pinned, is not mistaken for the pinned one.
        assert_eq!(run_shared(&machine(echo("other"))), json!("other"));
    }
    // The same place now holds another definition: with the guard gone its address must not
    // answer the old program.
    def = machine(echo("second"));
    assert_eq!(run_shared(&def), json!("second"));
}
