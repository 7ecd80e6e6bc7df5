//! Itemized awaits, await timeouts through the sweep, late completions.

mod tpf_support;

use serde_json::json;
use tpf_model::{AwaitStore, CoordinatorError, PipelineDef, StepDef};
use tpf_support::*;
use tpf_wire::records::{AwaitInteractionStatus, AwaitUnitStatus, ExecutionStatus};

fn itemized_pipeline() -> PipelineDef {
    PipelineDef::new(vec![
        StepDef::internal("Process Csv Payments Input"),
        StepDef::await_itemized("Await Payment Provider", 3, Some(5 * MINUTE)),
        StepDef::internal("Finalize Payment Output"),
    ])
}

#[test]
fn itemized_await_releases_the_parent_once_every_item_completed() {
    let mut c = coordinator_with(itemized_pipeline(), |w| w);
    let id = submit(&mut c, "file-1", T0);
    let parked = c.process_work_item(TENANT, &id, T0).expect("park");
    assert_eq!(parked.record.status, ExecutionStatus::WaitingExternal);
    assert_eq!(parked.record.current_step_index, 1);
    let unit_id = parked.record.await_unit_id.clone().expect("unit");
    let unit = c.await_unit(TENANT, &unit_id).unwrap().expect("unit row");
    assert!(unit.uses_item_continuations());
    assert!(unit.dispatch_complete);
    assert_eq!(unit.expected_item_count, Some(3));

    let items = interactions(&c, &id, T0);
    assert_eq!(
        items.iter().map(|i| i.item_index).collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(2)]
    );
    // Out of order, with a duplicate in the middle.
    for (n, index) in [2usize, 0, 0, 1].into_iter().enumerate() {
        let result = c
            .complete_await(
                &completion(&items[index].interaction_id, &format!("paid-{index}")),
                T0 + (n as i64 + 1) * SECOND,
            )
            .expect("complete item");
        let last = n == 3;
        assert_eq!(result.released, last, "released only by the last item");
        assert_eq!(result.duplicate, n == 2);
        if !last {
            assert_eq!(
                c.status(TENANT, &id, T0).unwrap().status,
                ExecutionStatus::WaitingExternal
            );
        }
    }
    let unit = c.await_unit(TENANT, &unit_id).unwrap().expect("unit row");
    assert_eq!(unit.status, AwaitUnitStatus::Completed);
    assert_eq!(unit.completed_item_count, 3);

    let released = c.status(TENANT, &id, T0 + 5 * SECOND).unwrap();
    assert_eq!(released.status, ExecutionStatus::Queued);
    assert_eq!(released.current_step_index, 2);
    assert_eq!(released.await_unit_id, None);
    assert_eq!(
        released.input_payload,
        json!({"shape": "MULTI", "items": [
            {"decision": "paid-0"}, {"decision": "paid-1"}, {"decision": "paid-2"}
        ]})
    );
    assert_eq!(c.log().count(&id, "await-items-completed"), 1);
    let done = c
        .process_work_item(TENANT, &id, T0 + 6 * SECOND)
        .expect("finish");
    assert_eq!(done.record.status, ExecutionStatus::Succeeded);
    c.log().check_all().expect("invariants");
}

#[test]
fn sweep_times_out_a_parked_await_and_fails_the_parent() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let other = submit(&mut c, "order-2", T0 + SECOND);

    let early = c
        .sweep_once(T0 + 30 * MINUTE - 1, 100)
        .expect("early sweep");
    assert!(early.timed_out.is_empty());
    assert_eq!(early.due.len(), 1, "only the un-started execution is due");
    assert_eq!(early.due[0].execution_id, other);

    let swept = c.sweep_once(T0 + 30 * MINUTE, 100).expect("sweep");
    assert_eq!(swept.timed_out.len(), 1);
    assert!(swept.timed_out[0].parent_failed);
    let record = c.status(TENANT, &id, T0 + 30 * MINUTE).unwrap();
    assert_eq!(record.status, ExecutionStatus::Failed);
    assert_eq!(record.error_code.as_deref(), Some("AWAIT_TIMEOUT"));
    assert_eq!(record.current_step_index, 2);
    assert!(
        record.await_unit_id.is_some(),
        "unit kept on terminal failure"
    );
    assert_eq!(
        record.last_transition_key.as_deref(),
        Some(format!("{id}:2:0").as_str())
    );
    assert!(
        c.dead_letters().is_empty(),
        "no DLQ publish for await timeouts"
    );
    let interaction = interactions(&c, &id, T0).remove(0);
    assert_eq!(interaction.status, AwaitInteractionStatus::TimedOut);
    let unit = c
        .await_unit(TENANT, record.await_unit_id.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(unit.status, AwaitUnitStatus::TimedOut);
    assert_eq!(c.log().count(&id, "await-timeout"), 1);

    // Swept once only.
    let again = c.sweep_once(T0 + 31 * MINUTE, 100).expect("sweep again");
    assert!(again.timed_out.is_empty());
    c.log().check_all().expect("invariants");
}

#[test]
fn sweep_never_claims_and_respects_its_limit_and_order() {
    let mut c = restaurant(|w| w);
    let ids: Vec<String> = (0..5)
        .map(|i| submit(&mut c, &format!("order-{i}"), T0 + i * SECOND))
        .collect();
    let swept = c.sweep_once(T0 + MINUTE, 3).expect("sweep");
    assert_eq!(
        swept
            .due
            .iter()
            .map(|r| r.execution_id.clone())
            .collect::<Vec<_>>(),
        ids[..3].to_vec()
    );
    assert!(swept
        .due
        .iter()
        .all(|r| r.status == ExecutionStatus::Queued));
    assert_eq!(c.log().transitions().len(), 5, "only the creates");
}

#[test]
fn a_late_completion_is_rejected_without_failing_the_parent() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let interaction = interactions(&c, &id, T0).remove(0);

    // `deadline <= now` is already too late (InMemoryAwaitInteractionStore.completeResolved).
    let err = c
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            T0 + 30 * MINUTE,
        )
        .expect_err("late");
    assert!(matches!(err, CoordinatorError::AwaitDeadlinePassed { .. }));
    assert_eq!(err.http_status(), 400);
    let after = c.status(TENANT, &id, T0 + 31 * MINUTE).unwrap();
    assert_eq!(after.status, ExecutionStatus::WaitingExternal);
    assert_eq!(
        c.store()
            .get_interaction(TENANT, &interaction.interaction_id)
            .unwrap()
            .unwrap()
            .status,
        AwaitInteractionStatus::TimedOut
    );
    // A second completion now meets a terminal interaction.
    let err = c
        .complete_await(
            &completion(&interaction.interaction_id, "accepted"),
            T0 + 31 * MINUTE,
        )
        .expect_err("terminal");
    assert!(matches!(err, CoordinatorError::InteractionTerminal { .. }));
    // The Action API's deadline check still fails the parent (the sweep's index no longer
    // lists a TIMED_OUT interaction).
    let applied = c
        .apply_parked_deadline(TENANT, &id, T0 + 31 * MINUTE)
        .expect("deadline");
    assert_eq!(applied.len(), 1);
    assert_eq!(
        c.status(TENANT, &id, T0 + 31 * MINUTE)
            .unwrap()
            .error_code
            .as_deref(),
        Some("AWAIT_TIMEOUT")
    );
}

#[test]
fn a_timeout_does_not_touch_a_parent_that_already_moved_on() {
    let mut c = restaurant(|w| w);
    let id = submit(&mut c, "order-1", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let interaction = interactions(&c, &id, T0).remove(0);
    c.complete_await(
        &completion(&interaction.interaction_id, "accepted"),
        T0 + MINUTE,
    )
    .expect("complete");
    let swept = c.sweep_once(T0 + 40 * MINUTE, 100).expect("sweep");
    assert!(
        swept.timed_out.is_empty(),
        "completed interactions never time out"
    );
    assert_eq!(swept.due.len(), 1);
    assert_eq!(swept.due[0].status, ExecutionStatus::Queued);
}

#[test]
fn an_await_without_timeout_never_times_out() {
    let pipeline = PipelineDef::new(vec![StepDef::await_scalar("Await Forever", None)]);
    let mut c = coordinator_with(pipeline, |w| w);
    let id = submit(&mut c, "k", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let swept = c.sweep_once(T0 + 6 * 24 * 60 * MINUTE, 100).expect("sweep");
    assert!(swept.timed_out.is_empty());
    assert_eq!(interactions(&c, &id, T0)[0].deadline_epoch_ms, None);
}
