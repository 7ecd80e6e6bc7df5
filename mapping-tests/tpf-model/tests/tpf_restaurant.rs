//! Restaurant-approval flows through the reference coordinator.

use crate::tpf_support;

use serde_json::json;
use tpf_model::coordinator::local_release;
use tpf_model::worker::StepRun;
use tpf_model::{AwaitStore, CoordinatorError, ReleaseRegistry, SubmitRequest, WorkItemStart};
use tpf_support::*;
use tpf_wire::ids;
use tpf_wire::records::ExecutionStatus;

#[test]
fn restaurant_trace_matches_tpf_version_and_step_sequence() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);

    let parked = c.process_work_item(TENANT, &id, T0).expect("first segment");
    assert!(parked.claimed);
    assert_eq!(parked.record.status, ExecutionStatus::WaitingExternal);
    assert_eq!(parked.record.next_due_epoch_ms, i64::MAX);
    assert_eq!(
        parked.record.last_transition_key.as_deref(),
        Some(format!("{id}:0:0").as_str())
    );
    let unit_id = ids::await_unit_id(TENANT, &id, "ProcessAwaitRestaurantDecisionService", 2);
    assert_eq!(
        parked.record.await_unit_id.as_deref(),
        Some(unit_id.as_str())
    );

    let pending = interactions(&c, &id, T0);
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].idempotency_key,
        format!("{id}:ProcessAwaitRestaurantDecisionService")
    );
    assert_eq!(pending[0].deadline_epoch_ms, Some(T0 + 30 * MINUTE));

    let done = c
        .complete_await(
            &completion(&pending[0].interaction_id, "accepted"),
            T0 + MINUTE,
        )
        .expect("complete");
    assert!(!done.duplicate);
    assert!(done.released);

    let finished = c
        .process_work_item(TENANT, &id, T0 + MINUTE + SECOND)
        .expect("resume segment");
    assert!(finished.claimed);
    assert_eq!(finished.record.status, ExecutionStatus::Succeeded);
    assert_eq!(
        finished.record.last_transition_key.as_deref(),
        Some(format!("{id}:3:0").as_str())
    );
    assert_eq!(finished.record.await_unit_id, None);

    assert_eq!(
        trace(&c, &id),
        vec![
            (0, "QUEUED".into(), 0, 0, "create"),
            (1, "RUNNING".into(), 0, 0, "claim"),
            (2, "WAITING_EXTERNAL".into(), 2, 0, "park"),
            (3, "QUEUED".into(), 3, 0, "await-completed"),
            (4, "RUNNING".into(), 3, 0, "claim"),
            (5, "SUCCEEDED".into(), 3, 0, "succeed"),
        ]
    );
    let runs: Vec<(u32, u32)> = c
        .worker()
        .runs()
        .iter()
        .map(|r: &StepRun| (r.step_index, r.attempt))
        .collect();
    assert_eq!(runs, vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
    // The resumed segment got the await response as its input.
    assert_eq!(
        finished.record.result_payload,
        Some(json!({
            "step": "Finalize Restaurant Decision",
            "input": { "decision": "accepted" }
        }))
    );
    c.log().check_all().expect("invariants");
    // The full commit and call log, for the harness's trace format.
    insta::assert_json_snapshot!("restaurant_transitions", c.log().transitions());
    insta::assert_json_snapshot!("restaurant_calls", c.log().calls());
}

#[test]
fn duplicate_submit_returns_the_original_execution() {
    let mut c = restaurant(|w| w);
    let first = c
        .submit(
            &SubmitRequest {
                tenant_id: TENANT.into(),
                pipeline_id: PIPELINE.into(),
                execution_key: Some("order-1".into()),
                input_payload: json!({"orderId": 1}),
            },
            T0,
        )
        .expect("first");
    let again = c
        .submit(
            &SubmitRequest {
                tenant_id: TENANT.into(),
                pipeline_id: PIPELINE.into(),
                execution_key: Some("order-1".into()),
                input_payload: json!({"orderId": "changed"}),
            },
            T0 + SECOND,
        )
        .expect("duplicate");
    assert!(!first.duplicate);
    assert!(again.duplicate);
    assert_eq!(again.execution_id, first.execution_id);
    assert_eq!(again.record.input_payload, json!({"orderId": 1}));
    assert_eq!(c.log().count(&first.execution_id, "create"), 1);
    assert_eq!(c.log().transitions().len(), 1);
}

#[test]
fn derived_keys_dedupe_identical_input() {
    let mut c = restaurant(|w| w);
    let req = SubmitRequest {
        tenant_id: TENANT.into(),
        pipeline_id: PIPELINE.into(),
        execution_key: None,
        input_payload: json!({"orderId": 7}),
    };
    let a = c.submit(&req, T0).expect("a");
    let b = c.submit(&req, T0 + 1).expect("b");
    assert!(b.duplicate);
    assert_eq!(a.execution_id, b.execution_id);
}

#[test]
fn submit_without_active_release_is_refused_with_409() {
    let mut c = restaurant(|w| w);
    let err = c
        .submit(
            &SubmitRequest {
                tenant_id: "other-tenant".into(),
                pipeline_id: PIPELINE.into(),
                execution_key: Some("k".into()),
                input_payload: json!({}),
            },
            T0,
        )
        .expect_err("no active release");
    assert!(matches!(err, CoordinatorError::NoActiveRelease { .. }));
    assert_eq!(err.http_status(), 409);
}

#[test]
fn duplicate_completion_is_acknowledged_and_releases_once() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let interaction = interactions(&c, &id, T0).remove(0);

    let first = c
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            T0 + MINUTE,
        )
        .expect("first");
    let second = c
        .complete_await(
            &completion(&interaction.interaction_id, "declined"),
            T0 + 2 * MINUTE,
        )
        .expect("second");
    assert!(!first.duplicate && first.released);
    assert!(second.duplicate && !second.released);
    // First writer wins: the second payload is ignored.
    assert_eq!(
        second.interaction.response_payload,
        Some(json!({"decision": "accepted"}))
    );
    assert_eq!(c.log().count(&id, "await-completed"), 1);

    // By correlation id too, after the parent has moved on.
    c.process_work_item(TENANT, &id, T0 + 3 * MINUTE)
        .expect("finish");
    let third = c
        .complete_await(
            &tpf_model::AwaitCompletion {
                interaction_id: None,
                correlation_id: Some(interaction.correlation_id.clone()),
                ..completion("", "accepted")
            },
            T0 + 4 * MINUTE,
        )
        .expect("third");
    assert!(third.duplicate && !third.released);
    assert_eq!(
        c.status(TENANT, &id, T0 + 4 * MINUTE).unwrap().status,
        ExecutionStatus::Succeeded
    );
    c.log().check_all().expect("invariants");
}

#[test]
fn completion_before_park_is_held_then_released_by_the_park() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    let WorkItemStart::Claimed(segment) = c.begin_work_item(TENANT, &id, T0).expect("begin") else {
        panic!("expected a claim");
    };
    // The worker has created the await records; the parent is still RUNNING.
    let interaction = interactions(&c, &id, T0);
    assert!(interaction.is_empty(), "parent has no unit yet");
    let unit_id = segment.await_unit_id.clone().expect("unit");
    let item = c
        .store()
        .interactions_for_unit(TENANT, &unit_id)
        .expect("interactions")
        .remove(0);
    let early = c
        .complete_await(&completion(&item.interaction_id, "accepted"), T0 + SECOND)
        .expect("early completion");
    assert!(!early.released, "held: the parent is not parked yet");
    assert_eq!(
        c.status(TENANT, &id, T0).unwrap().status,
        ExecutionStatus::Running
    );

    let after = c.commit_segment(segment, T0 + 2 * SECOND).expect("commit");
    assert_eq!(after.status, ExecutionStatus::Queued);
    assert_eq!(after.current_step_index, 3);
    assert_eq!(after.version, 3);
    assert_eq!(
        trace(&c, &id).iter().map(|t| t.4).collect::<Vec<_>>(),
        vec!["create", "claim", "park", "await-completed"]
    );
    let done = c
        .process_work_item(TENANT, &id, T0 + 3 * SECOND)
        .expect("finish");
    assert_eq!(done.record.status, ExecutionStatus::Succeeded);
    c.log().check_all().expect("invariants");
}

#[test]
fn a_held_lease_blocks_a_second_claim() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    let WorkItemStart::Claimed(segment) = c.begin_work_item(TENANT, &id, T0).expect("begin") else {
        panic!("expected a claim");
    };
    let second = c
        .process_work_item(TENANT, &id, T0 + SECOND)
        .expect("second");
    assert!(!second.claimed);
    assert_eq!(second.record.status, ExecutionStatus::Running);
    assert_eq!(second.record.lease_expires_epoch_ms, T0 + 30 * SECOND);
    assert_eq!(second.record.version, 1);

    // After the lease expires another claim wins, and the first owner's commit loses (OCC).
    let takeover = c
        .begin_work_item(TENANT, &id, T0 + 30 * SECOND)
        .expect("takeover");
    assert!(matches!(takeover, WorkItemStart::Claimed(_)));
    let stale = c
        .commit_segment(segment, T0 + 31 * SECOND)
        .expect("stale commit");
    assert_eq!(stale.status, ExecutionStatus::Running);
    assert_eq!(stale.version, 2);
    c.log().check_all().expect("invariants");
}

#[test]
fn activating_a_new_release_mid_flight_keeps_the_pinned_identity() {
    let mut c = restaurant(|w| w.hosting(identity("v2")));
    let old = submit(&mut c, "order-old", T0);
    c.process_work_item(TENANT, &old, T0).expect("park");

    c.register_release(&local_release(TENANT, &identity("v2"), T0 + MINUTE))
        .expect("register v2");
    c.activate_release(TENANT, PIPELINE, "sha256:v2", T0 + MINUTE)
        .expect("activate v2");
    let new = submit(&mut c, "order-new", T0 + 2 * MINUTE);

    let interaction = interactions(&c, &old, T0).remove(0);
    c.complete_await(
        &completion(&interaction.interaction_id, "accepted"),
        T0 + 3 * MINUTE,
    )
    .expect("complete");
    let old_done = c
        .process_work_item(TENANT, &old, T0 + 4 * MINUTE)
        .expect("finish old");
    assert_eq!(old_done.record.status, ExecutionStatus::Succeeded);
    assert_eq!(old_done.record.release_version, "sha256:v1");
    assert_eq!(
        c.status(TENANT, &new, T0 + 4 * MINUTE)
            .unwrap()
            .release_version,
        "sha256:v2"
    );
    // Re-activating v1 is a new event; the latest event wins.
    c.activate_release(TENANT, PIPELINE, "sha256:v1", T0 + 5 * MINUTE)
        .expect("roll back");
    let active = c.active_release(TENANT, PIPELINE).unwrap().expect("active");
    assert_eq!(active.release_version, "sha256:v1");
    assert_eq!(
        c.store()
            .activation_events(TENANT, PIPELINE)
            .expect("events")
            .len(),
        3
    );
}

#[test]
fn re_registering_a_release_is_idempotent_and_conflicting_metadata_is_refused() {
    let mut c = restaurant(|w| w);
    let same = local_release(TENANT, &identity("v1"), T0 + MINUTE);
    assert!(c.register_release(&same).is_ok());
    let mut different = same.clone();
    different.primary_artifact_digest = "sha256:other".into();
    let err = c.register_release(&different).expect_err("conflict");
    assert_eq!(err.http_status(), 409);
    let err = c
        .activate_release(TENANT, PIPELINE, "sha256:unknown", T0)
        .expect_err("unknown release");
    assert_eq!(err.http_status(), 404);
}

#[test]
fn worker_identity_mismatch_is_a_retryable_failure() {
    // The worker only hosts v2, as after a botched deploy; TPF retries then fails.
    let mut c = restaurant(|w| w);
    *c.worker_mut() = tpf_model::ScriptedWorker::new(identity("v2"));
    let id = submit(&mut c, "order-1", T0);
    let first = c.process_work_item(TENANT, &id, T0).expect("first");
    assert_eq!(first.record.status, ExecutionStatus::WaitRetry);
    assert_eq!(
        first.record.error_code.as_deref(),
        Some("TransitionWorkerFailureException")
    );
    assert!(first
        .record
        .error_message
        .as_deref()
        .is_some_and(|m| m.starts_with("java.lang.IllegalArgumentException: ")));
    assert!(c.worker().runs().is_empty(), "no step ran");
}

#[test]
fn strict_queue_mode_refuses_the_optional_client_key_policy() {
    // TPF's defaults: OPTIONAL_CLIENT_KEY with strict startup, which queue mode refuses.
    let mut config = tpf_model::CoordinatorConfig::default();
    let refused = config.startup_check().expect_err("strict startup");
    assert!(refused
        .to_string()
        .contains("idempotency-policy must be explicitly configured"));
    config.idempotency_policy = tpf_model::coordinator::IdempotencyPolicy::ClientKeyRequired;
    assert!(config.startup_check().is_ok());
    config.idempotency_policy = tpf_model::coordinator::IdempotencyPolicy::OptionalClientKey;
    config.strict_startup = false;
    assert!(config.startup_check().is_ok());
}

#[test]
fn submit_trims_keys_takes_blank_as_absent_and_defaults_the_tenant() {
    let mut c = restaurant(|w| w);
    c.config_mut().default_tenant = TENANT.into();
    let submit = |c: &mut tpf_model::Coordinator<tpf_model::InMemoryStore>,
                  tenant: &str,
                  key: Option<&str>| {
        c.submit(
            &SubmitRequest {
                tenant_id: tenant.into(),
                pipeline_id: PIPELINE.into(),
                execution_key: key.map(str::to_owned),
                input_payload: json!({"orderId": 7}),
            },
            T0,
        )
        .expect("submit")
    };
    let a = submit(&mut c, TENANT, Some("order-7"));
    let b = submit(&mut c, "  ", Some("  order-7 \t"));
    assert!(
        b.duplicate,
        "default tenant, trimmed key: the same execution"
    );
    assert_eq!(a.execution_id, b.execution_id);
    assert_eq!(
        a.record.execution_key,
        ids::scoped_root_execution_key(PIPELINE, "sha256:v1", "order-7").unwrap()
    );
    let derived = submit(&mut c, TENANT, Some("   "));
    let none = submit(&mut c, TENANT, None);
    assert!(
        none.duplicate,
        "a blank key is no key: both derive the same one"
    );
    assert_eq!(derived.execution_id, none.execution_id);
    assert_ne!(derived.execution_id, a.execution_id);
}

#[test]
fn a_key_submitted_again_after_its_record_expired_gets_a_new_execution_id() {
    // TPF's ids are random; the model's derive from key and creation time, so a driver named
    // after the new execution never meets the name Step Functions still reserves for the old
    // one (90 days after it closed, far past TPF's 7-day TTL).
    let mut c = restaurant(|w| w);
    let first = submit(&mut c, "order-1", T0);
    let again = submit(&mut c, "order-1", T0 + 8 * 24 * 60 * MINUTE);
    assert_ne!(first, again);
    assert!(
        c.status(TENANT, &first, T0 + 8 * 24 * 60 * MINUTE).is_err(),
        "expired"
    );
}

#[test]
fn an_expired_interaction_reads_as_absent() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let interaction = interactions(&c, &id, T0).remove(0);
    // The row lives until its deadline (30 min) plus a day.
    let after_ttl = T0 + 30 * MINUTE + 24 * 60 * MINUTE + SECOND;
    let err = c
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            after_ttl,
        )
        .expect_err("expired");
    assert!(matches!(err, CoordinatorError::NotFound(_)), "{err:?}");
}
