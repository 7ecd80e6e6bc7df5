//! The decisions take whatever a stream or an event bus hands them: any image, any event,
//! without a panic; and a binding they ask for is always the image's own identity.

use crate::host;

use host::*;
use proptest::prelude::*;
use serde_json::Value;
use tpf_sfn_wakeup::reconcile;
use tpf_sfn_wakeup::wake::{self, AfterBind, StreamStep};
use tpf_wire::gateway::binding::attr;
use tpf_wire::records::{interaction_attr, AttrValue, Item};

/// The attribute names either stream's rows carry, so generated images hit every branch.
const NAMES: &[&str] = &[
    attr::RECORD_TYPE,
    attr::TENANT_ID,
    attr::EXECUTION_ID,
    attr::INTERACTION_ID,
    attr::CORRELATION_ID,
    attr::PIPELINE_ID,
    attr::CONTRACT_VERSION,
    attr::RELEASE_VERSION,
    attr::GENERATION,
    attr::PROVIDER_EXECUTION_NAME,
    attr::PROVIDER_EXECUTION_ARN,
    attr::PROVIDER_CALLBACK_ID,
    attr::CREATED_AT_EPOCH_MS,
    attr::EXPIRES_AT_EPOCH_S,
    interaction_attr::STATUS,
];

fn value() -> impl Strategy<Value = AttrValue> {
    prop_oneof![
        prop::sample::select(vec![
            "REGISTRATION",
            "BINDING",
            "COMPLETED",
            "WAITING",
            T,
            E,
            I,
            C,
            " ",
            ""
        ])
        .prop_map(|s| AttrValue::S(s.to_owned())),
        "\\PC{0,8}".prop_map(AttrValue::S),
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            "[-+0-9.eE ]{0,22}".prop_map(|s| s)
        ]
        .prop_map(AttrValue::N),
        Just(AttrValue::Null),
        any::<bool>().prop_map(AttrValue::Bool),
    ]
}

fn image() -> impl Strategy<Value = Item> {
    let any_item = prop::collection::btree_map(
        prop::sample::select(NAMES.to_vec()),
        value(),
        0..NAMES.len(),
    )
    .prop_map(|m| {
        m.into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Item>()
    });
    // A well-formed row of either stream with a few attributes replaced or removed, so both
    // the bind branches and every refusal are reached.
    let edits = prop::collection::vec(
        (
            prop::sample::select(NAMES.to_vec()),
            prop::option::of(value()),
        ),
        0..3,
    );
    let edited = (
        prop_oneof![
            Just(registration(1).to_item()),
            Just(registration(2).to_item()),
            Just(await_image("COMPLETED")),
            Just(await_image("WAITING")),
        ],
        edits,
    )
        .prop_map(|(mut item, edits)| {
            for (name, v) in edits {
                match v {
                    Some(v) => item.insert(name.to_owned(), v),
                    None => item.remove(name),
                };
            }
            item
        });
    prop_oneof![any_item, edited]
}

/// The keys of both providers' status-change events.
const EVENT_KEYS: &[&str] = &[
    reconcile::event::DETAIL,
    reconcile::event::DETAIL_TYPE,
    reconcile::event::DURABLE_ARN,
    reconcile::event::SFN_ARN,
    reconcile::event::SFN_STATUS,
];

fn json() -> impl Strategy<Value = Value> {
    let texts: Vec<&str> = EVENT_KEYS
        .iter()
        .copied()
        .chain([
            reconcile::event::SFN_DETAIL_TYPE,
            reconcile::event::DURABLE_DETAIL_TYPE,
            " ",
        ])
        .collect();
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(texts).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::btree_map(prop::sample::select(EVENT_KEYS.to_vec()), inner, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
    })
}

fn s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttrValue::S(v)) => Some(v),
        _ => None,
    }
}

proptest! {
    #[test]
    fn any_image_is_decided_and_binds_only_its_own_identity(img in image()) {
        // A host where execution-a is parked (generation 1) and waits on interaction-a.
        let (w, _) = World::parked();
        let step = wake::on_stream_record(Some(&img), &w).unwrap();
        if let StreamStep::Bind { bindings, then } = step {
            prop_assert_eq!(bindings.len(), 1);
            let id = &bindings[0].await_identity;
            if s(&img, attr::RECORD_TYPE) == Some("REGISTRATION") {
                // The registration's generation, bound to the execution's one open await.
                let generation = match img.get(attr::GENERATION) {
                    Some(AttrValue::N(n)) => n.parse::<i64>().ok(),
                    _ => None,
                };
                prop_assert_eq!(Some(id.generation), generation);
                prop_assert_eq!(&id.interaction_id, I);
            } else {
                prop_assert_eq!(Some(id.tenant_id.as_str()), s(&img, interaction_attr::TENANT_ID));
                prop_assert_eq!(Some(id.interaction_id.as_str()), s(&img, interaction_attr::INTERACTION_ID));
                prop_assert_eq!(Some(id.correlation_id.as_str()), s(&img, interaction_attr::CORRELATION_ID));
                prop_assert_eq!(id.generation, 1);
                let completed = s(&img, interaction_attr::STATUS) == Some("COMPLETED");
                prop_assert_eq!(matches!(then, AfterBind::Wake(_)), completed);
            }
        }
    }

    #[test]
    fn any_event_is_read_or_refused(event in json()) {
        if let Some(change) = reconcile::status_change(&event) {
            prop_assert!(!change.execution_arn.trim().is_empty());
        }
    }
}
