//! Empirical check of the history proof: a small interpreter runs randomly edited counted
//! loops with adversarial task results and branch choices, counting the events AWS would
//! write. Whenever the validator proves a bound, no run may exceed it.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tpf_sfn_compiler::sfn::validate::{validate_bytes, Profile, ValidateOptions};

fn segments(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix('$')?;
    if rest.is_empty() {
        return Some(vec![]);
    }
    Some(
        rest.strip_prefix('.')?
            .split('.')
            .map(str::to_string)
            .collect(),
    )
}

fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path)?
        .iter()
        .try_fold(v, |cur, s| cur.get(s.as_str()))
}

fn set(root: &mut Value, path: &str, value: Value) -> Result<(), ()> {
    let segs = segments(path).ok_or(())?;
    let Some((last, parents)) = segs.split_last() else {
        *root = value;
        return Ok(());
    };
    let mut cur = root;
    for s in parents {
        let obj = cur.as_object_mut().ok_or(())?;
        cur = obj.entry(s.clone()).or_insert_with(|| json!({}));
    }
    cur.as_object_mut().ok_or(())?.insert(last.clone(), value);
    Ok(())
}

/// `$.x` or `States.MathAdd($.x, n)`; anything else fails the execution.
fn eval_dynamic(input: &Value, expr: &str) -> Result<Value, ()> {
    if let Some(args) = expr
        .strip_prefix("States.MathAdd(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let (p, n) = args.split_once(',').ok_or(())?;
        let base = get(input, p.trim()).and_then(Value::as_f64).ok_or(())?;
        let n: f64 = n.trim().parse().map_err(|_| ())?;
        return Ok(json!(base + n));
    }
    get(input, expr).cloned().ok_or(())
}

fn template(input: &Value, t: &Value) -> Result<Value, ()> {
    match t {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                match (k.strip_suffix(".$"), v) {
                    (Some(key), Value::String(expr)) => {
                        out.insert(key.to_string(), eval_dynamic(input, expr)?);
                    }
                    _ => {
                        out.insert(k.clone(), template(input, v)?);
                    }
                }
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn apply_paths(state: &Value, raw: Value, result: Value) -> Result<Value, ()> {
    let mut out = raw;
    match state.get("ResultPath") {
        None => out = result,
        Some(Value::Null) => {}
        Some(Value::String(p)) => set(&mut out, p, result)?,
        Some(_) => return Err(()),
    }
    match state.get("OutputPath") {
        None => Ok(out),
        Some(Value::Null) => Ok(json!({})),
        Some(Value::String(p)) => get(&out, p).cloned().ok_or(()),
        Some(_) => Err(()),
    }
}

fn rule_matches(input: &Value, rule: &Value) -> Result<bool, ()> {
    if let Some(and) = rule.get("And").and_then(Value::as_array) {
        for r in and {
            if !rule_matches(input, r)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    let var = rule.get("Variable").and_then(Value::as_str).ok_or(())?;
    let v = get(input, var);
    if let Some(want) = rule.get("IsPresent") {
        return Ok(v.is_some() == (want == &json!(true)));
    }
    let v = v.ok_or(())?; // States.Runtime: the execution fails.
    if let Some(n) = rule.get("NumericGreaterThanEquals").and_then(Value::as_f64) {
        return Ok(v.as_f64().ok_or(())? >= n);
    }
    if let Some(b) = rule.get("BooleanEquals") {
        return Ok(v == b);
    }
    if let Some(s) = rule.get("StringEquals") {
        return Ok(v == s);
    }
    Err(())
}

/// The worst result a task can return: whatever, written at its ResultPath, leaves the
/// input as it was except for a counter reset to 0.
fn adversarial(raw: &Value, result_path: Option<&Value>) -> Value {
    let mut whole = raw.clone();
    let _ = set(&mut whole, "$.driver.iteration", json!(0));
    match result_path {
        None => whole,
        Some(Value::String(p)) => get(&whole, p).cloned().unwrap_or(json!({})),
        Some(_) => json!({}),
    }
}

/// Events of one execution; `choices` decides task outcomes, retries and results.
fn run(def: &Value, input: Value, choices: &[u8], cap: u64) -> u64 {
    let mut pick = choices.iter().copied().cycle();
    let mut next = || u64::from(pick.next().unwrap_or(0));
    // Biased towards "not done yet" so runs go round the loop as often as they can.
    let results = [
        json!({"Payload": {"done": false}}),
        json!({"Payload": {"done": false}}),
        json!({"Payload": {"done": false}}),
        json!({"Payload": {"done": false}, "driver": {"iteration": 0}}),
        json!({"Payload": {"done": true}}),
        json!({}),
        json!({"driver": {"iteration": 0}}),
        json!(0),
        // Results that reset the counter when written over it, while keeping the loop going.
        json!({"iteration": 0, "Payload": {"done": false}}),
        json!({"result": {"Payload": {"done": false}}, "driver": {"iteration": 0}}),
    ];
    let mut events = 2;
    let mut data = input;
    let Some(mut name) = def["StartAt"].as_str().map(str::to_string) else {
        return events;
    };
    while events < cap {
        let state = &def["States"][name.as_str()];
        let raw = data.clone();
        let outcome: Result<(Value, Option<String>), ()> = match state["Type"].as_str() {
            Some("Pass") => {
                events += 2;
                let result = if let Some(r) = state.get("Result") {
                    Ok(r.clone())
                } else if let Some(p) = state.get("Parameters") {
                    let filtered = match state.get("InputPath") {
                        Some(Value::String(ip)) => get(&raw, ip).cloned().ok_or(()),
                        _ => Ok(raw.clone()),
                    };
                    filtered.and_then(|f| template(&f, p))
                } else {
                    Ok(raw.clone())
                };
                result
                    .and_then(|r| apply_paths(state, raw, r))
                    .map(|d| (d, state["Next"].as_str().map(str::to_string)))
            }
            Some("Task") => {
                events += 5;
                let attempts: u64 = state["Retry"]
                    .as_array()
                    .map(|rs| {
                        rs.iter()
                            .map(|r| r["MaxAttempts"].as_u64().unwrap_or(3))
                            .sum()
                    })
                    .unwrap_or(0);
                let retries = next() % (attempts + 1);
                events += 3 * retries;
                if next() % 8 == 0 {
                    // Failed after the retries: the first catcher (they all catch States.ALL here).
                    match state["Catch"].get(0) {
                        Some(c) => {
                            let mut d = raw;
                            let err = json!({"Error": "X", "Cause": "y"});
                            let ok = match c.get("ResultPath") {
                                None => {
                                    d = err;
                                    Ok(())
                                }
                                Some(Value::Null) => Ok(()),
                                Some(Value::String(p)) => set(&mut d, p, err),
                                Some(_) => Err(()),
                            };
                            ok.map(|_| (d, c["Next"].as_str().map(str::to_string)))
                        }
                        None => Err(()),
                    }
                } else {
                    let r = if next() % 2 == 0 {
                        adversarial(&raw, state.get("ResultPath"))
                    } else {
                        results[(next() as usize) % results.len()].clone()
                    };
                    apply_paths(state, raw, r)
                        .map(|d| (d, state["Next"].as_str().map(str::to_string)))
                }
            }
            Some("Choice") => {
                events += 2;
                let mut target = state
                    .get("Default")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let mut failed = false;
                for rule in state["Choices"].as_array().into_iter().flatten() {
                    match rule_matches(&raw, rule) {
                        Ok(true) => {
                            target = rule["Next"].as_str().map(str::to_string);
                            break;
                        }
                        Ok(false) => {}
                        Err(()) => {
                            failed = true;
                            break;
                        }
                    }
                }
                if failed || target.is_none() {
                    Err(())
                } else {
                    Ok((raw, target))
                }
            }
            Some("Wait") => {
                events += 2;
                Ok((raw, state["Next"].as_str().map(str::to_string)))
            }
            Some("Succeed") => {
                events += 2;
                Err(())
            }
            Some("Fail") => {
                events += 1;
                Err(())
            }
            _ => Err(()),
        };
        match outcome {
            Ok((d, Some(n))) if state.get("End") != Some(&json!(true)) => {
                data = d;
                name = n;
            }
            _ => return events,
        }
    }
    events
}

const STATES: &[&str] = &[
    "Init",
    "Check",
    "Work",
    "Poll",
    "Sleep",
    "Increment",
    "Handoff",
    "Done",
    "Failed",
];

fn edit() -> impl Strategy<Value = (String, String, Value)> {
    let state = prop::sample::select(STATES).prop_map(str::to_string);
    let target = prop::sample::select(STATES).prop_map(|s| json!(s));
    prop_oneof![
        (state.clone(), target).prop_map(|(s, t)| (s, "Next".to_string(), t)),
        (
            state.clone(),
            prop::sample::select(vec![
                json!("$.driver"),
                json!("$"),
                json!(null),
                json!("$.x"),
                json!("$.driver.iteration")
            ])
        )
            .prop_map(|(s, v)| (s, "ResultPath".to_string(), v)),
        (
            state.clone(),
            prop::sample::select(vec![json!("$"), json!("$.driver"), json!(null)])
        )
            .prop_map(|(s, v)| (s, "OutputPath".to_string(), v)),
        (
            state.clone(),
            prop::sample::select(vec![json!("$"), json!("$.driver")])
        )
            .prop_map(|(s, v)| (s, "InputPath".to_string(), v)),
        (
            state,
            prop::sample::select(vec![
                json!({"iteration": 0}),
                json!({"iteration": -3}),
                json!({"iteration.$": "$.driver.iteration"}),
                json!({"iteration.$": "States.MathAdd($.driver.iteration, 1)"}),
                json!({"iteration.$": "States.MathAdd($.driver.iteration, 2)"}),
            ])
        )
            .prop_map(|(s, v)| (s, "Parameters".to_string(), v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn proven_bounds_hold(
        edits in prop::collection::vec(edit(), 0..4),
        limit in 0u64..6,
        start in -3i64..3,
        runs in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..256), 16),
    ) {
        let path = format!("{}/tests/fixtures/asl/history_counted_loop.json", env!("CARGO_MANIFEST_DIR"));
        let mut def: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        def["States"]["Check"]["Choices"][0]["NumericGreaterThanEquals"] = json!(limit);
        for (state, field, value) in edits {
            if let Some(obj) = def["States"][state.as_str()].as_object_mut() {
                if obj.get("Type") != Some(&json!("Choice")) {
                    obj.insert(field, value);
                }
            }
        }
        let opts = ValidateOptions { profile: Profile::TpfDriver, ..ValidateOptions::default() };
        let report = validate_bytes("x.json", def.to_string().as_bytes(), &opts);
        if let Some(max) = report.history.max_events {
            for choices in &runs {
                let input = json!({"driver": {"iteration": start}, "result": {"Payload": {"done": false}}});
                let events = run(&def, input, choices, max.saturating_mul(4).max(10_000));
                prop_assert!(events <= max, "{} events > proven {}\n{}", events, max, serde_json::to_string_pretty(&def).unwrap());
            }
        }
    }
}
