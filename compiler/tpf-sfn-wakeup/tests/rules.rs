//! One table per decision: every case starts from a baseline that goes all the way (deliver,
//! bind and wake, replace), and changes one fact. Each case's outcome is decided by exactly one
//! of TPF's rules, so a decision without that rule (the generation fence, delivery evidence,
//! the COMPLETED check, retry rather than retire, ...) reaches the baseline's outcome instead
//! and fails its case.

use crate::host;

use host::*;
use serde_json::json;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_sfn_wakeup::provider::{DriverState, ProviderState};
use tpf_sfn_wakeup::reconcile::{self, Missing, Quiet, Reconcile};
use tpf_sfn_wakeup::replacement::Unresolved;
use tpf_sfn_wakeup::wake::{
    self, AfterBind, Disposition, RetryReason, SendOutcome, Settle, StreamStep, WakeStep,
};
use tpf_wire::gateway::binding::{attr, DeliveryOutcome};
use tpf_wire::gateway::names::{binding_partition_key, generation_sort_key};
use tpf_wire::gateway::AwaitIdentity;
use tpf_wire::records::{interaction_attr, AttrValue, ExecutionStatus, Item};

fn identity(generation: i64) -> AwaitIdentity {
    AwaitIdentity::new(Some(T), Some(E), Some(I), Some(C), generation).unwrap()
}

/// Generation 1 parked and bound, TPF's interaction COMPLETED, nothing delivered.
fn ready() -> World {
    let (mut w, _) = World::parked();
    w.complete();
    w
}

type Mutation = fn(&mut World);

#[test]
fn wake_rules() {
    use Disposition::{Acknowledge, Retry};
    let baseline = ready();
    let Ok(WakeStep::Deliver(d)) = wake::wake(&identity(1), &baseline) else {
        panic!("the baseline delivers")
    };
    assert_eq!(d.callback_id(), callback(1));

    let cases: &[(&str, Mutation, Disposition)] = &[
        (
            "TPF has no checkpoint yet",
            |w| w.checkpoints.clear(),
            Retry(RetryReason::CheckpointMissing),
        ),
        (
            "wake only on COMPLETED",
            |w| w.checkpoints[0].status = "WAITING".into(),
            Acknowledge,
        ),
        (
            "a failed interaction wakes nothing",
            |w| w.checkpoints[0].status = "FAILED".into(),
            Acknowledge,
        ),
        (
            "the checkpoint is another correlation's",
            |w| w.checkpoints[0].correlation_id = "c2".into(),
            Acknowledge,
        ),
        (
            "the checkpoint is another execution's",
            |w| w.checkpoints[0].execution_id = "e2".into(),
            Acknowledge,
        ),
        (
            "the generation's BINDING is missing",
            |w| {
                w.table
                    .remove(&(binding_partition_key(T, I), generation_sort_key(1).unwrap()));
            },
            Retry(RetryReason::BindingMissing),
        ),
        (
            "the generation fence: a newer generation bound the interaction",
            |w| {
                let b = registration(2).bind(&identity(2)).unwrap();
                w.put(b.to_item()).unwrap();
            },
            Acknowledge,
        ),
        (
            "delivery evidence: DELIVERED#1 is there",
            |w| {
                let b = registration(1).bind(&identity(1)).unwrap();
                let item = b.delivery_item(DeliveryOutcome::CallbackAccepted.as_str(), 1, "a");
                w.put(item).unwrap();
            },
            Acknowledge,
        ),
    ];
    for (rule, mutate, want) in cases {
        let mut w = ready();
        mutate(&mut w);
        assert_eq!(
            wake::wake(&identity(1), &w).unwrap(),
            WakeStep::Done(*want),
            "{rule}"
        );
    }
}

fn stream_step(w: &World, image: &Item) -> StreamStep {
    wake::on_stream_record(Some(image), w).unwrap()
}

#[test]
fn await_row_rules() {
    let completed = await_image("COMPLETED");
    let baseline = ready();
    let StreamStep::Bind { bindings, then } = stream_step(&baseline, &completed) else {
        panic!("the baseline binds")
    };
    let [binding] = &bindings[..] else {
        panic!("{bindings:?}")
    };
    assert_eq!(binding.await_identity, identity(1));
    assert_eq!(then, AfterBind::Wake(identity(1)));

    let ack = StreamStep::Done(Disposition::Acknowledge);
    type ImageMutation = fn(&mut Item);
    let cases: &[(&str, ImageMutation, Option<AfterBind>)] = &[
        (
            "no status: a BINDING or DELIVERY row",
            |i| {
                i.remove(interaction_attr::STATUS);
            },
            None,
        ),
        (
            "a blank tenant",
            |i| {
                i.insert(
                    interaction_attr::TENANT_ID.into(),
                    AttrValue::S(" \t".into()),
                );
            },
            None,
        ),
        (
            "an interaction that is no text",
            |i| {
                i.insert(
                    interaction_attr::INTERACTION_ID.into(),
                    AttrValue::N("7".into()),
                );
            },
            None,
        ),
        (
            "no correlation",
            |i| {
                i.remove(interaction_attr::CORRELATION_ID);
            },
            None,
        ),
        (
            "not COMPLETED: bind, then acknowledge",
            |i| {
                i.insert(
                    interaction_attr::STATUS.into(),
                    AttrValue::S("DISPATCHED".into()),
                );
            },
            Some(AfterBind::Acknowledge),
        ),
    ];
    for (rule, mutate, then) in cases {
        let mut image = completed.clone();
        mutate(&mut image);
        let got = stream_step(&baseline, &image);
        match then {
            None => assert_eq!(got, ack, "{rule}"),
            Some(t) => assert!(
                matches!(&got, StreamStep::Bind { then, .. } if then == t),
                "{rule}: {got:?}"
            ),
        }
    }
    // No registration of the execution yet: retried, not acknowledged.
    let w = World::awaiting("COMPLETED");
    assert_eq!(
        stream_step(&w, &completed),
        StreamStep::Done(Disposition::Retry(RetryReason::RegistrationMissing))
    );
    // The newest registration's generation is bound.
    let mut w = ready();
    w.park(2);
    let StreamStep::Bind { bindings, .. } = stream_step(&w, &completed) else {
        panic!()
    };
    assert_eq!(bindings[0].await_identity.generation, 2);
    // No image at all, or an empty one.
    assert_eq!(wake::on_stream_record(None, &w).unwrap(), ack);
    assert_eq!(stream_step(&w, &Item::new()), ack);
}

#[test]
fn registration_rules() {
    let image = registration(1).to_item();
    let baseline = World::awaiting("COMPLETED");
    let StreamStep::Bind { bindings, then } = stream_step(&baseline, &image) else {
        panic!("the baseline binds")
    };
    let [binding] = &bindings[..] else {
        panic!("{bindings:?}")
    };
    assert_eq!(binding.provider.callback_id, callback(1));
    assert_eq!(then, AfterBind::Wake(identity(1)));

    // Malformed registrations are acknowledged: a missing, blank or mistyped attribute, a
    // number Java's Long.parseLong refuses, a generation below 1, a negative creation time.
    let ack = StreamStep::Done(Disposition::Acknowledge);
    let malformed: &[(&str, Option<AttrValue>)] = &[
        (attr::PROVIDER_CALLBACK_ID, None),
        (attr::RELEASE_VERSION, Some(AttrValue::S("  ".into()))),
        (attr::TENANT_ID, Some(AttrValue::N("1".into()))),
        (attr::GENERATION, Some(AttrValue::N("1.0".into()))),
        (attr::GENERATION, Some(AttrValue::N("0".into()))),
        (attr::CREATED_AT_EPOCH_MS, Some(AttrValue::N("-1".into()))),
        (attr::EXPIRES_AT_EPOCH_S, None),
    ];
    for (name, value) in malformed {
        let mut bad = image.clone();
        match value {
            None => bad.remove(*name),
            Some(v) => bad.insert((*name).into(), v.clone()),
        };
        assert_eq!(stream_step(&baseline, &bad), ack, "{name} = {value:?}");
    }
    // No await listed yet: retried.
    assert_eq!(
        stream_step(&World::default(), &image),
        StreamStep::Done(Disposition::Retry(RetryReason::NoAwait))
    );
    // Our deviation from TPF (which binds the first await listed only): every open await is
    // bound, a COMPLETED one only while undelivered, and only that one wakes.
    let interactions = |step: &StreamStep| match step {
        StreamStep::Bind { bindings, .. } => bindings
            .iter()
            .map(|b| b.await_identity.interaction_id.clone())
            .collect::<Vec<_>>(),
        StreamStep::Done(_) => vec![],
    };
    let with = |statuses: &[&str]| {
        let mut w = World::default();
        for (n, status) in statuses.iter().enumerate() {
            let mut c = checkpoint(status);
            c.interaction_id = if n == 0 {
                I.into()
            } else {
                format!("interaction-{n}")
            };
            w.checkpoints.push(c);
        }
        w
    };
    // A waiting await first, an undelivered completed one second: both bound, the second wakes.
    let step = stream_step(&with(&["WAITING", "COMPLETED"]), &image);
    assert_eq!(interactions(&step), [I, "interaction-1"]);
    let StreamStep::Bind { then, .. } = &step else {
        panic!()
    };
    assert!(matches!(then, AfterBind::Wake(id) if id.interaction_id == "interaction-1"));
    // Every open status binds and acknowledges.
    for open in ["WAITING", "DISPATCHING", "DISPATCHED"] {
        let step = stream_step(&with(&[open]), &image);
        assert_eq!(interactions(&step), [I], "{open}");
        assert!(
            matches!(
                step,
                StreamStep::Bind {
                    then: AfterBind::Acknowledge,
                    ..
                }
            ),
            "{open}"
        );
    }
    // A terminal await other than COMPLETED is not bound; with nothing else, acknowledged.
    for settled in ["FAILED", "TIMED_OUT", "CANCELLED", "EXPIRED"] {
        assert_eq!(stream_step(&with(&[settled]), &image), ack, "{settled}");
        let step = stream_step(&with(&[settled, "WAITING"]), &image);
        assert_eq!(interactions(&step), ["interaction-1"], "{settled}");
    }
    // A COMPLETED await an older generation holds the DELIVERED row of is not bound and does
    // not wake: generation 2 registers after generation 1 was signalled (TPF's first-await
    // rule binds it and wakes generation 2 at once).
    let mut w = ready();
    assert_eq!(w.wake(&identity(1)), Outcome::Ack);
    assert!(w.delivered_outcome(1).is_some());
    let registered = registration(2).to_item();
    assert_eq!(stream_step(&w, &registered), ack);
    let mut open = checkpoint("WAITING");
    open.interaction_id = "interaction-b".into();
    w.checkpoints.push(open);
    let step = stream_step(&w, &registered);
    assert_eq!(interactions(&step), ["interaction-b"]);
    assert!(matches!(
        step,
        StreamStep::Bind {
            then: AfterBind::Acknowledge,
            ..
        }
    ));
    // Bound to generation 1 but not delivered (the send failed): generation 2 binds and wakes.
    let w = ready();
    let step = stream_step(&w, &registered);
    assert_eq!(interactions(&step), [I]);
    assert!(
        matches!(step, StreamStep::Bind { then: AfterBind::Wake(id), .. } if id == identity(2))
    );
}

#[test]
fn settle_rules() {
    let w = ready();
    let Ok(WakeStep::Deliver(d)) = wake::wake(&identity(1), &w) else {
        panic!()
    };
    use ProviderState::*;
    assert_eq!(
        wake::settle(&d, SendOutcome::Accepted, &w).unwrap(),
        Settle::Record(DeliveryOutcome::CallbackAccepted)
    );
    assert_eq!(
        wake::settle(&d, SendOutcome::Gone(Succeeded), &w).unwrap(),
        Settle::Record(DeliveryOutcome::ProviderStateSucceeded)
    );
    for state in [Open, Unknown] {
        assert_eq!(
            wake::settle(&d, SendOutcome::Gone(state), &w).unwrap(),
            Settle::Retry(RetryReason::ProviderUnsettled)
        );
    }
    assert_eq!(
        wake::settle(&d, SendOutcome::Failed, &w).unwrap(),
        Settle::Retry(RetryReason::SendFailed)
    );
    let Settle::Replace(input) = wake::settle(&d, SendOutcome::Gone(Closed), &w).unwrap() else {
        panic!()
    };
    assert_eq!(
        (input.generation, input.release_version.as_str()),
        (2, "r-semantic")
    );
    // The replacement re-reads TPF's checkpoint; without it, or with another correlation, it
    // does not start.
    let cases: &[(Mutation, Unresolved)] = &[
        (|w| w.checkpoints.clear(), Unresolved::CheckpointMissing),
        (
            |w| w.checkpoints[0].correlation_id = "c2".into(),
            Unresolved::CheckpointMismatch,
        ),
        (
            |w| w.checkpoints[0].execution_id = "e2".into(),
            Unresolved::CheckpointMismatch,
        ),
    ];
    for (mutate, why) in cases {
        let mut w = ready();
        mutate(&mut w);
        assert_eq!(
            wake::settle(&d, SendOutcome::Gone(Closed), &w).unwrap(),
            Settle::Retry(RetryReason::Replacement(*why))
        );
    }
}

#[test]
fn reconcile_rules() {
    let baseline = ready();
    let decide = |w: &World, state| reconcile::reconcile(&arn(1), state, w).unwrap();
    for state in [DriverState::Ended, DriverState::NotFound] {
        let Reconcile::Replace {
            bind: Some(b),
            start,
        } = decide(&baseline, state)
        else {
            panic!("the baseline replaces")
        };
        assert_eq!(b.await_identity, identity(1));
        assert_eq!(b.provider.callback_id, callback(1));
        assert_eq!(start.generation, 2);
    }
    assert_eq!(
        decide(&baseline, DriverState::Running),
        Reconcile::Nothing(Quiet::DriverRunning)
    );
    assert_eq!(
        decide(&baseline, DriverState::Succeeded),
        Reconcile::Nothing(Quiet::DriverSucceeded)
    );
    let cases: &[(&str, Mutation, Reconcile)] = &[
        (
            "no registration and no driver input: retry, not retire",
            |w| w.table.clear(),
            Reconcile::Retry(Missing::Registration),
        ),
        (
            "waiting with no await listed: retry",
            |w| w.checkpoints.clear(),
            Reconcile::Retry(Missing::Await),
        ),
        (
            "TPF's execution succeeded: no driver",
            |w| {
                w.statuses.insert(E.into(), ExecutionStatus::Succeeded);
            },
            Reconcile::Nothing(Quiet::ExecutionSettled(ExecutionStatus::Succeeded)),
        ),
        (
            "REMOTE_OUTCOME_UNKNOWN is an operator's",
            |w| {
                w.statuses
                    .insert(E.into(), ExecutionStatus::RemoteOutcomeUnknown);
            },
            Reconcile::Nothing(Quiet::ExecutionSettled(
                ExecutionStatus::RemoteOutcomeUnknown,
            )),
        ),
    ];
    for (rule, mutate, want) in cases {
        let mut w = ready();
        mutate(&mut w);
        assert_eq!(&decide(&w, DriverState::Ended), want, "{rule}");
    }
}

#[test]
fn status_change_events() {
    let durable = json!({
        "source": "aws.lambda",
        "detail-type": "Durable Execution Status Change",
        "detail": {"durableExecutionArn": arn(1), "status": "FAILED"}
    });
    let c = reconcile::status_change(&durable).unwrap();
    assert_eq!(
        (c.engine, c.execution_arn.as_str()),
        (WakeEngine::Durable, arn(1).as_str())
    );
    assert_eq!(c.reported_status, None);
    let sfn = json!({
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {"executionArn": "arn:aws:states:us-east-1:1:execution:m:tpf-x", "status": "ABORTED"}
    });
    let c = reconcile::status_change(&sfn).unwrap();
    assert_eq!(c.engine, WakeEngine::StepFunctions);
    assert_eq!(c.reported_status.as_deref(), Some("ABORTED"));
    for event in [
        json!({}),
        json!({"detail": "x"}),
        json!({"detail": {"durableExecutionArn": " "}}),
        json!({"detail": {"durableExecutionArn": 7}}),
        json!({"detail-type": "Step Functions Execution Status Change", "detail": {"status": "FAILED"}}),
    ] {
        assert_eq!(reconcile::status_change(&event), None, "{event}");
    }
}
