//! Store conditions and the DynamoDB item mapping.

use std::collections::BTreeSet;

use serde_json::json;
use tpf_sfn_mapping::tpf::ids;
use tpf_sfn_mapping::tpf::store::CreateExecutionCommand;
use tpf_sfn_mapping::tpf::{
    AttrValue, AwaitInteractionRecord, AwaitInteractionStatus, AwaitStore, AwaitUnitRecord,
    AwaitUnitStatus, DynamoItem, ExecutionRecord, ExecutionStatus, ExecutionStore, InMemoryStore,
    PipelineReleaseRecord, ReleaseActivationEvent, ResultShape,
};

const NOW: i64 = 1_796_020_800_000;

fn create(store: &InMemoryStore, tenant: &str, key: &str, now: i64) -> ExecutionRecord {
    store
        .create_or_get_execution(&CreateExecutionCommand {
            tenant_id: tenant.into(),
            execution_id: ids::execution_id(tenant, key),
            execution_key: key.into(),
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
            result_shape: ResultShape::Single,
            input_payload: json!({"k": key}),
            initial_step_index: 0,
            now_ms: now,
            ttl_epoch_s: now / 1000 + 7 * 86_400,
        })
        .unwrap()
        .record
}

#[test]
fn claim_lease_follows_tpf_conditions() {
    let store = InMemoryStore::new();
    let r = create(&store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    assert!(
        store
            .claim_lease("t", id, "w1", NOW - 1, 30_000)
            .unwrap()
            .is_none(),
        "not due"
    );
    let claimed = store
        .claim_lease("t", id, "w1", NOW, 30_000)
        .unwrap()
        .unwrap();
    assert_eq!(
        (claimed.status, claimed.version),
        (ExecutionStatus::Running, 1)
    );
    assert!(
        store
            .claim_lease("t", id, "w2", NOW + 29_999, 30_000)
            .unwrap()
            .is_none(),
        "leased"
    );
    let taken = store
        .claim_lease("t", id, "w2", NOW + 30_000, 30_000)
        .unwrap()
        .unwrap();
    assert_eq!(taken.lease_owner.as_deref(), Some("w2"));
    assert_eq!(taken.version, 2);

    let parked = store
        .mark_waiting_external("t", id, 2, "k", "unit-1", 2, NOW + 30_001)
        .unwrap()
        .unwrap();
    assert_eq!(parked.next_due_epoch_ms, i64::MAX);
    assert_eq!(parked.lease_owner, None);
    assert!(
        store
            .claim_lease("t", id, "w3", i64::MAX, 1)
            .unwrap()
            .is_none(),
        "parked"
    );
}

#[test]
fn mark_await_completed_has_no_version_check_but_needs_the_unit() {
    let store = InMemoryStore::new();
    let r = create(&store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    store
        .claim_lease("t", id, "w", NOW, 30_000)
        .unwrap()
        .unwrap();
    assert!(
        store
            .mark_await_completed("t", id, "unit-1", 3, NOW)
            .unwrap()
            .is_none(),
        "RUNNING"
    );
    store
        .mark_waiting_external("t", id, 1, "k", "unit-1", 2, NOW)
        .unwrap()
        .unwrap();
    assert!(
        store
            .mark_await_completed("t", id, "unit-2", 3, NOW)
            .unwrap()
            .is_none(),
        "other unit"
    );
    let released = store
        .mark_await_completed("t", id, "unit-1", 3, NOW + 5)
        .unwrap()
        .unwrap();
    assert_eq!(released.status, ExecutionStatus::Queued);
    assert_eq!(released.version, 3);
    assert_eq!(released.next_due_epoch_ms, NOW + 5);
    assert_eq!(released.await_unit_id.as_deref(), Some("unit-1"));
    assert!(
        store
            .mark_await_completed("t", id, "unit-1", 3, NOW)
            .unwrap()
            .is_none(),
        "once"
    );
}

#[test]
fn versioned_writes_need_the_expected_version_and_live_ttl() {
    let store = InMemoryStore::new();
    let r = create(&store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    assert!(store
        .mark_succeeded("t", id, 1, "k", &json!(1), NOW)
        .unwrap()
        .is_none());
    assert!(store
        .schedule_retry("t", id, 7, 1, NOW, "k", "E", "m", NOW)
        .unwrap()
        .is_none());
    assert!(
        store
            .mark_terminal_failure("t", id, 0, ExecutionStatus::Succeeded, "k", "E", "m", NOW)
            .unwrap()
            .is_none(),
        "only FAILED or DLQ"
    );
    let dlq = store
        .mark_terminal_failure("t", id, 0, ExecutionStatus::Dlq, "k", "E", "m", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(dlq.version, 1);
    assert!(store
        .redrive_terminal_execution("t", id, 0, false, "r", NOW)
        .unwrap()
        .is_none());
    let redriven = store
        .redrive_terminal_execution("t", id, 1, false, "r", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(
        (redriven.status, redriven.attempt, redriven.version),
        (ExecutionStatus::Queued, 1, 2)
    );

    let expired_at = (r.ttl_epoch_s + 1) * 1000;
    assert!(store.get_execution("t", id, expired_at).unwrap().is_none());
    assert!(store
        .claim_lease("t", id, "w", expired_at, 1)
        .unwrap()
        .is_none());
    // An expired key no longer dedupes: a new row replaces it.
    let fresh = create(&store, "t", "a", expired_at);
    assert_eq!(fresh.version, 0);
}

#[test]
fn due_executions_sort_by_next_due_then_tenant_then_id() {
    let store = InMemoryStore::new();
    let b = create(&store, "t2", "x", NOW);
    let a = create(&store, "t1", "y", NOW);
    let c = create(&store, "t1", "z", NOW - 10);
    let due = store.find_due_executions(NOW, 10).unwrap();
    let order: Vec<_> = due.iter().map(|r| r.execution_id.clone()).collect();
    assert_eq!(order, vec![c.execution_id, a.execution_id, b.execution_id]);
    assert_eq!(store.find_due_executions(NOW, 1).unwrap().len(), 1);
}

fn interaction(id: &str, key: &str, correlation: &str) -> AwaitInteractionRecord {
    AwaitInteractionRecord {
        tenant_id: "t".into(),
        execution_id: "e".into(),
        step_id: "ProcessAwaitService".into(),
        step_index: 2,
        output_type: Some("Decision".into()),
        interaction_id: id.into(),
        correlation_id: correlation.into(),
        causation_id: None,
        idempotency_key: key.into(),
        version: 0,
        status: AwaitInteractionStatus::Waiting,
        request_payload: Some(json!({"order": 1})),
        response_payload: None,
        unit_id: Some("u".into()),
        item_index: Some(0),
        actor: None,
        assignee: Some("chef".into()),
        group: Some("kitchen".into()),
        transport_type: Some("interaction-api".into()),
        transport_metadata: [("topic".to_owned(), "x".to_owned())].into(),
        deadline_epoch_ms: Some(NOW),
        created_at_epoch_ms: NOW,
        updated_at_epoch_ms: NOW,
        ttl_epoch_s: NOW / 1000 + 86_400,
        transport_output_type: None,
    }
}

#[test]
fn interactions_dedupe_by_idempotency_key_and_by_correlation_id() {
    let store = InMemoryStore::new();
    assert!(
        !store
            .create_or_get_interaction(&interaction("i1", "k1", "c1"))
            .unwrap()
            .duplicate
    );
    let by_key = store
        .create_or_get_interaction(&interaction("i2", "k1", "c2"))
        .unwrap();
    assert!(by_key.duplicate);
    assert_eq!(by_key.record.interaction_id, "i1");
    let by_correlation = store
        .create_or_get_interaction(&interaction("i3", "k3", "c1"))
        .unwrap();
    assert!(by_correlation.duplicate);
    assert_eq!(
        store
            .find_interaction_by_correlation("t", "c1")
            .unwrap()
            .unwrap()
            .interaction_id,
        "i1"
    );
    assert_eq!(store.find_timed_out(NOW, 10).unwrap().len(), 1);
    assert!(store.find_timed_out(NOW - 1, 10).unwrap().is_empty());
}

fn unit() -> AwaitUnitRecord {
    AwaitUnitRecord {
        tenant_id: "t".into(),
        unit_id: "u".into(),
        execution_id: "e".into(),
        step_id: "ProcessAwaitService".into(),
        step_index: 1,
        cardinality: "ONE_TO_ONE".into(),
        version: 0,
        status: AwaitUnitStatus::WaitingExternal,
        primary_interaction_id: None,
        expected_item_count: None,
        completed_item_count: 0,
        completed_item_keys: BTreeSet::new(),
        dispatch_complete: false,
        created_at_epoch_ms: NOW,
        updated_at_epoch_ms: NOW,
        ttl_epoch_s: NOW / 1000 + 86_400,
    }
}

#[test]
fn unit_item_counting_is_idempotent_and_completes_when_ready() {
    let store = InMemoryStore::new();
    store.create_or_get_unit(&unit(), NOW).unwrap();
    assert!(store.create_or_get_unit(&unit(), NOW).unwrap().duplicate);
    store
        .record_item_completed("t", "u", "item:0", NOW)
        .unwrap()
        .unwrap();
    assert!(store
        .record_item_completed("t", "u", "item:0", NOW)
        .unwrap()
        .is_none());
    assert!(
        store.complete_if_ready("t", "u", NOW).unwrap().is_none(),
        "dispatch incomplete"
    );
    store
        .mark_dispatch_complete("t", "u", 2, NOW)
        .unwrap()
        .unwrap();
    assert!(
        store.complete_if_ready("t", "u", NOW).unwrap().is_none(),
        "1 of 2"
    );
    store
        .record_item_completed("t", "u", "item:1", NOW)
        .unwrap()
        .unwrap();
    let done = store.complete_if_ready("t", "u", NOW).unwrap().unwrap();
    assert_eq!(done.status, AwaitUnitStatus::Completed);
    assert_eq!(done.completed_item_count, 2);
    assert!(
        store
            .record_item_completed("t", "u", "item:2", NOW)
            .unwrap()
            .is_none(),
        "terminal"
    );
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

    let release = tpf_sfn_mapping::tpf::coordinator::local_release(
        "t",
        &tpf_sfn_compiler::release::Identity {
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
    let releases: &dyn tpf_sfn_mapping::tpf::ReleaseRegistry = &store;
    assert!(executions.find_due_executions(NOW, 1).unwrap().is_empty());
    assert!(awaits.find_timed_out(NOW, 1).unwrap().is_empty());
    assert!(releases.active_release("t", "p").unwrap().is_none());
}
