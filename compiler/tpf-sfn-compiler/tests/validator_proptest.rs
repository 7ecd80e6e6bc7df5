//! The validator never panics: not on arbitrary bytes, not on arbitrary JSON, and not on
//! random definitions shaped like ASL (where the deeper rules and the history proof run).

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_compiler::sfn::validate::{
    analyze_history, validate, validate_bytes, Profile, ValidateOptions,
};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[A-Za-z.$]{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

const NAMES: &[&str] = &["A", "B", "C", "D", "E"];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(NAMES).prop_map(str::to_string),
        "[a-z~/]{0,4}"
    ]
}

/// Strings that stress the path and intrinsic parsers.
fn tricky() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "$",
            "$.",
            "$$",
            "$.a[",
            "$..",
            "$x",
            "$.a['b\\'",
            "States.",
            "States.Format(",
            "States.MathAdd($.n, 1)",
            "States.Format('\\",
            "States.Array(States.Array(States.Array()))",
            "States.MathAdd($.n,",
            "'",
            "$.a[?(@.b)]",
            "States.Format('{}', $.a[0]",
            "$[",
            "$]",
            "$.a)",
            "$$.Map.Item.Value",
        ])
        .prop_map(str::to_string),
        "[$.\\[\\]()',a-zS ]{0,16}",
    ]
}

fn rule(depth: u32) -> BoxedStrategy<Value> {
    let leaf = (
        tricky(),
        prop::sample::select(vec![
            "NumericGreaterThanEquals",
            "IsPresent",
            "StringEquals",
            "Bogus",
        ]),
        any_json(),
        prop::option::of(name()),
    )
        .prop_map(|(v, op, operand, next)| {
            let mut r = json!({"Variable": v, op: operand});
            if let Some(n) = next {
                r["Next"] = json!(n);
            }
            r
        });
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        leaf,
        (
            prop::collection::vec(rule(depth - 1), 0..3),
            prop::option::of(name())
        )
            .prop_map(|(rules, next)| json!({"And": rules, "Next": next})),
        rule(depth - 1).prop_map(|r| json!({"Not": r})),
    ]
    .boxed()
}

fn state(depth: u32) -> BoxedStrategy<Value> {
    let retry = prop::collection::vec(
        (prop::collection::vec(prop::sample::select(vec!["States.ALL", "States.Timeout", "X", "States.Nope"]), 0..3), 0u64..5, prop::option::of(0.0f64..3.0)),
        0..3,
    )
    .prop_map(|rs| {
        Value::Array(rs.into_iter().map(|(e, n, b)| json!({"ErrorEquals": e, "MaxAttempts": n, "BackoffRate": b.unwrap_or(2.0)})).collect())
    });
    let catch = prop::collection::vec(
        (
            prop::collection::vec(prop::sample::select(vec!["States.ALL", "E"]), 0..2),
            name(),
            prop::option::of(tricky()),
        ),
        0..2,
    )
    .prop_map(|cs| {
        Value::Array(
            cs.into_iter()
                .map(|(e, n, rp)| json!({"ErrorEquals": e, "Next": n, "ResultPath": rp}))
                .collect(),
        )
    });
    let flow = || {
        (
            prop::option::of(name()),
            any::<bool>(),
            prop::option::of(tricky()),
            prop::option::of(tricky()),
        )
    };
    let basic = prop_oneof![
        (flow(), retry, catch, tricky(), prop::option::of(0u64..10), prop::option::of(0u64..10), any_json()).prop_map(
            |((next, end, rp, ip), retry, catch, dyn_value, hb, to, extra)| {
                json!({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": next, "End": end, "ResultPath": rp,
                       "InputPath": ip, "Retry": retry, "Catch": catch, "HeartbeatSeconds": hb, "TimeoutSeconds": to,
                       "Parameters": {"a.$": dyn_value, "b": extra}})
            }
        ),
        (flow(), tricky(), any::<u64>()).prop_map(|((next, end, rp, _), counter, n)| {
            json!({"Type": "Pass", "Next": next, "End": end, "ResultPath": rp,
                   "Parameters": {"iteration.$": format!("States.MathAdd({counter}, 1)"), "zero": 0, "n": n}})
        }),
        (prop::collection::vec(rule(2), 0..3), prop::option::of(name())).prop_map(|(rules, d)| json!({"Type": "Choice", "Choices": rules, "Default": d})),
        (flow(), prop::option::of(0u64..5), prop::option::of(tricky())).prop_map(|((next, end, ..), s, sp)| json!({"Type": "Wait", "Next": next, "End": end, "Seconds": s, "SecondsPath": sp})),
        Just(json!({"Type": "Succeed"})),
        prop::option::of(tricky()).prop_map(|cp| json!({"Type": "Fail", "Error": "E", "CausePath": cp})),
    ];
    let strip_nulls = |mut v: Value| {
        if let Value::Object(m) = &mut v {
            m.retain(|_, x| !x.is_null() && x != &Value::Bool(false));
        }
        v
    };
    if depth == 0 {
        return basic.prop_map(strip_nulls).boxed();
    }
    prop_oneof![
        3 => basic.prop_map(strip_nulls),
        1 => (machine(depth - 1), prop::option::of(name())).prop_map(move |(sub, next)| strip_nulls(
            json!({"Type": "Map", "ItemProcessor": sub, "Next": next, "End": next.is_none()}))),
        1 => (prop::collection::vec(machine(depth - 1), 0..3), prop::option::of(name())).prop_map(move |(subs, next)| strip_nulls(
            json!({"Type": "Parallel", "Branches": subs, "Next": next, "End": next.is_none()}))),
    ]
    .boxed()
}

fn machine(depth: u32) -> BoxedStrategy<Value> {
    (name(), prop::collection::vec((name(), state(depth)), 0..6))
        .prop_map(|(start, states)| json!({"StartAt": start, "States": states.into_iter().collect::<Map<_, _>>()}))
        .boxed()
}

fn opts(bound: bool) -> ValidateOptions {
    ValidateOptions {
        profile: Profile::TpfDriver,
        map_item_bounds: if bound {
            NAMES.iter().map(|n| (n.to_string(), 3)).collect()
        } else {
            Default::default()
        },
        ..ValidateOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = validate_bytes("x.json", &bytes, &opts(false));
    }

    #[test]
    fn arbitrary_json(v in any_json()) {
        let _ = validate_bytes("x.json", v.to_string().as_bytes(), &opts(false));
    }

    #[test]
    fn asl_shaped(v in machine(2), bound in any::<bool>()) {
        let text = v.to_string();
        let report = validate_bytes("x.json", text.as_bytes(), &opts(bound));
        for d in &report.diagnostics {
            prop_assert!(!d.hint.is_empty(), "{}", d);
        }
        if let Ok(m) = asl::parse("x.json", text.as_bytes()) {
            let h = analyze_history(&m, &opts(bound));
            prop_assert_eq!(&h, &validate("x.json", &m, &opts(bound)).history);
            if let (Some(max), Some(g), Some(per)) = (h.max_events, &h.loop_guard, h.per_iteration) {
                prop_assert_eq!(max, h.fixed.saturating_add(g.limit.saturating_add(1).saturating_mul(per)));
            }
        }
    }
}

const LOOP_STATES: &[&str] = &[
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

/// One random edit of the counted-loop fixture: rewire a transition, or change what a state
/// writes. Exercises the loop proof far more than random machines do.
fn loop_edit() -> impl Strategy<Value = (String, String, Value)> {
    let state = prop::sample::select(LOOP_STATES).prop_map(str::to_string);
    let target = prop::sample::select(LOOP_STATES).prop_map(|s| json!(s));
    prop_oneof![
        (state.clone(), target.clone()).prop_map(|(s, t)| (s, "Next".to_string(), t)),
        (state.clone(), target).prop_map(|(s, t)| (s, "Default".to_string(), t)),
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
            state,
            prop::sample::select(vec![json!("$"), json!("$.driver"), json!(null)])
        )
            .prop_map(|(s, v)| (s, "OutputPath".to_string(), v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn counted_loop_edits(edits in prop::collection::vec(loop_edit(), 1..4), limit in 0u64..50) {
        let path = format!("{}/tests/fixtures/asl/history_counted_loop.json", env!("CARGO_MANIFEST_DIR"));
        let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        doc["States"]["Check"]["Choices"][0]["NumericGreaterThanEquals"] = json!(limit);
        for (state, field, value) in edits {
            if let Some(obj) = doc["States"][state.as_str()].as_object_mut() {
                obj.insert(field, value);
            }
        }
        let report = validate_bytes("x.json", doc.to_string().as_bytes(), &opts(false));
        let h = &report.history;
        if let (Some(max), Some(g), Some(per)) = (h.max_events, &h.loop_guard, h.per_iteration) {
            prop_assert_eq!(max, h.fixed + (g.limit + 1) * per);
            prop_assert_eq!(g.limit, limit);
        }
    }
}
