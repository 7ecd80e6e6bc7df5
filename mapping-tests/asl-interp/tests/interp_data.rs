//! Data flow: Parameters, context object, intrinsics, ResultSelector/ResultPath/OutputPath,
//! Choice operators.

use crate::common;

use asl_interp::*;
use common::*;
use serde_json::json;

fn intrinsic(expr: &str, input: serde_json::Value) -> serde_json::Value {
    let out = output(pass_params(json!({"r.$": expr})), input);
    out["r"].clone()
}

fn intrinsic_err(expr: &str, input: serde_json::Value) -> String {
    failure(pass_params(json!({"r.$": expr})), input).0
}

#[test]
fn pass_result_and_paths() {
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": "$.a",
        "Result": {"x": 1}, "ResultPath": "$.res", "OutputPath": "$.res", "End": true}}});
    assert_eq!(output(def, json!({"a": {"k": 2}})), json!({"x": 1}));
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "ResultPath": null, "Result": 5, "End": true}}});
    assert_eq!(output(def, json!({"keep": true})), json!({"keep": true}));
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "ResultPath": "$.deep.er.x", "Result": 5, "End": true}}});
    assert_eq!(
        output(def, json!({"a": 1})),
        json!({"a": 1, "deep": {"er": {"x": 5}}})
    );
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": null, "OutputPath": null, "End": true}}});
    assert_eq!(output(def, json!({"a": 1})), json!({}));
}

#[test]
fn parameters_nested_and_context() {
    let out = output(
        pass_params(json!({
            "lit": "x",
            "v.$": "$.a.b",
            "arr": [{"w.$": "$.a"}, 3],
            "nested": {"n.$": "$.list[1]"},
            "all.$": "$.list[*]",
            "ctx": {
                "name.$": "$$.Execution.Name",
                "id.$": "$$.Execution.Id",
                "state.$": "$$.State.Name",
                "sm.$": "$$.StateMachine.Name",
                "start.$": "$$.Execution.StartTime",
                "redrive.$": "$$.Execution.RedriveCount",
                "in.$": "$$.Execution.Input.a.b"
            }
        })),
        json!({"a": {"b": 7}, "list": [1, 2]}),
    );
    assert_eq!(out["lit"], "x");
    assert_eq!(out["v"], 7);
    assert_eq!(out["arr"], json!([{"w": {"b": 7}}, 3]));
    assert_eq!(out["nested"]["n"], 2);
    assert_eq!(out["all"], json!([1, 2]));
    assert_eq!(out["ctx"]["name"], "x");
    assert_eq!(
        out["ctx"]["id"],
        "arn:aws:states:us-east-1:123456789012:execution:m:x"
    );
    assert_eq!(out["ctx"]["state"], "P");
    assert_eq!(out["ctx"]["sm"], "m");
    assert_eq!(out["ctx"]["start"], "2026-01-01T00:00:00.000Z");
    assert_eq!(out["ctx"]["redrive"], 0);
    assert_eq!(out["ctx"]["in"], 7);
}

#[test]
fn retry_count_only_in_states_that_retry() {
    // A Pass state's `$$.State` has no RetryCount on AWS (recorded); a Task's has.
    let out = output(pass_params(json!({"s.$": "$$.State"})), json!({}));
    assert!(out["s"].get("RetryCount").is_none(), "{out}");
    let (e, _) = failure(
        pass_params(json!({"r.$": "$$.State.RetryCount"})),
        json!({}),
    );
    assert_eq!(e, "States.Runtime");
    let def = json!({"StartAt": "T", "States": {"T": {"Type": "Task",
        "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f",
        "Parameters": {"r.$": "$$.State.RetryCount", "tok.$": "$$.Task.Token"}, "End": true}}});
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, json!({}));
    let mut seen = Vec::new();
    let mut handler = |c: &TaskCall<'_>| {
        seen.push(c.input.clone());
        TaskOutcome::Succeeded(json!(1))
    };
    engine.advance_until_idle_or(i64::MAX, &mut handler);
    assert_eq!(engine.status(&arn), Some(ExecutionStatus::Succeeded));
    assert_eq!(seen[0]["r"], 0);
    // Every Task has a `$$.Task.Token`, not only `.waitForTaskToken` ones (recorded).
    assert!(seen[0]["tok"].is_string(), "{:?}", seen[0]);
}

#[test]
fn context_paths_in_input_and_output_path() {
    // AWS accepts `$$` paths in InputPath and OutputPath (recorded).
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": "$$.Execution.Input", "Result": 1, "ResultPath": "$.r", "End": true}}});
    assert_eq!(output(def, json!({"a": 1})), json!({"a": 1, "r": 1}));
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": "$$", "OutputPath": "$.StateMachine.Name", "End": true}}});
    assert_eq!(output(def, json!({})), json!("m"));
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "OutputPath": "$$.Execution.Input", "Result": 5, "End": true}}});
    assert_eq!(output(def, json!({"a": 2})), json!({"a": 2}));
    // A miss names the path as written, `$$` included.
    let (_, c) = failure(
        pass_params(json!({"v.$": "$$.Execution.Input.nope"})),
        json!({}),
    );
    assert!(c.contains("'$$.Execution.Input.nope'"), "{c}");
}

#[test]
fn bracket_paths_keep_backslashes_that_escape_nothing() {
    // `$['Test\""Name"']` selects the key `Test\""Name"` (recorded).
    let key = "Test\\\"\"Name\"";
    let out = output(
        pass_params(json!({"v.$": "$['Test\\\"\"Name\"']"})),
        json!({ key: "found" }),
    );
    assert_eq!(out, json!({"v": "found"}));
    let out = output(
        pass_params(json!({"v.$": "$['it\\'s']"})),
        json!({"it's": 1}),
    );
    assert_eq!(out, json!({"v": 1}));
}

#[test]
fn runtime_error_causes_name_the_state_and_its_entered_event() {
    // AWS's wording (recorded): the state, the id of its ...StateEntered event, then why.
    let def = json!({"StartAt": "A", "States": {
        "A": {"Type": "Pass", "Next": "B"},
        "B": {"Type": "Pass", "OutputPath": "$.no.such", "End": true}}});
    let (e, c) = failure(def, json!({}));
    assert_eq!(e, "States.Runtime");
    assert_eq!(c, "An error occurred while executing the state 'B' (entered at the event id #4). Invalid path '$.no.such' : Missing property in path $['no']");
    let def =
        json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": "$.x", "End": true}}});
    let (_, c) = failure(def, json!({}));
    assert!(
        c.ends_with("Invalid path '$.x' : No results for path: $['x']"),
        "{c}"
    );
    let (_, c) = failure(pass_params(json!({"v.$": "$.nope"})), json!({"k": 1}));
    assert!(c.ends_with("The JSONPath '$.nope' specified for the field 'v.$' could not be found in the input '{\"k\":1}'"), "{c}");
}

#[test]
fn map_max_concurrency_path() {
    let def = |v: serde_json::Value| {
        (
            json!({"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.items",
                "MaxConcurrencyPath": "$.mc",
                "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Pass", "End": true}}},
                "End": true}}}),
            json!({"items": [1, 2], "mc": v}),
        )
    };
    let (d, i) = def(json!(1));
    assert_eq!(output(d, i), json!([1, 2]));
    // Not a number: AWS fails the state (recorded; undocumented).
    for bad in [json!("NoNumber"), json!({})] {
        let (d, i) = def(bad.clone());
        let (e, c) = failure(d, i);
        assert_eq!(e, "States.Runtime");
        assert!(
            c.contains("The MaxConcurrencyPath field refers to value"),
            "{c}"
        );
    }
}

#[test]
fn missing_paths_are_runtime_errors() {
    let (e, c) = failure(pass_params(json!({"v.$": "$.nope"})), json!({}));
    assert_eq!(e, "States.Runtime");
    assert!(c.contains("$.nope"), "{c}");
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": "$.zz", "End": true}}});
    assert_eq!(failure(def, json!({})).0, "States.Runtime");
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "OutputPath": "$.zz", "End": true}}});
    assert_eq!(failure(def, json!({})).0, "States.Runtime");
    let def = json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "ResultPath": "$.a.b", "Result": 1, "End": true}}});
    assert_eq!(
        failure(def, json!({"a": "str"})).0,
        "States.ResultPathMatchFailure"
    );
}

#[test]
fn intrinsic_format_and_json() {
    assert_eq!(
        intrinsic(
            "States.Format('Hello {}, you are {} ({})', $.n, $.age, $.ok)",
            json!({"n": "Ann", "age": 30, "ok": true})
        ),
        json!("Hello Ann, you are 30 (true)")
    );
    assert_eq!(
        intrinsic(r"States.Format('it\'s \{literal\} {}', 'x')", json!({})),
        json!("it's {literal} x")
    );
    assert_eq!(
        intrinsic_err("States.Format('{} {}', 1)", json!({})),
        "States.IntrinsicFailure"
    );
    assert_eq!(
        intrinsic("States.StringToJson($.s)", json!({"s": "{\"a\":[1,2]}"})),
        json!({"a": [1, 2]})
    );
    assert_eq!(
        intrinsic("States.JsonToString($.o)", json!({"o": {"a": 1}})),
        json!("{\"a\":1}")
    );
    assert_eq!(
        intrinsic_err("States.StringToJson('{oops')", json!({})),
        "States.IntrinsicFailure"
    );
    // Blank text is null and "-0" the integer 0 on AWS (recorded).
    assert_eq!(intrinsic("States.StringToJson('')", json!({})), json!(null));
    assert_eq!(
        intrinsic("States.StringToJson(' ')", json!({})),
        json!(null)
    );
    assert_eq!(intrinsic("States.StringToJson('-0')", json!({})), json!(0));
    // Objects and arrays print the way AWS's runtime prints maps and lists (recorded).
    assert_eq!(
        intrinsic(
            "States.Format('a={} b={}', $.o, $.l)",
            json!({"o": {"Arg1": 1, "Arg2": [], "s": "x"}, "l": [1, "y", null]})
        ),
        json!("a={Arg1=1, Arg2=[], s=x} b=[1, y, null]")
    );
    assert_eq!(
        intrinsic(
            "States.Format('{}', States.JsonToString(States.Array(1, 'two', null)))",
            json!({})
        ),
        json!("[1,\"two\",null]")
    );
}

#[test]
fn intrinsic_arrays() {
    assert_eq!(
        intrinsic("States.Array(1, 'a', true, null, $.x)", json!({"x": [0]})),
        json!([1, "a", true, null, [0]])
    );
    assert_eq!(
        intrinsic(
            "States.ArrayPartition($.a, 2)",
            json!({"a": [1, 2, 3, 4, 5]})
        ),
        json!([[1, 2], [3, 4], [5]])
    );
    assert_eq!(
        intrinsic("States.ArrayContains($.a, 3)", json!({"a": [1, 2, 3]})),
        json!(true)
    );
    assert_eq!(
        intrinsic("States.ArrayContains($.a, 9)", json!({"a": [1, 2, 3]})),
        json!(false)
    );
    assert_eq!(
        intrinsic("States.ArrayRange(1, 9, 2)", json!({})),
        json!([1, 3, 5, 7, 9])
    );
    assert_eq!(
        intrinsic("States.ArrayRange(5, 1, -2)", json!({})),
        json!([5, 3, 1])
    );
    assert_eq!(
        intrinsic_err("States.ArrayRange(1, 5000, 1)", json!({})),
        "States.IntrinsicFailure"
    );
    assert_eq!(
        intrinsic("States.ArrayGetItem($.a, 1)", json!({"a": ["x", "y"]})),
        json!("y")
    );
    assert_eq!(
        intrinsic_err("States.ArrayGetItem($.a, 5)", json!({"a": []})),
        "States.IntrinsicFailure"
    );
    assert_eq!(
        intrinsic("States.ArrayLength($.a)", json!({"a": [1, 2, 3]})),
        json!(3)
    );
    assert_eq!(
        intrinsic("States.ArrayUnique($.a)", json!({"a": [1, 2, 1, "a", "a"]})),
        json!([1, 2, "a"])
    );
    assert_eq!(
        intrinsic_err("States.ArrayLength($.a)", json!({"a": 1})),
        "States.IntrinsicFailure"
    );
}

#[test]
fn intrinsic_encoding_hash_math() {
    assert_eq!(
        intrinsic("States.Base64Encode('Data to encode')", json!({})),
        json!("RGF0YSB0byBlbmNvZGU=")
    );
    assert_eq!(
        intrinsic("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", json!({})),
        json!("Data to encode")
    );
    assert_eq!(
        intrinsic("States.Hash('abc', 'MD5')", json!({})),
        json!("900150983cd24fb0d6963f7d28e17f72")
    );
    assert_eq!(
        intrinsic("States.Hash('abc', 'SHA-1')", json!({})),
        json!("a9993e364706816aba3e25717850c26c9cd0d89d")
    );
    assert_eq!(
        intrinsic("States.Hash('abc', 'SHA-256')", json!({})),
        json!("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
    assert_eq!(
        intrinsic("States.Hash('abc', 'SHA-384')", json!({}))
            .as_str()
            .unwrap()
            .len(),
        96
    );
    assert_eq!(
        intrinsic("States.Hash('abc', 'SHA-512')", json!({}))
            .as_str()
            .unwrap()
            .len(),
        128
    );
    assert_eq!(
        intrinsic_err("States.Hash('abc', 'CRC32')", json!({})),
        "States.IntrinsicFailure"
    );
    assert_eq!(
        intrinsic(
            "States.JsonMerge($.a, $.b, false)",
            json!({"a": {"x": 1, "y": {"k": 1}}, "b": {"y": {"z": 2}}})
        ),
        json!({"x": 1, "y": {"z": 2}})
    );
    assert_eq!(
        intrinsic_err("States.JsonMerge($.a, $.a, true)", json!({"a": {}})),
        "States.IntrinsicFailure"
    );
    assert_eq!(
        intrinsic("States.MathAdd($.v, -3)", json!({"v": 10})),
        json!(7)
    );
    // AWS rounds non-integers, halves up (recorded: 1.49 + 1.5 = 3, -1.5 + 0 = -1).
    assert_eq!(intrinsic("States.MathAdd(1.5, 1)", json!({})), json!(3));
    assert_eq!(intrinsic("States.MathAdd(1.49, 1.5)", json!({})), json!(3));
    assert_eq!(intrinsic("States.MathAdd(-1.5, 0)", json!({})), json!(-1));
    assert_eq!(intrinsic("States.MathAdd(-2.5, 0)", json!({})), json!(-2));
    let r = intrinsic("States.MathRandom(12.5, 44.51)", json!({}));
    assert!((13..45).contains(&r.as_i64().unwrap()), "{r}");
    assert_eq!(
        intrinsic(
            "States.StringSplit($.s, '.+,=')",
            json!({"s": "This.is+a,test=string"})
        ),
        json!(["This", "is", "a", "test", "string"])
    );
    let r = intrinsic("States.MathRandom(1, 10)", json!({}));
    assert!((1..10).contains(&r.as_i64().unwrap()));
    // Same seed argument → same value; same engine seed → same value.
    assert_eq!(
        intrinsic("States.MathRandom(0, 1000, 42)", json!({})),
        intrinsic("States.MathRandom(0, 1000, 42)", json!({}))
    );
    assert_eq!(r, intrinsic("States.MathRandom(1, 10)", json!({})));
    let u = intrinsic("States.UUID()", json!({}));
    let u = u.as_str().unwrap();
    assert_eq!(u.len(), 36);
    assert_eq!(&u[14..15], "4");
    assert_eq!(intrinsic("States.UUID()", json!({})), json!(u));
    assert_eq!(
        intrinsic_err("States.Nope()", json!({})),
        "States.IntrinsicFailure"
    );
}

fn task_machine(extra: serde_json::Value) -> serde_json::Value {
    let mut t = json!({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true});
    for (k, v) in extra.as_object().unwrap() {
        t[k] = v.clone();
    }
    json!({"StartAt": "T", "States": {"T": t}})
}

fn run_task(
    def: serde_json::Value,
    input: serde_json::Value,
    result: serde_json::Value,
) -> (Engine, String, Vec<serde_json::Value>) {
    let mut engine = Engine::new(T0, 1);
    let arn = start(&mut engine, def, input);
    let mut seen = Vec::new();
    let mut h = |c: &TaskCall<'_>| {
        seen.push(c.input.clone());
        TaskOutcome::Succeeded(result.clone())
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    (engine, arn, seen)
}

#[test]
fn task_io_processing_order() {
    let def = task_machine(json!({
        "InputPath": "$.req",
        "Parameters": {"FunctionName": "f", "Payload.$": "$"},
        "ResultSelector": {"body.$": "$.Payload.body", "code.$": "$.StatusCode"},
        "ResultPath": "$.res",
        "OutputPath": "$.res"
    }));
    let (engine, arn, seen) = run_task(
        def,
        json!({"req": {"id": 1}, "other": 2}),
        json!({"Payload": {"body": "ok"}, "StatusCode": 200}),
    );
    assert_eq!(
        seen,
        vec![json!({"FunctionName": "f", "Payload": {"id": 1}})]
    );
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"body": "ok", "code": 200}))
    );

    // ResultPath merges into the *raw* state input, not the InputPath-filtered one.
    let def = task_machine(json!({"InputPath": "$.req", "ResultPath": "$.res"}));
    let (engine, arn, _) = run_task(def, json!({"req": 1, "k": 2}), json!("r"));
    assert_eq!(
        engine.output(&arn),
        Some(&json!({"req": 1, "k": 2, "res": "r"}))
    );

    // A missing ResultSelector path is States.Runtime and no catcher sees it.
    let def = task_machine(json!({"ResultSelector": {"x.$": "$.nope"},
        "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "C"}]}));
    let mut def = def;
    def["States"]["C"] = json!({"Type": "Succeed"});
    let (engine, arn, _) = run_task(def, json!({}), json!({}));
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, ExecutionStatus::Failed);
    assert_eq!(d.error.as_deref(), Some("States.Runtime"));
}

#[test]
fn oversized_output_is_data_limit() {
    let big = "x".repeat(270_000);
    let def = task_machine(json!({}));
    let (engine, arn, _) = run_task(def, json!({}), json!(big));
    assert_eq!(
        engine.describe_execution(&arn).unwrap().error.as_deref(),
        Some("States.DataLimitExceeded")
    );
}

fn choose(rule: serde_json::Value, input: serde_json::Value) -> String {
    let mut r = rule;
    r["Next"] = json!("Yes");
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [r], "Default": "No"},
        "Yes": {"Type": "Pass", "Result": "yes", "End": true},
        "No": {"Type": "Pass", "Result": "no", "End": true}}});
    output(def, input).as_str().unwrap().to_string()
}

#[test]
fn choice_operators() {
    let i = json!({"n": 5, "s": "beta", "b": true, "t": "2026-01-02T00:00:00Z", "t2": "2026-01-03T00:00:00Z", "nul": null, "m": 5.0});
    let cases = [
        (json!({"Variable": "$.n", "NumericEquals": 5}), "yes"),
        (json!({"Variable": "$.m", "NumericEquals": 5}), "yes"),
        (json!({"Variable": "$.n", "NumericLessThan": 5}), "no"),
        (
            json!({"Variable": "$.n", "NumericLessThanEquals": 5}),
            "yes",
        ),
        (json!({"Variable": "$.n", "NumericGreaterThan": 4.5}), "yes"),
        (
            json!({"Variable": "$.n", "NumericGreaterThanEquals": 6}),
            "no",
        ),
        (
            json!({"Variable": "$.n", "NumericEqualsPath": "$.m"}),
            "yes",
        ),
        (json!({"Variable": "$.s", "NumericEquals": 5}), "no"),
        (json!({"Variable": "$.s", "StringEquals": "beta"}), "yes"),
        (json!({"Variable": "$.s", "StringLessThan": "gamma"}), "yes"),
        (
            json!({"Variable": "$.s", "StringGreaterThanEquals": "c"}),
            "no",
        ),
        (json!({"Variable": "$.s", "StringMatches": "b*a"}), "yes"),
        (json!({"Variable": "$.s", "StringEqualsPath": "$.s"}), "yes"),
        (json!({"Variable": "$.b", "BooleanEquals": true}), "yes"),
        (
            json!({"Variable": "$.b", "BooleanEqualsPath": "$.b"}),
            "yes",
        ),
        (
            json!({"Variable": "$.t", "TimestampEquals": "2026-01-02T01:00:00+01:00"}),
            "yes",
        ),
        (
            json!({"Variable": "$.t", "TimestampLessThan": "2026-01-02T00:00:01Z"}),
            "yes",
        ),
        (
            json!({"Variable": "$.t", "TimestampGreaterThan": "2026-01-02T00:00:00Z"}),
            "no",
        ),
        (
            json!({"Variable": "$.t", "TimestampLessThanPath": "$.t2"}),
            "yes",
        ),
        (
            json!({"Variable": "$.t", "TimestampGreaterThanEqualsPath": "$.t2"}),
            "no",
        ),
        (
            json!({"Variable": "$.s", "TimestampEquals": "2026-01-02T00:00:00Z"}),
            "no",
        ),
        (json!({"Variable": "$.nul", "IsNull": true}), "yes"),
        (json!({"Variable": "$.n", "IsNumeric": true}), "yes"),
        (json!({"Variable": "$.s", "IsString": false}), "no"),
        (json!({"Variable": "$.b", "IsBoolean": true}), "yes"),
        (json!({"Variable": "$.t", "IsTimestamp": true}), "yes"),
        (json!({"Variable": "$.s", "IsTimestamp": true}), "no"),
        (json!({"Variable": "$.zz", "IsPresent": false}), "yes"),
        (json!({"Variable": "$.n", "IsPresent": true}), "yes"),
        (
            json!({"And": [{"Variable": "$.n", "NumericEquals": 5}, {"Variable": "$.b", "BooleanEquals": true}]}),
            "yes",
        ),
        (
            json!({"And": [{"Variable": "$.n", "NumericEquals": 5}, {"Variable": "$.b", "BooleanEquals": false}]}),
            "no",
        ),
        (
            json!({"Or": [{"Variable": "$.n", "NumericEquals": 1}, {"Variable": "$.s", "StringEquals": "beta"}]}),
            "yes",
        ),
        (
            json!({"Not": {"Variable": "$.n", "NumericEquals": 5}}),
            "no",
        ),
        (
            json!({"Variable": "$$.Execution.Name", "StringEquals": "x"}),
            "yes",
        ),
    ];
    for (rule, want) in cases {
        assert_eq!(choose(rule.clone(), i.clone()), want, "{rule}");
    }
}

#[test]
fn choice_missing_variable_and_no_match() {
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.zz", "NumericEquals": 1, "Next": "D"}], "Default": "D"},
        "D": {"Type": "Succeed"}}});
    assert_eq!(failure(def, json!({})).0, "States.Runtime");
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 1, "Next": "D"}]},
        "D": {"Type": "Succeed"}}});
    assert_eq!(failure(def, json!({"n": 2})).0, "States.NoChoiceMatched");
    // Choice applies InputPath then OutputPath.
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "InputPath": "$.in", "OutputPath": "$.v",
              "Choices": [{"Variable": "$.v", "NumericEquals": 1, "Next": "D"}]},
        "D": {"Type": "Succeed"}}});
    assert_eq!(output(def, json!({"in": {"v": 1}})), json!(1));
}

#[test]
fn fail_state_error_and_cause() {
    let def =
        json!({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "C"}}});
    assert_eq!(failure(def, json!({})), ("E".into(), "C".into()));
    let def = json!({"StartAt": "F", "States": {"F": {"Type": "Fail", "ErrorPath": "$.e",
        "CausePath": "States.Format('bad {}', $.n)"}}});
    assert_eq!(
        failure(def, json!({"e": "Custom", "n": 3})),
        ("Custom".into(), "bad 3".into())
    );
}

#[test]
fn odd_definitions_are_rejected_not_panics() {
    let mut engine = Engine::new(T0, 1);
    let bad = machine(json!({"StartAt": "Nope", "States": {"A": {"Type": "Succeed"}}}));
    assert!(matches!(
        engine.create_state_machine("bad", bad),
        Err(SfnError::InvalidDefinition(_))
    ));
    let bad = machine(json!({"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Z"}}}));
    assert!(engine.create_state_machine("bad2", bad).is_err());
    let bad = machine(json!({"StartAt": "A", "States": {"A": {"Type": "Pass"}}}));
    assert!(engine.create_state_machine("bad3", bad).is_err());
    let bad = machine(
        json!({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "r",
        "TimeoutSeconds": 10, "HeartbeatSeconds": 10, "End": true}}}),
    );
    assert!(matches!(
        engine.create_state_machine("bad4", bad),
        Err(SfnError::InvalidDefinition(_))
    ));
    assert!(matches!(
        engine.create_state_machine(
            "bad name",
            machine(json!({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}))
        ),
        Err(SfnError::InvalidName(_))
    ));
    // Garbage in a Parameters expression is an execution error, not a panic.
    for expr in [
        "States.Format(",
        "$[?(",
        "States.ArrayGetItem($.a, 'x')",
        "nonsense",
        "States.Array(,)",
    ] {
        let (engine, arn) = run(pass_params(json!({"v.$": expr})), json!({"a": [1]}));
        assert_eq!(engine.status(&arn), Some(ExecutionStatus::Failed), "{expr}");
    }
}
