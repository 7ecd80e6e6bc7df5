//! TPF's conformance scenarios that the wake-up and reconciler decide, each named for TPF's
//! scenario id, run over the in-memory host in `host/`: the decisions read it through
//! `HostView` and the runner performs their effects as an adapter does. Where the provider's
//! classification matters, a scenario runs on both backends' (`ENGINES`).

use crate::host;

use host::*;
use tpf_sfn_wakeup::provider::{durable_event as ev, DriverState};
use tpf_sfn_wakeup::reconcile::{Missing, Quiet, Reconcile};
use tpf_sfn_wakeup::wake::RetryReason;
use tpf_wire::gateway::binding::{attr, DeliveryOutcome};
use tpf_wire::gateway::names::{
    binding_partition_key, durable_execution_name, generation_sort_key,
};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{AwaitIdentity, CallbackSignal, Mapper};
use tpf_wire::records::{interaction_attr, AttrValue, ExecutionStatus, Item};

fn identity(generation: i64) -> AwaitIdentity {
    AwaitIdentity::new(Some(T), Some(E), Some(I), Some(C), generation).unwrap()
}

/// The one signal generation `g`'s driver may receive, read back as TPF's driver reads it.
fn assert_signalled(w: &World, generation: i64) {
    let got = &w.drivers[&arn(generation)].received;
    assert_eq!(got.len(), 1, "generation {generation} received {got:?}");
    let signal = CallbackSignal::read(&serde_json::from_str(&got[0]).unwrap(), Mapper::Caller);
    assert_eq!(
        signal.unwrap(),
        CallbackSignal::new(&identity(generation), Some("COMPLETED")).unwrap()
    );
    assert_eq!(
        got[0],
        format!(
            r#"{{"tenantId":"{T}","executionId":"{E}","interactionId":"{I}","correlationId":"{C}","generation":{generation},"admittedStatus":"COMPLETED"}}"#
        )
    );
}

/// The replacement TPF's host starts: generation + 1, the execution id as the key and resume
/// id, `{}`, the semantic checkpoint's release, named from (tenant, execution id, generation).
fn assert_replacement(input: &ExecutionInput, generation: i64, release: &str) {
    assert_eq!(input.generation, generation);
    assert_eq!(input.idempotency_key, E);
    assert_eq!(input.resume_execution_id.as_deref(), Some(E));
    assert_eq!(input.input_json, "{}");
    assert_eq!(input.release_version, release);
    assert_eq!(
        input.durable_execution_name(),
        durable_execution_name(Some(T), Some(E), generation).unwrap()
    );
}

#[test]
fn tpf_09_binding_committed_before_submitter_checkpoint() {
    // The registration is written, and the submitter retries it before its checkpoint: the
    // row is identical, and the stream may carry its record more than once.
    let (mut w, registered) = World::parked();
    let completed = w.complete();
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    for _ in 0..2 {
        assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
    }
    assert_eq!(w.bound_generations(), [1]);
    assert_eq!(w.sends, 1);
    assert_eq!(w.drivers[&arn(1)].received.len(), 1);
}

#[test]
fn tpf_10_completion_before_binding() {
    let mut w = World::awaiting("WAITING");
    // TPF admits the completion before the driver registered: nothing to bind to yet.
    let completed = w.complete();
    assert_eq!(
        w.on_record(Some(&completed)),
        Outcome::Retry(RetryReason::RegistrationMissing)
    );
    assert!(w.bound_generations().is_empty());
    // The registration's own stream record repairs the window: it binds and wakes.
    let registered = w.park(1);
    assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
    assert_eq!(w.bound_generations(), [1]);
    assert_signalled(&w, 1);
    assert_eq!(
        w.delivered_outcome(1).as_deref(),
        Some(DeliveryOutcome::CallbackAccepted.as_str())
    );
    // The stream retries the completion: identical binding, delivered, acknowledged.
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_eq!(w.sends, 1);
}

/// Our deviation from TPF's wake-up (docs/runtime.md): concurrent awaits of one execution (an
/// itemized await). Generation 1 was woken by the first item and handed over; generation 2's
/// registration must bind the item still open and leave the delivered one alone. TPF's rule
/// binds the first await listed, the delivered item, and signals generation 2 at once, which
/// then finds TPF still waiting and hands over again: a second send here.
#[test]
fn concurrent_awaits_a_registration_never_rewakes_a_delivered_item() {
    let (mut w, _) = World::parked();
    let completed = w.complete();
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_signalled(&w, 1);
    // The second item is still open; the delivered one is listed first, as TPF lists them.
    let mut second = checkpoint("WAITING");
    second.interaction_id = "interaction-b".into();
    w.checkpoints.push(second);
    let registered = w.park(2);
    assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
    assert_eq!(
        w.sends, 1,
        "generation 2 was woken by an item already delivered"
    );
    assert!(w.drivers[&arn(2)].received.is_empty());
    // The delivered item keeps generation 1's binding only; the open one is bound to 2.
    assert_eq!(w.bound_generations(), [1]);
    let key = (
        binding_partition_key(T, "interaction-b"),
        generation_sort_key(2).unwrap(),
    );
    assert!(
        w.table.contains_key(&key),
        "the open item is not bound to generation 2"
    );
    // Its completion wakes generation 2 once.
    w.checkpoints[1].status = "COMPLETED".into();
    let mut completed_b = await_image("COMPLETED");
    completed_b.insert(
        interaction_attr::INTERACTION_ID.into(),
        AttrValue::S("interaction-b".into()),
    );
    assert_eq!(w.on_record(Some(&completed_b)), Outcome::Ack);
    assert_eq!(w.sends, 2);
    assert_eq!(w.drivers[&arn(2)].received.len(), 1);
    // The registration's record again (a stream retry): nothing more.
    assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
    assert_eq!(w.sends, 2);
}

#[test]
fn tpf_11_completion_after_binding() {
    // Registration first: the waiting interaction is bound, nothing wakes.
    let (mut w, _) = World::parked();
    let completed = w.complete();
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_signalled(&w, 1);
}

#[test]
fn tpf_12_duplicate_stream_delivery() {
    let (mut w, registered) = World::parked();
    let completed = w.complete();
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    // The batch of TPF's scenario: a valid BINDING image (already delivered) and a BINDING
    // with only `record_type`; then the completion and the registration again.
    let binding_image =
        w.table[&(format!("{T}#{I}"), "GEN#00000000000000000001".to_owned())].clone();
    let mut bare = Item::new();
    bare.insert(attr::RECORD_TYPE.into(), AttrValue::S("BINDING".into()));
    for image in [&binding_image, &bare, &completed, &registered] {
        assert_eq!(w.on_record(Some(image)), Outcome::Ack);
    }
    // No second signal: delivery evidence stops the replays.
    assert_eq!(w.sends, 1);
    assert_signalled(&w, 1);
}

#[test]
fn tpf_13_callback_accepted_before_api_response_loss() {
    for engine in ENGINES {
        tpf_13_callback_accepted_before_api_response_loss_on(engine);
    }
}

fn tpf_13_callback_accepted_before_api_response_loss_on(engine: Engine) {
    let (mut w, _) = World::parked();
    w.engine = engine;
    // The provider accepts the signal, and its answer is lost: the record is retried.
    let completed = w.complete_under(Fault::LoseAnswer);
    // The retry sends again; the callback is gone, and the history shows it succeeded.
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_eq!(
        w.delivered_outcome(1).as_deref(),
        Some(DeliveryOutcome::ProviderStateSucceeded.as_str())
    );
    assert_signalled(&w, 1);
    assert!(
        w.started.is_empty(),
        "a delivered callback starts no generation"
    );
}

#[test]
fn tpf_14_closed_callback_next_generation() {
    for engine in ENGINES {
        tpf_14_closed_callback_next_generation_on(engine);
    }
}

fn tpf_14_closed_callback_next_generation_on(engine: Engine) {
    let (mut w, _) = World::parked();
    w.engine = engine;
    // The callback closes (times out) before TPF admits the completion.
    w.end_driver(1, ev::CALLBACK_TIMED_OUT);
    let completed = w.complete();
    // Our deviation: while the driver still runs, the closed callback is open to the
    // wake-up, which retries rather than start a generation beside it.
    assert_eq!(
        w.on_record(Some(&completed)),
        Outcome::Retry(RetryReason::ProviderUnsettled)
    );
    assert!(
        w.started.is_empty(),
        "no generation beside a running driver"
    );
    // The driver then fails: the retried record starts generation 2, and the reconciler's
    // replacement is the same execution name.
    w.end_driver(1, ev::EXECUTION_FAILED);
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_eq!(w.started.len(), 1);
    assert_replacement(&w.started[0], 2, "r-semantic");
    assert_eq!(w.delivered_outcome(1), None);
    let d = w.on_status_change(&arn(1), DriverState::Ended);
    assert!(
        matches!(d, Reconcile::Replace { bind: Some(_), .. }),
        "{d:?}"
    );
    assert_eq!(w.started.len(), 1);
    // Generation 2 parks: its registration binds generation 2 and wakes it.
    let registered = w.park(2);
    assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
    assert_eq!(w.bound_generations(), [1, 2]);
    assert_signalled(&w, 2);
    assert_eq!(
        w.delivered_outcome(2).as_deref(),
        Some(DeliveryOutcome::CallbackAccepted.as_str())
    );
}

#[test]
fn tpf_15_old_and_replacement_generations_race() {
    let (mut w, g1) = World::parked();
    // Generation 2 starts with the same execution and binds the interaction too.
    let g2 = w.park(2);
    assert_eq!(w.on_record(Some(&g2)), Outcome::Ack);
    assert_eq!(w.bound_generations(), [1, 2]);
    let completed = w.complete();
    // The completion binds to the newest registration and wakes generation 2 only.
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_signalled(&w, 2);
    // A wake of generation 1 (its registration's record replayed) is fenced off.
    assert_eq!(w.on_record(Some(&g1)), Outcome::Ack);
    assert_eq!(w.wake(&identity(1)), Outcome::Ack);
    assert!(w.drivers[&arn(1)].received.is_empty());
    assert_eq!(w.sends, 1);
}

#[test]
fn tpf_16_stopped_execution_reconstructs() {
    for engine in ENGINES {
        tpf_16_stopped_execution_reconstructs_on(engine);
    }
}

fn tpf_16_stopped_execution_reconstructs_on(engine: Engine) {
    let (mut w, _) = World::parked();
    w.engine = engine;
    // The parked driver is stopped; its status change reaches the reconciler.
    w.end_driver(1, ev::EXECUTION_STOPPED);
    let d = w.on_status_change(&arn(1), DriverState::Ended);
    let Reconcile::Replace {
        bind: Some(bound),
        start,
    } = d
    else {
        panic!("{d:?}")
    };
    // TPF binds the first await to the ended generation, and starts the next from TPF state.
    assert_eq!(bound.await_identity, identity(1));
    assert_replacement(&start, 2, "r-semantic");
    // The completion arrives while generation 2 is not parked yet: the stopped driver's
    // callback is gone and closed, which asks for the same replacement (one execution).
    let completed = w.complete();
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_eq!(w.started.len(), 1);
    let g2 = w.park(2);
    assert_eq!(w.on_record(Some(&g2)), Outcome::Ack);
    assert_signalled(&w, 2);
    assert!(w.drivers[&arn(1)].received.is_empty());
}

#[test]
fn tpf_18_stream_failure_reaches_retained_failure_records() {
    // TPF's production processor acknowledges a malformed binding-table row (TPF's proof
    // handler throws instead, which is what its scenario observes); so does this one.
    let mut w = World::awaiting("COMPLETED");
    let mut malformed = registration_image_without(attr::PROVIDER_CALLBACK_ID);
    assert_eq!(w.on_record(Some(&malformed)), Outcome::Ack);
    malformed = registration_image_without(attr::GENERATION);
    assert_eq!(w.on_record(Some(&malformed)), Outcome::Ack);
    let mut zero = registration(1).to_item();
    zero.insert(attr::GENERATION.into(), AttrValue::N("0".into()));
    assert_eq!(w.on_record(Some(&zero)), Outcome::Ack);
    assert!(w.bound_generations().is_empty());
    assert_eq!(w.on_record(None), Outcome::Ack);
}

fn registration_image_without(name: &str) -> Item {
    let mut item = registration(1).to_item();
    item.remove(name);
    item
}

#[test]
fn tpf_20_throttled_callback_retried() {
    let (mut w, _) = World::parked();
    let completed = w.complete_under(Fault::Throttle);
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_signalled(&w, 1);
    assert_eq!(
        w.delivered_outcome(1).as_deref(),
        Some(DeliveryOutcome::CallbackAccepted.as_str())
    );
}

/// A status change of a driver that runs or succeeded changes nothing.
#[test]
fn reconcile_leaves_running_and_succeeded_drivers() {
    let mut w = World::awaiting("WAITING");
    w.park(1);
    assert_eq!(
        w.on_status_change(&arn(1), DriverState::Running),
        Reconcile::Nothing(Quiet::DriverRunning)
    );
    assert_eq!(
        w.on_status_change(&arn(1), DriverState::Succeeded),
        Reconcile::Nothing(Quiet::DriverSucceeded)
    );
    assert!(w.started.is_empty() && w.bound_generations().is_empty());
}

/// TPF's later reconciler throws on a missing piece so the event is retried; its first one
/// dropped the event. Each missing piece here is a retry.
#[test]
fn reconcile_retries_what_is_not_visible_yet() {
    let mut w = World::awaiting("WAITING");
    assert_eq!(
        w.on_status_change(&arn(1), DriverState::Ended),
        Reconcile::Retry(Missing::Registration)
    );
    w.park(1);
    w.checkpoints.clear();
    assert_eq!(
        w.on_status_change(&arn(1), DriverState::NotFound),
        Reconcile::Retry(Missing::Await)
    );
    assert!(w.started.is_empty());
}

/// Beyond TPF's host: a driver that ended while its execution was queued, running or waiting
/// to retry gets its next generation, under the release it ran, with nothing to bind.
#[test]
fn reconcile_replaces_a_non_await_driver() {
    for status in [
        ExecutionStatus::Queued,
        ExecutionStatus::Running,
        ExecutionStatus::WaitRetry,
    ] {
        let mut w = World::awaiting("WAITING");
        w.park(1);
        w.statuses.insert(E.into(), status);
        let d = w.on_status_change(&arn(1), DriverState::Ended);
        let Reconcile::Replace { bind: None, start } = d else {
            panic!("{status}: {d:?}")
        };
        assert_eq!(start.generation, 2);
        assert_eq!(start.release_version, "r1", "the registration's release");
        assert!(w.bound_generations().is_empty());
    }
    for status in [
        ExecutionStatus::Succeeded,
        ExecutionStatus::Failed,
        ExecutionStatus::Dlq,
        ExecutionStatus::RemoteOutcomeUnknown,
    ] {
        let mut w = World::awaiting("WAITING");
        w.park(1);
        w.statuses.insert(E.into(), status);
        assert_eq!(
            w.on_status_change(&arn(1), DriverState::Ended),
            Reconcile::Nothing(Quiet::ExecutionSettled(status))
        );
        assert!(w.started.is_empty());
    }
}

/// Beyond TPF's host: recovery before the first registration, from the driver's own input.
#[test]
fn reconcile_recovers_a_driver_that_never_registered() {
    let release = ReleaseIdentity {
        pipeline_id: Some("pipe"),
        contract_version: Some("c1"),
        release_version: Some("r1"),
    };
    // Generation 1 ended after TPF admitted its SUBMIT and went WAITING_EXTERNAL.
    let mut w = World::awaiting("WAITING");
    let first =
        ExecutionInput::new(Some(T), Some(KEY), release, Some("{\"order\":1}"), None, 1).unwrap();
    w.inputs.insert(arn(1), first);
    let d = w.on_status_change(&arn(1), DriverState::Ended);
    let Reconcile::Replace { bind: None, start } = d else {
        panic!("{d:?}")
    };
    assert_replacement(&start, 2, "r-semantic");
    // Generation 2 ended before it registered, while the execution runs: generation 3.
    let mut w = World::awaiting("WAITING");
    w.statuses.insert(E.into(), ExecutionStatus::Running);
    let second = ExecutionInput::resume_execution(T, E, 1, release).unwrap();
    w.inputs.insert(arn(2), second);
    let d = w.on_status_change(&arn(2), DriverState::NotFound);
    let Reconcile::Replace { bind: None, start } = d else {
        panic!("{d:?}")
    };
    assert_eq!(
        (start.generation, start.release_version.as_str()),
        (3, "r1")
    );
}

/// A closed callback whose interaction TPF no longer shows as the binding's is not replaced
/// (TPF's `startReplacement` answers false), and the record is retried.
#[test]
fn a_replacement_needs_the_bindings_semantic_checkpoint() {
    let (mut w, _) = World::parked();
    w.end_driver(1, ev::EXECUTION_STOPPED);
    w.statuses
        .insert(E.into(), ExecutionStatus::WaitingExternal);
    w.checkpoints.clear();
    assert_eq!(
        w.on_status_change(&arn(1), DriverState::Ended),
        Reconcile::Retry(Missing::Await)
    );
    let completed = w.complete();
    let mut other = w.checkpoints[0].clone();
    other.correlation_id = "another-correlation".into();
    w.checkpoints = vec![other];
    // The record's own identity no longer matches TPF's checkpoint: acknowledged, no send.
    assert_eq!(w.on_record(Some(&completed)), Outcome::Ack);
    assert_eq!(w.sends, 0);
    assert!(w.started.is_empty());
}
