//! TPF's action gateway served by the reference model: the requests a TPF coordinator driver
//! sends, built with TPF's factories and sent as JSON, answered by the model's coordinator
//! through TPF's control-plane calls, with the callback-binding table in memory.

use crate::tpf_support;

use serde_json::json;
use tpf_model::coordinator::LocalControlPlane;
use tpf_model::gateway::{BindingStore, Gateway, InMemoryBindings};
use tpf_model::{InMemoryStore, StepOutcome};
use tpf_support::*;
use tpf_wire::gateway::names::durable_execution_name;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, AwaitIdentity, DriverCheckpoint, ExecutionCheckpoint,
    FunctionError, Operation, ProviderCallback,
};

type ModelGateway = Gateway<LocalControlPlane<InMemoryStore>, InMemoryBindings>;

fn gateway() -> ModelGateway {
    Gateway::new(
        LocalControlPlane::new(restaurant(|w| w)),
        InMemoryBindings::new(),
    )
}

/// One call as TPF's caller makes it: the request's JSON in, the response read back as TPF's
/// caller reads it.
fn call(
    g: &mut ModelGateway,
    request: &ActionRequest,
    now: i64,
) -> Result<ActionResponse, FunctionError> {
    let text = g.serve(&request.to_json(), now)?;
    Ok(ActionResponse::read(&text).expect("TPF's caller reads the gateway's response"))
}

fn ok(g: &mut ModelGateway, request: &ActionRequest, now: i64) -> ActionResponse {
    call(g, request, now).unwrap_or_else(|e| panic!("{:?} failed: {e:?}", request.operation))
}

fn input(key: &str) -> ExecutionInput {
    ExecutionInput::new(
        Some(TENANT),
        Some(key),
        ReleaseIdentity {
            pipeline_id: Some(PIPELINE),
            contract_version: Some("sha256:v1"),
            release_version: Some("sha256:v1"),
        },
        Some(r#"{"orderId":"o-42","total":12.50}"#),
        None,
        1,
    )
    .unwrap()
}

const ARN: &str =
    "arn:aws:lambda:us-east-1:000000000000:function:coordinator:1/durable-execution/x/y";

fn provider<'a>(name: &'a str, callback: &'a str) -> ProviderCallback<'a> {
    ProviderCallback {
        execution_name: Some(name),
        execution_arn: Some(ARN),
        callback_id: Some(callback),
    }
}

#[test]
fn a_driver_generation_runs_submit_status_register_bind_and_result_against_the_model() {
    let mut g = gateway();
    let first = input("order-42:submit");

    // SUBMIT: the checkpoint is the request's release and the execution TPF created.
    let submitted = ok(&mut g, &ActionRequest::submit(&first).unwrap(), T0);
    let checkpoint = submitted.checkpoint.clone().expect("a checkpoint");
    assert!(!submitted.duplicate);
    assert_eq!(
        (
            checkpoint.tenant_id.as_str(),
            checkpoint.release_version.as_str()
        ),
        (TENANT, "sha256:v1")
    );
    let again = ok(&mut g, &ActionRequest::submit(&first).unwrap(), T0 + 1);
    assert!(again.duplicate);
    assert_eq!(again.checkpoint.as_ref(), Some(&checkpoint));

    let driver = DriverCheckpoint::new(checkpoint.clone(), 1).unwrap();
    let status = |g: &mut ModelGateway, now| {
        ok(
            g,
            &ActionRequest::for_execution(Operation::Status, &driver).unwrap(),
            now,
        )
        .execution_status
        .expect("a status")
    };
    // Nothing runs inside a gateway call: the work function has not claimed it yet.
    assert_eq!(status(&mut g, T0 + 2), "QUEUED");
    let worked = g.plane.run_work(T0 + 3).unwrap();
    assert_eq!(worked.len(), 1, "the duplicate submit enqueued nothing");
    assert_eq!(status(&mut g, T0 + 4), "WAITING_EXTERNAL");

    // RESULT before the end is TPF's IllegalStateException.
    let early = call(
        &mut g,
        &ActionRequest::for_execution(Operation::Result, &driver).unwrap(),
        T0 + 5,
    )
    .unwrap_err();
    assert_eq!(early.error_type, "java.lang.IllegalStateException");
    assert_eq!(
        early.error_message,
        "Execution is not complete yet: WAITING_EXTERNAL"
    );

    // REGISTER_CALLBACK: written once, identical again, another callback conflicts.
    let name = durable_execution_name(Some(TENANT), Some("order-42:submit"), 1).unwrap();
    let register = ActionRequest::register(&driver, provider(&name, "cb-0")).unwrap();
    assert!(ok(&mut g, &register, T0 + 6).binding_created);
    assert!(!ok(&mut g, &register, T0 + 7).binding_created);
    let stolen = ActionRequest::register(&driver, provider(&name, "cb-other")).unwrap();
    let conflict = call(&mut g, &stolen, T0 + 8).unwrap_err();
    assert_eq!(
        conflict.error_message,
        "callback registration generation is already owned by another callback"
    );

    // QUERY_PENDING_AWAIT names the open interaction with the request's generation.
    let pending = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::QueryPendingAwait, &driver).unwrap(),
        T0 + 9,
    );
    let identity: AwaitIdentity = pending.await_identity.expect("a pending await");
    assert_eq!(
        (identity.execution_id.as_str(), identity.generation),
        (checkpoint.execution_id.as_str(), 1)
    );

    // BIND_CALLBACK binds the interaction to the registration's callback.
    let bind = ActionRequest::bind(&identity, provider(&name, "cb-0")).unwrap();
    assert!(ok(&mut g, &bind, T0 + 10).binding_created);
    assert!(!ok(&mut g, &bind, T0 + 11).binding_created);
    let bound = g
        .bindings
        .find_latest_binding(TENANT, &identity.interaction_id)
        .unwrap()
        .expect("a binding row");
    assert_eq!(bound.provider.callback_id, "cb-0");
    let mut rows: Vec<String> = g.bindings.keys().into_iter().map(|(_, _, t)| t).collect();
    rows.sort_unstable();
    assert_eq!(
        rows,
        ["BINDING", "REGISTRATION"],
        "one row of each, nothing else"
    );

    // READ_EXECUTION_AWAITS and READ_AWAIT_CHECKPOINT project the interaction with its release.
    let awaits = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::ReadExecutionAwaits, &driver).unwrap(),
        T0 + 12,
    )
    .await_checkpoints;
    assert_eq!(awaits.len(), 1);
    assert_eq!(
        (
            awaits[0].status.as_str(),
            awaits[0].step_id.as_str(),
            awaits[0].release_version.as_str()
        ),
        (
            "WAITING",
            "ProcessAwaitRestaurantDecisionService",
            "sha256:v1"
        )
    );

    // The decision arrives through TPF's await API; a sweep enqueues the released parent.
    g.plane
        .coordinator
        .complete_await(
            &completion(&identity.interaction_id, "accepted"),
            T0 + MINUTE,
        )
        .unwrap();
    let read = ok(
        &mut g,
        &ActionRequest::await_checkpoint(&identity).unwrap(),
        T0 + MINUTE + 1,
    );
    assert_eq!(
        read.await_checkpoint.expect("a checkpoint").status,
        "COMPLETED"
    );
    let swept = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::Sweep, &driver).unwrap(),
        T0 + MINUTE + 2,
    );
    assert_eq!(swept.execution_status.as_deref(), Some("SWEEPED"));
    g.plane.run_work(T0 + MINUTE + 3).unwrap();
    assert_eq!(status(&mut g, T0 + MINUTE + 4), "SUCCEEDED");
    let result = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::Result, &driver).unwrap(),
        T0 + MINUTE + 5,
    );
    let payload: serde_json::Value =
        serde_json::from_str(result.result_json.as_deref().expect("a result")).unwrap();
    assert!(
        payload.is_object(),
        "a SINGLE result is the item: {payload}"
    );
}

#[test]
fn unknown_executions_missing_registrations_and_bad_requests_answer_tpfs_errors() {
    let mut g = gateway();
    let ghost = DriverCheckpoint::new(
        ExecutionCheckpoint::new(
            Some(TENANT),
            Some("no-such-execution"),
            Some(PIPELINE),
            Some("sha256:v1"),
            Some("sha256:v1"),
        )
        .unwrap(),
        1,
    )
    .unwrap();
    let e = call(
        &mut g,
        &ActionRequest::for_execution(Operation::Status, &ghost).unwrap(),
        T0,
    )
    .unwrap_err();
    assert_eq!(
        (e.error_type.as_str(), e.error_message.as_str()),
        (
            "jakarta.ws.rs.NotFoundException",
            "Execution not found: no-such-execution"
        )
    );
    // An unknown execution has no awaits: an empty list, not an error.
    let awaits = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::ReadExecutionAwaits, &ghost).unwrap(),
        T0,
    );
    assert!(awaits.await_checkpoints.is_empty());

    let identity = AwaitIdentity::new(
        Some(TENANT),
        Some("no-such-execution"),
        Some("i"),
        Some("c"),
        1,
    )
    .unwrap();
    let e = call(
        &mut g,
        &ActionRequest::bind(&identity, provider("tpf-x", "cb")).unwrap(),
        T0,
    )
    .unwrap_err();
    assert_eq!(e.error_message, "callback registration is not available");
    let e = call(
        &mut g,
        &ActionRequest::await_checkpoint(&identity).unwrap(),
        T0,
    )
    .unwrap_err();
    assert_eq!(
        e.error_message,
        "Await semantic checkpoint is not available"
    );

    // A release that is not the active one is refused, and nothing is enqueued.
    let mut pinned = input("k-2");
    pinned.release_version = "sha256:v9".to_owned();
    let e = call(&mut g, &ActionRequest::submit(&pinned).unwrap(), T0).unwrap_err();
    assert_eq!(e.error_type, "java.lang.IllegalStateException");
    assert_eq!(g.plane.queued().count(), 0);

    // Record rules and operation rules, as the gateway's Lambda answers them.
    let e = g
        .serve(
            r#"{"operation":"STATUS","tenantId":"t","generation":0}"#,
            T0,
        )
        .unwrap_err();
    assert_eq!(
        e.error_type,
        "com.fasterxml.jackson.databind.exc.ValueInstantiationException"
    );
    let e = g
        .serve(
            r#"{"operation":"STATUS","tenantId":"t","generation":1}"#,
            T0,
        )
        .unwrap_err();
    assert_eq!(
        (e.error_type.as_str(), e.error_message.as_str()),
        (
            "java.lang.IllegalArgumentException",
            "executionId is required"
        )
    );
    let e = g
        .serve(
            &json!({"operation":"REDRIVE","tenantId":"t","executionId":"x","generation":1})
                .to_string(),
            T0,
        )
        .unwrap_err();
    assert_eq!(e.error_message, "expectedVersion is required");
}

#[test]
fn a_failed_execution_is_redriven_to_queued_and_enqueued_for_the_work_function() {
    let mut g = Gateway::new(
        LocalControlPlane::new(restaurant(|w| {
            w.script(
                0,
                vec![StepOutcome::FailNonRetryable(
                    "org.example.BadOrderException".into(),
                )],
            )
        })),
        InMemoryBindings::new(),
    );
    let checkpoint = ok(&mut g, &ActionRequest::submit(&input("k-3")).unwrap(), T0)
        .checkpoint
        .unwrap();
    let driver = DriverCheckpoint::new(checkpoint, 1).unwrap();
    g.plane.run_work(T0 + 1).unwrap();
    let status = ok(
        &mut g,
        &ActionRequest::for_execution(Operation::Status, &driver).unwrap(),
        T0 + 2,
    )
    .execution_status
    .unwrap();
    assert_eq!(status, "FAILED");
    let e = call(
        &mut g,
        &ActionRequest::for_execution(Operation::Result, &driver).unwrap(),
        T0 + 2,
    )
    .unwrap_err();
    assert_eq!(
        e.error_message,
        "Execution finished without a successful result: FAILED"
    );
    let version = g
        .plane
        .coordinator
        .status(TENANT, &driver.execution.execution_id, T0 + 2)
        .unwrap()
        .version;

    let stale = ActionRequest::redrive(&driver, version + 5, Some("operator retry")).unwrap();
    let e = call(&mut g, &stale, T0 + 3).unwrap_err();
    assert_eq!(e.error_type, "java.lang.IllegalStateException");
    assert!(
        e.error_message.contains("version mismatch"),
        "{}",
        e.error_message
    );
    assert_eq!(g.plane.queued().count(), 0);

    let redrive = ActionRequest::redrive(&driver, version, Some("operator retry")).unwrap();
    let answer = ok(&mut g, &redrive, T0 + 4);
    assert_eq!(answer.execution_status.as_deref(), Some("QUEUED"));
    assert_eq!(g.plane.queued().count(), 1);
}

#[test]
fn a_replacement_generation_registers_and_binds_under_its_own_keys() {
    let mut g = gateway();
    let first = input("order-7:submit");
    let checkpoint = ok(&mut g, &ActionRequest::submit(&first).unwrap(), T0)
        .checkpoint
        .unwrap();
    g.plane.run_work(T0 + 1).unwrap();
    let gen1 = DriverCheckpoint::new(checkpoint.clone(), 1).unwrap();
    let name1 = durable_execution_name(Some(TENANT), Some("order-7:submit"), 1).unwrap();
    assert!(
        ok(
            &mut g,
            &ActionRequest::register(&gen1, provider(&name1, "cb-1")).unwrap(),
            T0 + 2
        )
        .binding_created
    );
    let pending = |g: &mut ModelGateway, driver: &DriverCheckpoint, now| {
        ok(
            g,
            &ActionRequest::for_execution(Operation::QueryPendingAwait, driver).unwrap(),
            now,
        )
        .await_identity
        .expect("a pending await")
    };
    let id1 = pending(&mut g, &gen1, T0 + 3);
    assert!(
        ok(
            &mut g,
            &ActionRequest::bind(&id1, provider(&name1, "cb-1")).unwrap(),
            T0 + 4
        )
        .binding_created
    );

    // Generation 1's driver is gone; TPF's host starts generation 2 from the await identity:
    // named from the execution id, resuming the same execution.
    let resume = ExecutionInput::resume(
        &id1,
        ReleaseIdentity {
            pipeline_id: Some(&checkpoint.pipeline_id),
            contract_version: Some(&checkpoint.contract_version),
            release_version: Some(&checkpoint.release_version),
        },
    )
    .unwrap();
    assert_eq!(resume.generation, 2);
    assert_eq!(
        resume.resume_execution_id.as_deref(),
        Some(checkpoint.execution_id.as_str())
    );
    let name2 = resume.durable_execution_name();
    assert_eq!(
        name2,
        durable_execution_name(Some(TENANT), Some(&checkpoint.execution_id), 2).unwrap()
    );
    let gen2 = DriverCheckpoint::new(checkpoint.clone(), resume.generation).unwrap();
    assert!(
        ok(
            &mut g,
            &ActionRequest::register(&gen2, provider(&name2, "cb-2")).unwrap(),
            T0 + 5
        )
        .binding_created
    );
    let id2 = pending(&mut g, &gen2, T0 + 6);
    assert_eq!(
        (id2.interaction_id.as_str(), id2.generation),
        (id1.interaction_id.as_str(), 2)
    );
    assert!(
        ok(
            &mut g,
            &ActionRequest::bind(&id2, provider(&name2, "cb-2")).unwrap(),
            T0 + 7
        )
        .binding_created
    );

    // The newest binding and registration are generation 2's; generation 1's rows stay.
    let latest = g
        .bindings
        .find_latest_binding(TENANT, &id1.interaction_id)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            latest.await_identity.generation,
            latest.provider.callback_id.as_str()
        ),
        (2, "cb-2")
    );
    let registration = g
        .bindings
        .find_latest_registration(TENANT, &checkpoint.execution_id)
        .unwrap()
        .unwrap();
    assert_eq!(registration.checkpoint.generation, 2);
    assert_eq!(g.bindings.keys().len(), 4);
}

/// A world that runs TPF's work function on its own clock takes the queued items off the
/// dispatch queue and delivers each when it chooses; a redelivered item's claim is refused.
#[test]
fn queued_work_is_taken_and_run_item_by_item_and_a_redelivery_changes_nothing() {
    let mut g = gateway();
    let checkpoint = ok(&mut g, &ActionRequest::submit(&input("k-4")).unwrap(), T0)
        .checkpoint
        .unwrap();
    let items = g.plane.take_queued();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].execution_id, checkpoint.execution_id);
    assert_eq!(g.plane.queued().count(), 0, "taken, not copied");
    let parked = g.plane.run_work_item(&items[0], T0 + 1).unwrap();
    assert_eq!(parked.status.to_string(), "WAITING_EXTERNAL");
    let again = g.plane.run_work_item(&items[0], T0 + 2).unwrap();
    assert_eq!(again.version, parked.version, "the claim was refused");
    let executions = g.plane.coordinator.store().scan_executions();
    let interactions = g.plane.coordinator.store().scan_interactions();
    assert_eq!(executions.len(), 1);
    assert_eq!(interactions.len(), 1);
    assert_eq!(interactions[0].execution_id, checkpoint.execution_id);
}

/// TPF's work function declines a delivered item before its claim when its executor or the
/// tenant's transition quota is saturated: nothing is claimed or written, and the item comes
/// back after the saturated delay to run then.
#[test]
fn admission_declines_without_claiming_and_the_item_runs_when_delivered_again() {
    use std::collections::BTreeMap;
    use tpf_model::coordinator::admission::{Admission, Delivered, Denial, WorkerLoad};
    use tpf_model::ExecutionStore;

    let mut g = gateway();
    g.plane
        .coordinator
        .config_mut()
        .admission
        .tenant_max_in_flight = 1;
    let submitted = ok(
        &mut g,
        &ActionRequest::submit(&input("order-admission")).unwrap(),
        T0,
    );
    let checkpoint = submitted.checkpoint.expect("SUBMIT answers a checkpoint");
    let items = g.plane.take_queued();
    assert_eq!(items.len(), 1, "SUBMIT enqueues the execution");
    let read = |g: &ModelGateway| {
        g.plane
            .coordinator
            .store()
            .get_execution(TENANT, &checkpoint.execution_id, T0)
            .unwrap()
            .unwrap()
    };
    let before = read(&g);

    let saturated = [
        WorkerLoad {
            in_flight: 64,
            ..WorkerLoad::default()
        },
        WorkerLoad {
            in_flight: 0,
            tenant_in_flight: BTreeMap::from([(TENANT.to_owned(), 1)]),
        },
    ];
    let expected = [
        Denial::WorkerSaturated,
        Denial::TenantTransitionQuotaSaturated,
    ];
    for (load, denial) in saturated.iter().zip(expected) {
        let d = g.plane.deliver_work_item(&items[0], load, T0).unwrap();
        assert_eq!(
            d,
            Delivered::Declined(Admission::Requeue {
                denial,
                delay_ms: 1_000
            })
        );
        assert_eq!(
            read(&g),
            before,
            "a declined item claims and writes nothing"
        );
    }

    let ran = g
        .plane
        .deliver_work_item(&items[0], &WorkerLoad::default(), T0 + 1_000)
        .unwrap();
    let Delivered::Ran(after) = ran else {
        panic!("admitted once the load is gone: {ran:?}")
    };
    assert!(
        after.version > before.version,
        "the admitted delivery claims and runs"
    );
}

// --- TPF's SQS transition worker: remote steps on their own queue ----------------------------

/// A submitted execution's work item, claimed by a work function whose steps run remotely: the
/// request it sent and the call waiting for the response.
fn sent(
    g: &mut ModelGateway,
    key: &str,
) -> (
    tpf_model::coordinator::remote::PendingTransition,
    tpf_model::coordinator::remote::TransitionRequest,
) {
    use tpf_model::coordinator::remote::RemoteStart;
    ok(g, &ActionRequest::submit(&input(key)).unwrap(), T0);
    let items = g.plane.take_queued();
    match g.plane.begin_remote_work_item(&items[0], T0 + 1).unwrap() {
        RemoteStart::Sent(sent) => *sent,
        RemoteStart::Done(r) => panic!("nothing sent: {r:?}"),
    }
}

#[test]
fn a_remote_transition_is_sent_run_by_the_transition_worker_and_committed_from_its_response() {
    use tpf_model::coordinator::remote::{TransitionWorkerInstance, SQS_REQUEST_TIMEOUT_MS};
    let mut g = gateway();
    let (pending, request) = sent(&mut g, "k-r1");
    assert_eq!(pending.deadline_ms, T0 + 1 + SQS_REQUEST_TIMEOUT_MS);
    assert_eq!(request.command.transition_key, pending.transition_key());
    let store = |g: &ModelGateway| g.plane.coordinator.store().scan_interactions().len();
    let status = |g: &ModelGateway| g.plane.coordinator.store().scan_executions()[0].status;
    assert_eq!(status(&g).to_string(), "RUNNING", "claimed, not run");
    assert_eq!(store(&g), 0);
    let response = g
        .plane
        .coordinator
        .run_transition_request(&mut TransitionWorkerInstance::default(), &request, T0 + 2)
        .expect("a fresh request runs");
    assert!(pending.answered_by(&response));
    assert_eq!(
        store(&g),
        1,
        "the await step writes its interaction where it runs"
    );
    assert_eq!(
        status(&g).to_string(),
        "RUNNING",
        "the worker commits nothing"
    );
    let parked = g
        .plane
        .finish_remote_work_item(pending, Some(response), T0 + 3)
        .unwrap();
    assert_eq!(parked.status.to_string(), "WAITING_EXTERNAL");
    assert_eq!(store(&g), 1);
}

#[test]
fn a_duplicate_transition_request_runs_again_on_another_instance_and_commits_once() {
    use tpf_model::coordinator::remote::TransitionWorkerInstance;
    let mut g = gateway();
    let (pending, request) = sent(&mut g, "k-r2");
    let mut warm = TransitionWorkerInstance::default();
    let first = g
        .plane
        .coordinator
        .run_transition_request(&mut warm, &request, T0 + 2);
    let runs = g.plane.coordinator.worker().runs().len();
    assert!(
        g.plane
            .coordinator
            .run_transition_request(&mut warm, &request, T0 + 3)
            .is_none(),
        "the instance that answered drops the replayed nonce"
    );
    assert_eq!(g.plane.coordinator.worker().runs().len(), runs, "unrun");
    let second = g
        .plane
        .coordinator
        .run_transition_request(&mut TransitionWorkerInstance::default(), &request, T0 + 4)
        .expect("another instance runs it again");
    assert_eq!(g.plane.coordinator.worker().runs().len(), 2 * runs);
    assert!(pending.answered_by(&second), "the same request id");
    let parked = g
        .plane
        .finish_remote_work_item(pending.clone(), first, T0 + 5)
        .unwrap();
    let again = g
        .plane
        .finish_remote_work_item(pending, Some(second), T0 + 6)
        .unwrap();
    assert_eq!(
        again.version, parked.version,
        "the claimed version commits once"
    );
    assert_eq!(g.plane.coordinator.store().scan_interactions().len(), 1);
}

#[test]
fn a_request_past_the_signature_tolerance_is_dropped_unrun() {
    use tpf_model::coordinator::remote::{TransitionWorkerInstance, SQS_SIGNATURE_TOLERANCE_MS};
    let mut g = gateway();
    let (_, request) = sent(&mut g, "k-r3");
    let late = request.timestamp_ms + SQS_SIGNATURE_TOLERANCE_MS + 1;
    let mut instance = TransitionWorkerInstance::default();
    assert!(g
        .plane
        .coordinator
        .run_transition_request(&mut instance, &request, late)
        .is_none());
    assert!(g.plane.coordinator.worker().runs().is_empty());
    assert!(g.plane.coordinator.store().scan_interactions().is_empty());
    let in_time = late - 1;
    assert!(g
        .plane
        .coordinator
        .run_transition_request(&mut instance, &request, in_time)
        .is_some());
}

#[test]
fn no_response_by_the_request_timeout_is_a_retryable_failure_not_remote_outcome_unknown() {
    use tpf_model::coordinator::remote::{TransitionResponse, TRANSITION_WORKER_FAILURE};
    let mut g = gateway();
    let (pending, _) = sent(&mut g, "k-r4");
    let other = TransitionResponse {
        request_id: "another-request".to_owned(),
        result: tpf_model::worker::TransitionResult::WaitingExternal { step_index: 2 },
    };
    assert!(
        !pending.answered_by(&other),
        "another request's response is put back"
    );
    let execution_id = pending.execution_id().to_owned();
    let deadline = pending.deadline_ms;
    let retry = g
        .plane
        .finish_remote_work_item(pending, None, deadline)
        .unwrap();
    assert_eq!(retry.status.to_string(), "WAIT_RETRY");
    assert_eq!(retry.attempt, 1);
    assert_eq!(retry.error_code.as_deref(), Some(TRANSITION_WORKER_FAILURE));
    assert_eq!(
        retry.error_message.as_deref(),
        Some(
            format!(
                "Timed out waiting for SQS transition worker response for execution {execution_id}"
            )
            .as_str()
        )
    );
}
