//! Store conditions and the DynamoDB item mapping.

use tpf_model::store::conformance::{self, NOW};
use tpf_model::{AwaitStore, ExecutionStore, InMemoryStore};
use tpf_wire::records::{
    AttrValue, AwaitInteractionRecord, AwaitUnitRecord, DynamoItem, ExecutionRecord,
    PipelineReleaseRecord, ReleaseActivationEvent,
};

fn create(store: &InMemoryStore, tenant: &str, key: &str, now: i64) -> ExecutionRecord {
    conformance::create(store, tenant, key, now)
}

fn interaction(id: &str, key: &str, correlation: &str) -> AwaitInteractionRecord {
    conformance::interaction(id, key, correlation)
}

fn unit() -> AwaitUnitRecord {
    conformance::unit()
}

/// The behavioural cases every store runs (the adapter runs them on DynamoDB via moto).
#[test]
fn in_memory_store_passes_the_store_conformance_suite() {
    conformance::run_all(InMemoryStore::new);
}

#[test]
fn execution_items_use_tpf_attribute_names_and_round_trip() {
    let store = InMemoryStore::new();
    let mut record = create(&store, "t", "a", NOW);
    record.await_unit_id = Some("u".into());
    record.next_due_epoch_ms = i64::MAX;
    let item = record.to_item();
    assert_eq!(item.get("tenant_id"), Some(&AttrValue::S("t".into())));
    assert_eq!(item.get("status"), Some(&AttrValue::S("QUEUED".into())));
    assert_eq!(item.get("version"), Some(&AttrValue::N("0".into())));
    assert_eq!(
        item.get("next_due_epoch_ms"),
        Some(&AttrValue::N("9223372036854775807".into()))
    );
    assert_eq!(item.get("await_unit_id"), Some(&AttrValue::S("u".into())));
    assert!(!item.contains_key("lease_owner"), "absent, not NULL");
    for name in item.keys() {
        assert!(
            ExecutionRecord::attribute_names().contains(&name.as_str()),
            "{name}"
        );
    }
    assert_eq!(ExecutionRecord::from_item(&item).unwrap(), record);
    assert_eq!(ExecutionRecord::TABLE, "tpf_execution");

    let mut broken = item.clone();
    broken.insert("status".into(), AttrValue::S("PAUSED".into()));
    let err = ExecutionRecord::from_item(&broken).unwrap_err();
    assert_eq!(err.attribute, "status");
}

#[test]
fn await_and_release_items_round_trip() {
    let i = interaction("i1", "k1", "c1");
    let item = i.to_item();
    assert_eq!(
        item.get("group_name"),
        Some(&AttrValue::S("kitchen".into()))
    );
    assert_eq!(item.get("item_index"), Some(&AttrValue::N("0".into())));
    assert_eq!(AwaitInteractionRecord::from_item(&item).unwrap(), i);

    let mut u = unit();
    u.completed_item_keys.insert("item:0".into());
    u.dispatch_complete = true;
    let item = u.to_item();
    assert_eq!(item.get("dispatch_complete"), Some(&AttrValue::Bool(true)));
    assert!(matches!(
        item.get("completed_item_keys"),
        Some(AttrValue::Ss(_))
    ));
    assert_eq!(AwaitUnitRecord::from_item(&item).unwrap(), u);
    assert!(
        !unit().to_item().contains_key("completed_item_keys"),
        "no empty SS"
    );

    let release = tpf_model::coordinator::local_release(
        "t",
        &tpf_wire::Identity {
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
        },
        NOW,
    );
    let item = release.to_item();
    assert_eq!(item.get("registry_key"), Some(&AttrValue::S("t#p".into())));
    assert_eq!(
        item.get("registry_sort"),
        Some(&AttrValue::S("release:r".into()))
    );
    assert_eq!(PipelineReleaseRecord::from_item(&item).unwrap(), release);

    let event = ReleaseActivationEvent {
        tenant_id: "t".into(),
        pipeline_id: "p".into(),
        release_version: "r".into(),
        activated_at_epoch_ms: 42,
    };
    let item = event.to_item();
    assert_eq!(
        item.get("registry_sort"),
        Some(&AttrValue::S("activation:0000000000000000042:r".into()))
    );
    assert_eq!(ReleaseActivationEvent::from_item(&item).unwrap(), event);
}

#[test]
fn store_traits_are_object_safe() {
    let store = InMemoryStore::new();
    let executions: &dyn ExecutionStore = &store;
    let awaits: &dyn AwaitStore = &store;
    let releases: &dyn tpf_model::ReleaseRegistry = &store;
    assert!(executions.find_due_executions(NOW, 1).unwrap().is_empty());
    assert!(awaits.find_timed_out(NOW, 1).unwrap().is_empty());
    assert!(releases.active_release("t", "p").unwrap().is_none());
}

#[test]
fn the_due_list_reads_at_most_three_times_its_limit() {
    // TPF scans for 3 × limit claimable rows and sorts only those by due time: with limit 1,
    // the globally earliest due row is missed when the scan meets three others first (key
    // order stands in for scan order here).
    let store = InMemoryStore::new();
    for (id, due) in [("a", 10), ("b", 20), ("c", 30), ("d", 40), ("e", 50)] {
        let mut cmd = conformance::create_command("t", id, NOW - due);
        cmd.execution_id = id.into();
        store.create_or_get_execution(&cmd).unwrap();
    }
    let one = store.find_due_executions(NOW, 1).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(
        one[0].execution_id, "c",
        "the earliest of a, b, c; e is due earlier"
    );
    let ids: Vec<String> = store
        .find_due_executions(NOW, 2)
        .unwrap()
        .into_iter()
        .map(|r| r.execution_id)
        .collect();
    assert_eq!(
        ids,
        vec!["e", "d"],
        "six candidates cover all five: earliest first"
    );
}
