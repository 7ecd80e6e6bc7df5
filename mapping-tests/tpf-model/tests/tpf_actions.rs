//! Action API v1 (`docs/action-api.md`) over the reference coordinator.

use crate::tpf_support;

use serde_json::Value;
use tpf_model::{ActionHost, InMemoryStore, PipelineDef, StepDef};
use tpf_support::*;
use tpf_wire::action::{due_at, rfc3339};
use tpf_wire::action::{ActionError, SweepOnceRequest};
use tpf_wire::records::ExecutionStatus;

fn host() -> ActionHost<InMemoryStore> {
    ActionHost::new(restaurant(|w| w.hosting(identity("v2"))))
}

const RESPONSE_KEYS: [&str; 11] = [
    "tenantId",
    "executionId",
    "status",
    "version",
    "currentStepIndex",
    "attempt",
    "nextDueAt",
    "await",
    "errorCode",
    "claimed",
    "driver",
];
const AWAIT_KEYS: [&str; 6] = [
    "unitId",
    "stepIndex",
    "stepName",
    "deadlineAt",
    "wakeInSeconds",
    "expiresAtEpochSeconds",
];

fn assert_every_key(response: &Value) {
    let object = response.as_object().expect("object");
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    assert_eq!(keys, RESPONSE_KEYS.to_vec());
    if let Some(view) = object["await"].as_object() {
        let keys: Vec<&str> = view.keys().map(String::as_str).collect();
        assert_eq!(keys, AWAIT_KEYS.to_vec());
    }
}

#[test]
fn process_work_item_parks_and_reports_the_await() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let response = h
        .process_work_item(TENANT, &id, &pwi("v1", "lineage:g0:i0"), T0)
        .expect("park");
    let json = response.to_json();
    assert_every_key(&json);
    assert_eq!(json["await"]["wakeInSeconds"], 1801);
    assert_eq!(json["await"]["deadlineAt"], "2026-11-30T07:10:00Z");
    assert_eq!(json["await"]["expiresAtEpochSeconds"], 1_796_109_000i64);
    // Ids are deterministic (UUIDv3), so the snapshot pins their derivation too.
    insta::assert_json_snapshot!("process_work_item_parked", json);
}

#[test]
fn every_key_is_present_in_every_status() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let parked = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0)
        .unwrap();
    assert_every_key(&parked.to_json());

    let interaction = interactions(h.coordinator(), &id, T0).remove(0);
    h.coordinator_mut()
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            T0 + MINUTE,
        )
        .unwrap();
    // Woken but the work is already done elsewhere: a repeat of an unclaimable state.
    let queued = h.response(
        &h.coordinator().status(TENANT, &id, T0 + MINUTE).unwrap(),
        false,
        T0 + MINUTE,
    );
    let queued = queued.unwrap().to_json();
    assert_every_key(&queued);
    assert_eq!(queued["status"], "QUEUED");
    assert_eq!(queued["await"], Value::Null);
    assert_eq!(queued["nextDueAt"], "2026-11-30T06:41:00Z");

    let done = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i1"), T0 + MINUTE)
        .unwrap()
        .to_json();
    assert_every_key(&done);
    assert_eq!(done["status"], "SUCCEEDED");
    assert_eq!(done["nextDueAt"], Value::Null);
    assert_eq!(done["errorCode"], Value::Null);
    assert_eq!(done["claimed"], true);
    assert_eq!(done["version"], 5);
}

#[test]
fn identity_mismatch_is_409_and_writes_nothing() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let err = h
        .process_work_item(TENANT, &id, &pwi("v2", "l:g0:i0"), T0)
        .expect_err("mismatch");
    assert!(matches!(err, ActionError::ReleaseIdentityMismatch { .. }));
    assert_eq!(err.http_status(), 409);
    assert_eq!(err.code(), "RELEASE_IDENTITY_MISMATCH");
    assert_eq!(err.error_type(), "TPF.ReleaseIdentityMismatch");
    assert_eq!(err.body()["code"], "RELEASE_IDENTITY_MISMATCH");
    assert_eq!(h.coordinator().status(TENANT, &id, T0).unwrap().version, 0);

    let missing = h
        .process_work_item(TENANT, "nope", &pwi("v1", "l:g0:i0"), T0)
        .expect_err("missing");
    assert_eq!(missing.http_status(), 404);
    assert_eq!(missing.code(), "EXECUTION_NOT_FOUND");
    assert_eq!(missing.error_type(), "TPF.ExecutionNotFound");
    assert_eq!(
        ActionError::Transport("x".into()).error_type(),
        "TPF.TransportError"
    );
    let calls = h.coordinator().log().calls();
    let last = calls.last().unwrap();
    assert_eq!(last.action, "process-work-item");
    assert_eq!(last.outcome, "EXECUTION_NOT_FOUND");
}

#[test]
fn a_repeated_idempotency_key_replays_while_the_version_is_unchanged() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let first = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0)
        .unwrap();
    let replay = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0 + SECOND)
        .unwrap();
    assert_eq!(replay, first);
    assert!(replay.claimed);
    // A new key answers with the current state, unclaimed.
    let fresh = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i1"), T0 + SECOND)
        .unwrap();
    assert!(!fresh.claimed);
    assert_eq!(fresh.version, first.version);
    // Once the record moves on, the old key no longer replays.
    let interaction = interactions(h.coordinator(), &id, T0).remove(0);
    h.coordinator_mut()
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            T0 + MINUTE,
        )
        .unwrap();
    let moved = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0 + MINUTE)
        .unwrap();
    assert_eq!(moved.status, ExecutionStatus::Succeeded);
    let replayed: Vec<bool> = h
        .coordinator()
        .log()
        .calls()
        .iter()
        .filter(|c| c.action == "process-work-item")
        .map(|c| c.replayed)
        .collect();
    assert_eq!(replayed, vec![false, true, false, false]);
    h.coordinator().log().check_all().unwrap();
}

#[test]
fn process_work_item_past_the_deadline_applies_the_await_timeout() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let parked = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0)
        .unwrap();
    // The driver wakes after wakeInSeconds.
    let wake = T0 + parked.await_.as_ref().unwrap().wake_in_seconds * SECOND;
    let before = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i1"), T0 + 29 * MINUTE)
        .unwrap();
    assert_eq!(before.status, ExecutionStatus::WaitingExternal);
    assert_eq!(before.await_.as_ref().unwrap().wake_in_seconds, 61);
    let after = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i2"), wake)
        .unwrap();
    assert_eq!(after.status, ExecutionStatus::Failed);
    assert_eq!(after.error_code.as_deref(), Some("AWAIT_TIMEOUT"));
    assert!(!after.claimed);
    assert!(after.await_.is_none());
    assert_eq!(h.coordinator().log().count(&id, "await-timeout"), 1);
    // Nothing left for the sweep.
    let swept = h
        .sweep_once(
            &SweepOnceRequest {
                limit: 10,
                pipeline_id: None,
                contract_version: None,
                release_version: None,
                idempotency_key: None,
            },
            wake,
        )
        .unwrap();
    assert!(swept.timed_out_awaits.is_empty());
}

#[test]
fn wake_in_seconds_is_clamped_and_defaults_to_a_day() {
    let pipeline = PipelineDef::new(vec![
        StepDef::await_scalar("Await Long", 3 * 24 * 60 * MINUTE),
        StepDef::await_scalar("Await Short", 1500),
    ]);
    let mut h = ActionHost::new(coordinator_with(pipeline, |w| w));
    let id = submit(h.coordinator_mut(), "k", T0);
    let long = h
        .process_work_item(TENANT, &id, &pwi("v1", "a"), T0)
        .unwrap();
    assert_eq!(long.await_.as_ref().unwrap().wake_in_seconds, 86_400);
    assert_eq!(
        long.await_.as_ref().unwrap().step_name.as_deref(),
        Some("Await Long")
    );

    assert_eq!(
        long.await_.as_ref().unwrap().expires_at_epoch_seconds,
        (T0 + 3 * 24 * 60 * MINUTE) / 1000 + 86_400,
        "the interaction's TTL: deadline + 1 day"
    );

    let second = interactions(h.coordinator(), &id, T0).remove(0);
    h.coordinator_mut()
        .complete_await(&completion(&second.interaction_id, "y"), T0)
        .unwrap();
    let short = h
        .process_work_item(TENANT, &id, &pwi("v1", "c"), T0)
        .unwrap();
    // 1.5 s rounds up to 2, plus 1.
    assert_eq!(short.await_.as_ref().unwrap().wake_in_seconds, 3);
    assert_eq!(
        short.await_.as_ref().unwrap().deadline_at.as_deref(),
        Some("2026-11-30T06:40:01.500Z")
    );
}

#[test]
fn sweep_once_filters_only_the_due_list_by_identity() {
    let mut h = host();
    let parked = submit(h.coordinator_mut(), "order-parked", T0);
    h.process_work_item(TENANT, &parked, &pwi("v1", "p"), T0)
        .unwrap();
    let v1 = submit(h.coordinator_mut(), "order-v1", T0 + SECOND);
    h.coordinator_mut()
        .register_release(&tpf_model::coordinator::local_release(
            TENANT,
            &identity("v2"),
            T0,
        ))
        .unwrap();
    h.coordinator_mut()
        .activate_release(TENANT, PIPELINE, "sha256:v2", T0 + 2 * SECOND)
        .unwrap();
    let v2 = submit(h.coordinator_mut(), "order-v2", T0 + 3 * SECOND);

    let request = SweepOnceRequest {
        limit: 100,
        pipeline_id: Some(PIPELINE.into()),
        contract_version: Some("sha256:v2".into()),
        release_version: Some("sha256:v2".into()),
        idempotency_key: Some("sweeper-1".into()),
    };
    let swept = h.sweep_once(&request, T0 + 31 * MINUTE).unwrap();
    // The v1 execution's await timed out even though the filter names v2.
    assert_eq!(swept.timed_out_awaits.len(), 1);
    assert_eq!(swept.timed_out_awaits[0].execution_id, parked);
    assert_eq!(swept.due.len(), 1);
    assert_eq!(swept.due[0].execution_id, v2);
    assert_eq!(swept.due[0].release_version, "sha256:v2");
    assert_eq!(
        swept.due[0].next_due_at.as_deref(),
        Some("2026-11-30T06:40:03Z")
    );

    let unfiltered = h
        .sweep_once(
            &SweepOnceRequest {
                limit: 1,
                pipeline_id: None,
                contract_version: None,
                release_version: None,
                idempotency_key: None,
            },
            T0 + 31 * MINUTE,
        )
        .unwrap();
    assert_eq!(unfiltered.due.len(), 1);
    assert_eq!(unfiltered.due[0].execution_id, v1, "sorted by nextDue");
    let json = swept.to_json();
    assert_eq!(
        json["due"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec![
            "tenantId",
            "executionId",
            "pipelineId",
            "contractVersion",
            "releaseVersion",
            "status",
            "version",
            "nextDueAt"
        ]
    );
    assert_eq!(
        json["timedOutAwaits"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["tenantId", "executionId", "unitId"]
    );
}

#[test]
fn running_executions_report_the_lease_expiry_as_next_due() {
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);
    let _segment = h
        .coordinator_mut()
        .begin_work_item(TENANT, &id, T0)
        .unwrap();
    let leased = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0 + SECOND)
        .unwrap();
    assert!(!leased.claimed);
    assert_eq!(leased.status, ExecutionStatus::Running);
    assert_eq!(leased.next_due_at.as_deref(), Some("2026-11-30T06:40:30Z"));
}

#[test]
fn rfc3339_uses_utc_z_and_whole_seconds_when_possible() {
    assert_eq!(rfc3339(T0).as_deref(), Some("2026-11-30T06:40:00Z"));
    assert_eq!(
        rfc3339(T0 + 250).as_deref(),
        Some("2026-11-30T06:40:00.250Z")
    );
}

/// moto's `IsTimestamp` refuses fractional seconds (found by the end-to-end retry test), so
/// `nextDueAt` is whole seconds, and rounded up so that the driver never calls early.
#[test]
fn next_due_at_is_whole_seconds_rounded_up() {
    assert_eq!(due_at(T0).as_deref(), Some("2026-11-30T06:40:00Z"));
    assert_eq!(due_at(T0 + 1).as_deref(), Some("2026-11-30T06:40:01Z"));
    assert_eq!(due_at(T0 + 999).as_deref(), Some("2026-11-30T06:40:01Z"));
    assert_eq!(due_at(T0 + 1000).as_deref(), Some("2026-11-30T06:40:01Z"));
    assert_eq!(due_at(-1).as_deref(), Some("1970-01-01T00:00:00Z"));
}

#[test]
fn requests_parse_from_the_documented_json() {
    let request: tpf_wire::action::ProcessWorkItemRequest =
        serde_json::from_value(serde_json::json!({
            "pipelineId": "org.pipelineframework.restaurantapproval",
            "contractVersion": "sha256:d734",
            "releaseVersion": "sha256:d734",
            "idempotencyKey": "6f1c:g0:i3",
            "driver": {
                "executionArn": "arn:aws:states:eu-west-1:000000000000:execution:tpf-driver:6f1c",
                "lineage": "6f1c",
                "generation": 0,
                "iteration": 3
            }
        }))
        .expect("process-work-item request");
    assert_eq!(request.idempotency_key.as_deref(), Some("6f1c:g0:i3"));
    assert_eq!(request.driver.as_ref().and_then(|d| d.iteration), Some(3));
    assert_eq!(request.identity().release_version, "sha256:d734");

    let sweep: SweepOnceRequest = serde_json::from_value(serde_json::json!({
        "limit": 100, "pipelineId": "p", "contractVersion": "c", "releaseVersion": "r",
        "idempotencyKey": "sweeper"
    }))
    .expect("sweep-once request");
    assert_eq!(sweep.limit, 100);
    let minimal: SweepOnceRequest =
        serde_json::from_value(serde_json::json!({ "limit": 5 })).expect("minimal");
    assert_eq!(minimal.pipeline_id, None);
}

#[test]
fn a_lost_response_is_recovered_by_retrying_the_same_key() {
    use tpf_model::Fault;
    let mut h = host();
    let id = submit(h.coordinator_mut(), "order-1", T0);

    h.inject_fault(Fault::LostRequest);
    let err = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0)
        .expect_err("request lost");
    assert_eq!(err.error_type(), "TPF.TransportError");
    assert_eq!(
        h.coordinator().status(TENANT, &id, T0).unwrap().version,
        0,
        "nothing ran"
    );

    h.inject_fault(Fault::LostResponse);
    let err = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0 + SECOND)
        .expect_err("response lost");
    assert_eq!(err.http_status(), 503);
    assert_eq!(
        h.coordinator().status(TENANT, &id, T0).unwrap().status,
        ExecutionStatus::WaitingExternal,
        "the commit happened"
    );

    // The driver's transport retry carries the same key and gets the recorded outcome.
    let retried = h
        .process_work_item(TENANT, &id, &pwi("v1", "l:g0:i0"), T0 + 2 * SECOND)
        .unwrap();
    assert!(retried.claimed);
    assert_eq!(retried.status, ExecutionStatus::WaitingExternal);
    assert_eq!(h.coordinator().log().count(&id, "park"), 1);
    h.coordinator().log().check_all().unwrap();
}
