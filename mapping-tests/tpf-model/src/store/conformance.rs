//! Behavioural conformance for every store implementation: the write conditions of TPF's Dynamo
//! stores, exercised through the traits only. The in-memory store and the adapter's DynamoDB
//! store run the very same cases, so the model and the real tables cannot drift apart.
//!
//! Each case gets a fresh store from the factory. Failures panic (these are test helpers).

use std::collections::BTreeSet;

use serde_json::json;
use tpf_wire::Identity;

use super::{AwaitStore, CreateExecutionCommand, ExecutionStore, RegistryError, ReleaseRegistry};
use crate::coordinator::local_release;
use tpf_wire::ids;
use tpf_wire::records::{
    execution_attr, AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord,
    AwaitUnitStatus, ExecutionRecord, ExecutionStatus, ReleaseStatus, ResultShape,
};

/// 2026-11-30T06:40:00Z.
pub const NOW: i64 = 1_796_020_800_000;

/// Every store trait at once.
pub trait Store: ExecutionStore + AwaitStore + ReleaseRegistry {}
impl<T: ExecutionStore + AwaitStore + ReleaseRegistry> Store for T {}

type Case<S> = (&'static str, fn(&S));

/// The cases, by name.
pub fn cases<S: Store>() -> Vec<Case<S>> {
    vec![
        (
            "claim_lease_follows_tpf_conditions",
            claim_lease_follows_tpf_conditions::<S>,
        ),
        (
            "remote_outcome_unknown_is_neither_claimed_nor_swept_until_an_operator_redrives",
            remote_outcome_unknown_is_neither_claimed_nor_swept_until_an_operator_redrives::<S>,
        ),
        (
            "new_records_replay_with_no_failed_step_and_a_redrive_replays",
            new_records_replay_with_no_failed_step_and_a_redrive_replays::<S>,
        ),
        (
            "mark_await_completed_has_no_version_check_but_needs_the_unit",
            mark_await_completed_has_no_version_check_but_needs_the_unit::<S>,
        ),
        (
            "versioned_writes_need_the_expected_version_and_live_ttl",
            versioned_writes_need_the_expected_version_and_live_ttl::<S>,
        ),
        (
            "create_or_get_dedupes_by_scoped_key",
            create_or_get_dedupes_by_scoped_key::<S>,
        ),
        (
            "due_executions_sort_by_next_due_then_tenant_then_id",
            due_executions_sort_by_next_due_then_tenant_then_id::<S>,
        ),
        (
            "interactions_dedupe_by_idempotency_key_and_by_correlation_id",
            interactions_dedupe_by_idempotency_key_and_by_correlation_id::<S>,
        ),
        (
            "interaction_transitions_are_version_conditioned",
            interaction_transitions_are_version_conditioned::<S>,
        ),
        (
            "interactions_for_unit_order_by_item_index_scalar_last",
            interactions_for_unit_order_by_item_index_scalar_last::<S>,
        ),
        (
            "unit_item_counting_is_idempotent_and_completes_when_ready",
            unit_item_counting_is_idempotent_and_completes_when_ready::<S>,
        ),
        (
            "item_continuations_replace_input_and_remove_the_unit",
            item_continuations_replace_input_and_remove_the_unit::<S>,
        ),
        (
            "continuation_facts_are_added_once_to_a_live_unit",
            continuation_facts_are_added_once_to_a_live_unit::<S>,
        ),
        (
            "executions_are_found_by_their_key",
            executions_are_found_by_their_key::<S>,
        ),
        (
            "releases_register_idempotently_and_activate_by_latest_event",
            releases_register_idempotently_and_activate_by_latest_event::<S>,
        ),
    ]
}

/// Runs every case, each on a fresh store from `make`.
pub fn run_all<S: Store>(make: impl Fn() -> S) {
    for (name, case) in cases::<S>() {
        eprintln!("store conformance: {name}");
        case(&make());
    }
}

pub fn create<S: ExecutionStore + ?Sized>(
    store: &S,
    tenant: &str,
    key: &str,
    now: i64,
) -> ExecutionRecord {
    store
        .create_or_get_execution(&create_command(tenant, key, now))
        .expect("create")
        .record
}

pub fn create_command(tenant: &str, key: &str, now: i64) -> CreateExecutionCommand {
    CreateExecutionCommand {
        tenant_id: tenant.into(),
        execution_id: ids::execution_id(tenant, key, now),
        execution_key: key.into(),
        pipeline_id: "p".into(),
        contract_version: "c".into(),
        release_version: "r".into(),
        result_shape: ResultShape::Single,
        input_payload: json!({"k": key}),
        initial_step_index: 0,
        now_ms: now,
        ttl_epoch_s: now / 1000 + 7 * 86_400,
    }
}

/// Today's TPF: every new record carries the re-drive intent `REPLAY` and the failed step `-1`,
/// read back as written; a re-drive records its intent.
pub fn new_records_replay_with_no_failed_step_and_a_redrive_replays<S: Store>(store: &S) {
    let r = create(store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    for record in [
        r.clone(),
        store.get_execution("t", id, NOW).unwrap().expect("created"),
    ] {
        assert_eq!(record.redrive_intent, execution_attr::REPLAY);
        assert_eq!(record.failed_step_index, execution_attr::NO_FAILED_STEP);
    }
    let claimed = store
        .claim_lease("t", id, "w", NOW, 30_000)
        .unwrap()
        .expect("claimable");
    let failed = store
        .mark_terminal_failure(
            "t",
            id,
            claimed.version,
            ExecutionStatus::Failed,
            "k",
            "E",
            "m",
            NOW + 1,
        )
        .unwrap()
        .expect("failed");
    let redriven = store
        .redrive_terminal_execution("t", id, failed.version, true, "redrive", NOW + 2)
        .unwrap()
        .expect("re-driven");
    assert_eq!(redriven.redrive_intent, execution_attr::REPLAY);
    assert_eq!(redriven.failed_step_index, execution_attr::NO_FAILED_STEP);
    assert_eq!(
        store.get_execution("t", id, NOW + 2).unwrap().as_ref(),
        Some(&redriven)
    );
}

pub fn claim_lease_follows_tpf_conditions<S: Store>(store: &S) {
    let r = create(store, "t", "a", NOW);
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
    assert_eq!(claimed.lease_expires_epoch_ms, NOW + 30_000);
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
    assert_eq!(parked.current_step_index, 2);
    assert!(
        store
            .claim_lease("t", id, "w3", i64::MAX, 1)
            .unwrap()
            .is_none(),
        "parked"
    );
    assert!(
        store
            .claim_lease("t", "missing", "w", NOW, 1)
            .unwrap()
            .is_none(),
        "absent row"
    );
    let read = store.get_execution("t", id, NOW + 30_001).unwrap().unwrap();
    assert_eq!(read, parked);
}

pub fn remote_outcome_unknown_is_neither_claimed_nor_swept_until_an_operator_redrives<S: Store>(
    store: &S,
) {
    let id = &create(store, "t", "rou", NOW).execution_id;
    let claimed = store
        .claim_lease("t", id, "w", NOW, 30_000)
        .unwrap()
        .unwrap();
    assert!(
        store
            .mark_remote_outcome_unknown("t", id, claimed.version - 1, "E", "m", NOW)
            .unwrap()
            .is_none(),
        "versioned"
    );
    let rou = store
        .mark_remote_outcome_unknown("t", id, claimed.version, "RemoteDeadline", "m", NOW + 1)
        .unwrap()
        .unwrap();
    assert_eq!(rou.status, ExecutionStatus::RemoteOutcomeUnknown);
    assert_eq!(rou.version, claimed.version + 1);
    assert_eq!(rou.next_due_epoch_ms, i64::MAX);
    assert_eq!(rou.lease_owner, None);
    assert_eq!(rou.error_code.as_deref(), Some("RemoteDeadline"));
    // Even with the lease long expired and the clock far ahead: never claimed, never due.
    let later = NOW + 86_400_000;
    assert!(store
        .claim_lease("t", id, "w2", later, 30_000)
        .unwrap()
        .is_none());
    assert!(store
        .find_due_executions(later, 10)
        .unwrap()
        .iter()
        .all(|r| r.execution_id != *id));
    assert!(
        store
            .redrive_terminal_execution("t", id, rou.version, false, "r", later)
            .unwrap()
            .is_none(),
        "REMOTE_OUTCOME_UNKNOWN needs allowFailed"
    );
    let redriven = store
        .redrive_terminal_execution("t", id, rou.version, true, "r", later)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            redriven.status,
            redriven.attempt,
            redriven.next_due_epoch_ms
        ),
        (ExecutionStatus::Queued, rou.attempt + 1, later)
    );
    assert_eq!(redriven.error_code, None);
}

pub fn mark_await_completed_has_no_version_check_but_needs_the_unit<S: Store>(store: &S) {
    let r = create(store, "t", "a", NOW);
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
    assert_eq!(released.current_step_index, 3);
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

pub fn versioned_writes_need_the_expected_version_and_live_ttl<S: Store>(store: &S) {
    let r = create(store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    assert!(store
        .mark_succeeded("t", id, 1, "k", &json!(1), NOW)
        .unwrap()
        .is_none());
    assert!(store
        .schedule_retry("t", id, 7, 1, NOW, "k", "E", "m", NOW)
        .unwrap()
        .is_none());
    let retry = store
        .schedule_retry("t", id, 0, 1, NOW + 10_000, "k", "E", "m", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(
        (retry.status, retry.attempt, retry.next_due_epoch_ms),
        (ExecutionStatus::WaitRetry, 1, NOW + 10_000)
    );
    assert_eq!(retry.error_code.as_deref(), Some("E"));
    assert!(
        store
            .mark_terminal_failure("t", id, 1, ExecutionStatus::Succeeded, "k", "E", "m", NOW)
            .unwrap()
            .is_none(),
        "only FAILED or DLQ"
    );
    let long = "x".repeat(600);
    let dlq = store
        .mark_terminal_failure("t", id, 1, ExecutionStatus::Dlq, "k", "E", &long, NOW)
        .unwrap()
        .unwrap();
    assert_eq!(dlq.version, 2);
    assert_eq!(dlq.error_message.as_deref().map(str::len), Some(512));
    assert!(store
        .redrive_terminal_execution("t", id, 1, false, "r", NOW)
        .unwrap()
        .is_none());
    let redriven = store
        .redrive_terminal_execution("t", id, 2, false, "r", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(
        (redriven.status, redriven.attempt, redriven.version),
        (ExecutionStatus::Queued, 2, 3)
    );
    assert_eq!(redriven.error_code, None);

    let failed = store
        .mark_terminal_failure("t", id, 3, ExecutionStatus::Failed, "k", "E", "m", NOW)
        .unwrap()
        .unwrap();
    assert!(
        store
            .redrive_terminal_execution("t", id, 4, false, "r", NOW)
            .unwrap()
            .is_none(),
        "FAILED needs allowFailed"
    );
    assert!(store
        .redrive_terminal_execution("t", id, failed.version, true, "r", NOW)
        .unwrap()
        .is_some());

    let claimed = store
        .claim_lease("t", id, "w", NOW, 30_000)
        .unwrap()
        .unwrap();
    let done = store
        .mark_succeeded("t", id, claimed.version, "k2", &json!({"ok": 1}), NOW + 1)
        .unwrap()
        .unwrap();
    assert_eq!(done.status, ExecutionStatus::Succeeded);
    assert_eq!(done.result_payload, Some(json!({"ok": 1})));
    assert_eq!(done.lease_owner, None);
    assert_eq!(done.updated_at_epoch_ms, NOW + 1);

    let expired_at = (r.ttl_epoch_s + 1) * 1000;
    assert!(store.get_execution("t", id, expired_at).unwrap().is_none());
    assert!(store
        .claim_lease("t", id, "w", expired_at, 1)
        .unwrap()
        .is_none());
    assert!(store
        .mark_succeeded("t", id, done.version, "k", &json!(1), expired_at)
        .unwrap()
        .is_none());
    // An expired key no longer dedupes: a new row replaces it.
    let fresh = create(store, "t", "a", expired_at);
    assert_eq!(fresh.version, 0);
    assert_eq!(fresh.status, ExecutionStatus::Queued);
}

pub fn create_or_get_dedupes_by_scoped_key<S: Store>(store: &S) {
    let first = store
        .create_or_get_execution(&create_command("t", "k", NOW))
        .unwrap();
    assert!(!first.duplicate);
    assert_eq!(first.record.version, 0);
    assert_eq!(first.record.next_due_epoch_ms, NOW);
    let mut again = create_command("t", "k", NOW + 5);
    again.input_payload = json!({"other": true});
    let second = store.create_or_get_execution(&again).unwrap();
    assert!(second.duplicate);
    assert_eq!(second.record, first.record);
    // Keys are scoped by tenant only.
    let other = store
        .create_or_get_execution(&create_command("t2", "k", NOW))
        .unwrap();
    assert!(!other.duplicate);
    assert!(store.get_execution("t", "nope", NOW).unwrap().is_none());
    assert!(
        store
            .get_execution("t2", &first.record.execution_id, NOW)
            .unwrap()
            .is_none(),
        "tenant isolation"
    );
}

pub fn due_executions_sort_by_next_due_then_tenant_then_id<S: Store>(store: &S) {
    let b = create(store, "t2", "x", NOW);
    let a = create(store, "t1", "y", NOW);
    let c = create(store, "t1", "z", NOW - 10);
    let parked = create(store, "t1", "w", NOW - 20);
    store
        .claim_lease("t1", &parked.execution_id, "w", NOW, 1)
        .unwrap()
        .unwrap();
    store
        .mark_waiting_external("t1", &parked.execution_id, 1, "k", "u", 1, NOW)
        .unwrap()
        .unwrap();
    let due = store.find_due_executions(NOW, 10).unwrap();
    let order: Vec<_> = due.iter().map(|r| r.execution_id.clone()).collect();
    assert_eq!(order, vec![c.execution_id, a.execution_id, b.execution_id]);
    assert_eq!(store.find_due_executions(NOW, 1).unwrap().len(), 1);
    assert!(store.find_due_executions(NOW - 11, 10).unwrap().is_empty());
    assert_eq!(store.find_due_executions(NOW, usize::MAX).unwrap().len(), 3);
}

pub fn interaction(id: &str, key: &str, correlation: &str) -> AwaitInteractionRecord {
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

pub fn interactions_dedupe_by_idempotency_key_and_by_correlation_id<S: Store>(store: &S) {
    let created = store
        .create_or_get_interaction(&interaction("i1", "k1", "c1"))
        .unwrap();
    assert!(!created.duplicate);
    assert_eq!(created.record, interaction("i1", "k1", "c1"));
    let by_key = store
        .create_or_get_interaction(&interaction("i2", "k1", "c2"))
        .unwrap();
    assert!(by_key.duplicate);
    assert_eq!(by_key.record.interaction_id, "i1");
    let by_correlation = store
        .create_or_get_interaction(&interaction("i3", "k3", "c1"))
        .unwrap();
    assert!(by_correlation.duplicate);
    assert_eq!(by_correlation.record.interaction_id, "i1");
    assert!(store.get_interaction("t", "i2").unwrap().is_none());
    assert_eq!(
        store
            .find_interaction_by_correlation("t", "c1")
            .unwrap()
            .unwrap()
            .interaction_id,
        "i1"
    );
    assert!(store
        .find_interaction_by_correlation("t", "c2")
        .unwrap()
        .is_none());
    assert_eq!(
        store.get_interaction("t", "i1").unwrap().unwrap(),
        interaction("i1", "k1", "c1")
    );
    assert_eq!(store.find_timed_out(NOW, 10).unwrap().len(), 1);
    assert!(store.find_timed_out(NOW - 1, 10).unwrap().is_empty());
}

pub fn interaction_transitions_are_version_conditioned<S: Store>(store: &S) {
    let mut later = interaction("i2", "k2", "c2");
    later.deadline_epoch_ms = Some(NOW + 5);
    later.unit_id = None;
    store.create_or_get_interaction(&later).unwrap();
    store
        .create_or_get_interaction(&interaction("i1", "k1", "c1"))
        .unwrap();
    let timed_out: Vec<_> = store
        .find_timed_out(NOW + 5, 10)
        .unwrap()
        .into_iter()
        .map(|i| i.interaction_id)
        .collect();
    assert_eq!(timed_out, vec!["i1", "i2"], "sorted by deadline");
    assert_eq!(store.find_timed_out(NOW + 5, 1).unwrap().len(), 1);

    assert!(store
        .transition_interaction(
            "t",
            "i1",
            3,
            AwaitInteractionStatus::Completed,
            None,
            None,
            NOW
        )
        .unwrap()
        .is_none());
    let done = store
        .transition_interaction(
            "t",
            "i1",
            0,
            AwaitInteractionStatus::Completed,
            Some(&json!({"decision": "accepted"})),
            Some("chef"),
            NOW + 1,
        )
        .unwrap()
        .unwrap();
    assert_eq!(done.version, 1);
    assert_eq!(done.status, AwaitInteractionStatus::Completed);
    assert_eq!(done.response_payload, Some(json!({"decision": "accepted"})));
    assert_eq!(done.actor.as_deref(), Some("chef"));
    assert_eq!(done.updated_at_epoch_ms, NOW + 1);
    assert_eq!(store.get_interaction("t", "i1").unwrap().unwrap(), done);
    // Terminal interactions leave the deadline index.
    let remaining: Vec<_> = store
        .find_timed_out(NOW + 5, 10)
        .unwrap()
        .into_iter()
        .map(|i| i.interaction_id)
        .collect();
    assert_eq!(remaining, vec!["i2"]);
    let pending: Vec<_> = store
        .pending_interactions("t", 10)
        .unwrap()
        .into_iter()
        .map(|i| i.interaction_id)
        .collect();
    assert_eq!(pending, vec!["i2"], "completed ones leave the pending list");
    assert!(store.pending_interactions("t2", 10).unwrap().is_empty());
    assert!(store
        .transition_interaction(
            "t",
            "missing",
            0,
            AwaitInteractionStatus::Completed,
            None,
            None,
            NOW
        )
        .unwrap()
        .is_none());
}

pub fn interactions_for_unit_order_by_item_index_scalar_last<S: Store>(store: &S) {
    let mut scalar = interaction("i0", "k0", "c0");
    scalar.item_index = None;
    let mut second = interaction("i2", "k2", "c2");
    second.item_index = Some(1);
    let first = interaction("i1", "k1", "c1");
    let mut elsewhere = interaction("i3", "k3", "c3");
    elsewhere.unit_id = Some("other".into());
    for i in [&scalar, &second, &first, &elsewhere] {
        store.create_or_get_interaction(i).unwrap();
    }
    let order: Vec<_> = store
        .interactions_for_unit("t", "u")
        .unwrap()
        .into_iter()
        .map(|i| i.interaction_id)
        .collect();
    assert_eq!(order, vec!["i1", "i2", "i0"]);
    assert!(store.interactions_for_unit("t2", "u").unwrap().is_empty());
}

pub fn unit() -> AwaitUnitRecord {
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

pub fn unit_item_counting_is_idempotent_and_completes_when_ready<S: Store>(store: &S) {
    assert!(!store.create_or_get_unit(&unit(), NOW).unwrap().duplicate);
    assert!(store.create_or_get_unit(&unit(), NOW).unwrap().duplicate);
    assert_eq!(store.get_unit("t", "u").unwrap().unwrap(), unit());
    let one = store
        .record_item_completed("t", "u", "item:0", NOW)
        .unwrap()
        .unwrap();
    assert_eq!((one.completed_item_count, one.version), (1, 1));
    assert!(one.completed_item_keys.contains("item:0"));
    assert!(store
        .record_item_completed("t", "u", "item:0", NOW)
        .unwrap()
        .is_none());
    assert!(
        store.complete_if_ready("t", "u", NOW).unwrap().is_none(),
        "dispatch incomplete"
    );
    let dispatched = store
        .mark_dispatch_complete("t", "u", 2, NOW)
        .unwrap()
        .unwrap();
    assert_eq!(dispatched.expected_item_count, Some(2));
    assert!(dispatched.dispatch_complete);
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
    assert!(store
        .mark_dispatch_complete("t", "u", 3, NOW)
        .unwrap()
        .is_none());
    // Existence-only writes.
    let timed_out = store
        .mark_unit_terminal("t", "u", AwaitUnitStatus::TimedOut, NOW)
        .unwrap()
        .unwrap();
    assert_eq!(timed_out.status, AwaitUnitStatus::TimedOut);
    assert!(store
        .mark_unit_completed("t", "nope", NOW)
        .unwrap()
        .is_none());
    let mut scalar = unit();
    scalar.unit_id = "s".into();
    scalar.primary_interaction_id = Some("i1".into());
    store.create_or_get_unit(&scalar, NOW).unwrap();
    assert_eq!(
        store
            .mark_unit_completed("t", "s", NOW)
            .unwrap()
            .unwrap()
            .status,
        AwaitUnitStatus::Completed
    );
}

pub fn item_continuations_replace_input_and_remove_the_unit<S: Store>(store: &S) {
    let r = create(store, "t", "a", NOW);
    let id = r.execution_id.as_str();
    store
        .claim_lease("t", id, "w", NOW, 30_000)
        .unwrap()
        .unwrap();
    store
        .mark_waiting_external("t", id, 1, "k", "u", 1, NOW)
        .unwrap()
        .unwrap();
    let input = json!({"shape": "MULTI", "items": [1, 2]});
    assert!(store
        .mark_await_item_continuations_completed("t", id, "other", 2, &input, NOW)
        .unwrap()
        .is_none());
    let released = store
        .mark_await_item_continuations_completed("t", id, "u", 2, &input, NOW + 1)
        .unwrap()
        .unwrap();
    assert_eq!(released.status, ExecutionStatus::Queued);
    assert_eq!(released.input_payload, input);
    assert_eq!(released.await_unit_id, None);
    assert_eq!(released.current_step_index, 2);
    assert_eq!(released.next_due_epoch_ms, NOW + 1);
}

pub fn continuation_facts_are_added_once_to_a_live_unit<S: Store>(store: &S) {
    assert!(store
        .record_item_continuation_completed("t", "u", "continuation:0", NOW)
        .unwrap()
        .is_none());
    store.create_or_get_unit(&unit(), NOW).unwrap();
    let one = store
        .record_item_continuation_completed("t", "u", "continuation:0", NOW)
        .unwrap()
        .unwrap();
    assert!(one.has_continuation_fact(0));
    assert_eq!(
        (one.completed_item_count, one.version),
        (0, 1),
        "not an admitted item"
    );
    assert!(
        store
            .record_item_continuation_completed("t", "u", "continuation:0", NOW)
            .unwrap()
            .is_none(),
        "once"
    );
    store.mark_dispatch_complete("t", "u", 1, NOW).unwrap();
    store
        .record_item_completed("t", "u", "item:0", NOW)
        .unwrap();
    store.complete_if_ready("t", "u", NOW).unwrap().unwrap();
    let completed = store
        .record_item_continuation_completed("t", "u", "continuation:1", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(
        completed.completed_continuation_count(),
        2,
        "COMPLETED units take facts"
    );
    store
        .mark_unit_terminal("t", "u", AwaitUnitStatus::TimedOut, NOW)
        .unwrap();
    assert!(
        store
            .record_item_continuation_completed("t", "u", "continuation:2", NOW)
            .unwrap()
            .is_none(),
        "a timed-out unit takes none"
    );
}

pub fn executions_are_found_by_their_key<S: Store>(store: &S) {
    let r = create(store, "t", "k:await-item:u:0", NOW);
    assert_eq!(
        store
            .get_execution_by_key("t", "k:await-item:u:0", NOW)
            .unwrap()
            .map(|x| x.execution_id),
        Some(r.execution_id)
    );
    assert!(store
        .get_execution_by_key("other", "k:await-item:u:0", NOW)
        .unwrap()
        .is_none());
    assert!(store
        .get_execution_by_key("t", "nope", NOW)
        .unwrap()
        .is_none());
    assert!(
        store
            .get_execution_by_key("t", "k:await-item:u:0", NOW + 8 * 86_400_000)
            .unwrap()
            .is_none(),
        "expired"
    );
}

fn identity(release: &str) -> Identity {
    Identity {
        pipeline_id: "p".into(),
        contract_version: format!("c-{release}"),
        release_version: release.into(),
    }
}

pub fn releases_register_idempotently_and_activate_by_latest_event<S: Store>(store: &S) {
    assert!(store.active_release("t", "p").unwrap().is_none());
    let v1 = local_release("t", &identity("v1"), NOW);
    let stored = store.register_release(&v1).unwrap();
    assert_eq!(stored.status, ReleaseStatus::Registered);
    assert_eq!(store.register_release(&v1).unwrap(), stored, "idempotent");
    let mut conflicting = v1.clone();
    conflicting.contract_version = "different".into();
    assert!(matches!(
        store.register_release(&conflicting),
        Err(RegistryError::Conflict(_))
    ));
    assert!(matches!(
        store.activate_release("t", "p", "v9", NOW),
        Err(RegistryError::NotFound(_))
    ));
    let active = store.activate_release("t", "p", "v1", NOW + 1).unwrap();
    assert_eq!(active.status, ReleaseStatus::Active);
    assert_eq!(active.activated_at_epoch_ms, NOW + 1);
    let v2 = local_release("t", &identity("v2"), NOW + 2);
    store.register_release(&v2).unwrap();
    assert_eq!(
        store
            .active_release("t", "p")
            .unwrap()
            .unwrap()
            .release_version,
        "v1",
        "registration alone does not activate"
    );
    store.activate_release("t", "p", "v2", NOW + 3).unwrap();
    // Same activation at the same instant is a no-op.
    store.activate_release("t", "p", "v2", NOW + 3).unwrap();
    let now_active = store.active_release("t", "p").unwrap().unwrap();
    assert_eq!(now_active.release_version, "v2");
    assert_eq!(now_active.activated_at_epoch_ms, NOW + 3);
    let old = store.get_release("t", "p", "v1").unwrap().unwrap();
    assert_eq!(old.status, ReleaseStatus::Registered);
    assert_eq!(
        store.get_release("t", "p", "v2").unwrap().unwrap().status,
        ReleaseStatus::Active
    );
    assert!(store.get_release("t", "p", "v3").unwrap().is_none());
    let events: Vec<_> = store
        .activation_events("t", "p")
        .unwrap()
        .into_iter()
        .map(|e| (e.release_version, e.activated_at_epoch_ms))
        .collect();
    assert_eq!(
        events,
        vec![("v1".to_owned(), NOW + 1), ("v2".to_owned(), NOW + 3)]
    );
    assert!(store.active_release("t2", "p").unwrap().is_none(), "tenant");
}
