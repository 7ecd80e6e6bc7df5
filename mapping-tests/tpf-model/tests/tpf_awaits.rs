//! Itemized awaits, await timeouts through the sweep, late completions.

use crate::tpf_support;

use serde_json::json;
use tpf_model::coordinator::ItemContinuations;
use tpf_model::{
    AwaitStore, Coordinator, CoordinatorError, InMemoryStore, PipelineDef, ScriptedWorker, StepDef,
    StepOutcome,
};
use tpf_support::*;
use tpf_wire::cardinality::Cardinality;
use tpf_wire::ids;
use tpf_wire::records::{AwaitInteractionStatus, AwaitUnitStatus, ExecutionStatus};

/// The CSV-payments shape: a fan-out producer, an itemized await, one step per item, and
/// optionally a reduction that aggregates the items again.
fn itemized_pipeline(with_aggregate: bool) -> PipelineDef {
    let mut steps = vec![
        StepDef::internal("Process Csv Payments Input").with_cardinality(Cardinality::OneToMany),
        StepDef::await_itemized("Await Payment Provider", 3, 5 * MINUTE),
        StepDef::internal("Finalize Payment Output"),
    ];
    if with_aggregate {
        steps.push(
            StepDef::internal("Summarise Payment File").with_cardinality(Cardinality::ManyToOne),
        );
    }
    PipelineDef::new(steps)
}

fn with_items(
    pipeline: PipelineDef,
    mode: ItemContinuations,
    script: impl FnOnce(ScriptedWorker) -> ScriptedWorker,
) -> Coordinator<InMemoryStore> {
    let mut c = coordinator_with(pipeline, script);
    c.config_mut().item_continuations = mode;
    c
}

/// Parks the parent and completes its three items out of order, with a duplicate in between.
fn park_and_complete_items(c: &mut Coordinator<InMemoryStore>, id: &str) -> Vec<bool> {
    let parked = c.process_work_item(TENANT, id, T0).expect("park");
    assert_eq!(parked.record.status, ExecutionStatus::WaitingExternal);
    let items = interactions(c, id, T0);
    assert_eq!(
        items.iter().map(|i| i.item_index).collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(2)]
    );
    [2usize, 0, 0, 1]
        .into_iter()
        .enumerate()
        .map(|(n, index)| {
            c.complete_await(
                &completion(&items[index].interaction_id, &format!("paid-{index}")),
                T0 + (n as i64 + 1) * SECOND,
            )
            .expect("complete item")
            .released
        })
        .collect()
}

#[test]
fn durable_item_continuations_are_child_executions_that_release_the_parent_to_the_aggregate_step() {
    let mut c = with_items(itemized_pipeline(true), ItemContinuations::Durable, |w| w);
    let id = submit(&mut c, "file-1", T0);
    assert_eq!(
        c.status(TENANT, &id, T0).unwrap().result_shape,
        tpf_wire::records::ResultShape::Single,
        "the reduction makes the result single again"
    );
    let released = park_and_complete_items(&mut c, &id);
    assert_eq!(
        released,
        vec![false; 4],
        "no completion runs a continuation"
    );
    let parent = c.status(TENANT, &id, T0 + 5 * SECOND).unwrap();
    assert_eq!(parent.status, ExecutionStatus::WaitingExternal);
    let unit_id = parent.await_unit_id.clone().unwrap();

    let children = c.item_children(TENANT, &id, T0 + 5 * SECOND).unwrap();
    assert_eq!(
        children.len(),
        3,
        "one child per completed item, duplicates ignored"
    );
    for child in &children {
        let (unit, index) = ids::parse_child_execution_key(&child.execution_key).unwrap();
        assert_eq!(unit, unit_id);
        let key = ids::ItemContinuationKey::new(
            TENANT,
            &id,
            &parent.execution_key,
            &unit_id,
            i64::from(index),
        )
        .unwrap();
        assert_eq!(child.execution_key, key.child_execution_key());
        assert_eq!(child.status, ExecutionStatus::Queued, "a durable work item");
        assert_eq!(child.current_step_index, 2);
        assert_eq!(
            child.result_shape,
            tpf_wire::records::ResultShape::MaterializedMulti
        );
        assert_eq!(
            (child.pipeline_id.as_str(), child.release_version.as_str()),
            (parent.pipeline_id.as_str(), parent.release_version.as_str()),
            "pinned to the parent's release"
        );
        assert_eq!(child.ttl_epoch_s, parent.ttl_epoch_s);
    }
    // Each child's own work item runs the steps up to the aggregate step, then succeeds.
    for (n, child) in children.iter().enumerate() {
        let done = c
            .process_work_item(TENANT, &child.execution_id, T0 + 10 * SECOND)
            .unwrap();
        assert_eq!(done.record.status, ExecutionStatus::Succeeded);
        assert_eq!(
            done.record.last_transition_key.as_deref(),
            Some(
                ids::item_continuation_transition_key(&unit_id, {
                    ids::parse_child_execution_key(&child.execution_key)
                        .unwrap()
                        .1
                })
                .as_str()
            )
        );
        let parent = c.status(TENANT, &id, T0 + 10 * SECOND).unwrap();
        let last = n == children.len() - 1;
        assert_eq!(parent.status == ExecutionStatus::Queued, last);
    }
    let parent = c.status(TENANT, &id, T0 + 10 * SECOND).unwrap();
    assert_eq!(parent.current_step_index, 3, "released to the reduction");
    assert_eq!(parent.await_unit_id, None);
    let items = parent.input_payload["items"].as_array().cloned().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(
        items[0]["input"],
        json!({"decision": "paid-0"}),
        "children's outputs in item order"
    );
    let unit = c.await_unit(TENANT, &unit_id).unwrap().unwrap();
    assert_eq!(unit.completed_continuation_count(), 3);
    let steps_before = c.worker().runs().len();
    let done = c
        .process_work_item(TENANT, &id, T0 + 11 * SECOND)
        .expect("finish");
    assert_eq!(done.record.status, ExecutionStatus::Succeeded);
    assert_eq!(
        c.worker().runs()[steps_before..]
            .iter()
            .map(|r| r.step_index)
            .collect::<Vec<_>>(),
        vec![3],
        "the parent runs only the aggregate step"
    );
    c.log().check_all().expect("invariants");
}

#[test]
fn without_an_aggregate_step_the_parent_finishes_at_the_step_count_without_a_worker_call() {
    let mut c = with_items(itemized_pipeline(false), ItemContinuations::Durable, |w| w);
    let id = submit(&mut c, "file-1", T0);
    assert_eq!(
        c.status(TENANT, &id, T0).unwrap().result_shape,
        tpf_wire::records::ResultShape::MaterializedMulti
    );
    park_and_complete_items(&mut c, &id);
    for child in c.item_children(TENANT, &id, T0).unwrap() {
        c.process_work_item(TENANT, &child.execution_id, T0 + 10 * SECOND)
            .unwrap();
    }
    let parent = c.status(TENANT, &id, T0 + 10 * SECOND).unwrap();
    assert_eq!(
        (parent.status, parent.current_step_index),
        (ExecutionStatus::Queued, 3)
    );
    let runs = c.worker().runs().len();
    let done = c.process_work_item(TENANT, &id, T0 + 11 * SECOND).unwrap();
    assert_eq!(done.record.status, ExecutionStatus::Succeeded);
    assert_eq!(c.worker().runs().len(), runs, "no step ran");
    assert_eq!(
        done.record
            .result_payload
            .as_ref()
            .and_then(|r| r.as_array())
            .map(Vec::len),
        Some(3),
        "the items are the result"
    );
}

#[test]
fn a_durable_continuation_is_retried_as_scheduled_work_then_fails_the_parent() {
    let fail = || StepOutcome::FailRetryable("java.io.IOException".into());
    let mut c = with_items(itemized_pipeline(true), ItemContinuations::Durable, |w| {
        w.script(2, vec![fail(), fail(), fail()])
    });
    let id = submit(&mut c, "file-1", T0);
    park_and_complete_items(&mut c, &id);
    let child = c.item_children(TENANT, &id, T0).unwrap().remove(0);
    let mut now = T0 + 10 * SECOND;
    for (attempt, delay) in [(1, 100), (2, 200)] {
        let waiting = c
            .process_work_item(TENANT, &child.execution_id, now)
            .unwrap();
        assert_eq!(waiting.record.status, ExecutionStatus::WaitRetry);
        assert_eq!(waiting.record.attempt, attempt);
        assert_eq!(waiting.record.next_due_epoch_ms, now + delay);
        assert_eq!(
            c.status(TENANT, &id, now).unwrap().status,
            ExecutionStatus::WaitingExternal,
            "the parent waits while the item is retried"
        );
        let early = c
            .process_work_item(TENANT, &child.execution_id, now + delay - 1)
            .unwrap();
        assert!(
            !early.claimed,
            "a retry is a scheduled wakeup, not an in-process timer"
        );
        now += delay;
    }
    let failed = c
        .process_work_item(TENANT, &child.execution_id, now)
        .unwrap();
    assert_eq!(failed.record.status, ExecutionStatus::Failed);
    assert_eq!(
        failed.record.error_code.as_deref(),
        Some(tpf_model::coordinator::AWAIT_ITEM_CONTINUATION_FAILED)
    );
    let parent = c.status(TENANT, &id, now).unwrap();
    assert_eq!(parent.status, ExecutionStatus::Failed);
    assert_eq!(
        parent.error_code.as_deref(),
        Some("AWAIT_ITEM_CONTINUATION_FAILED")
    );
    let unit_id = parent.await_unit_id.clone().unwrap();
    let index = ids::parse_child_execution_key(&child.execution_key)
        .unwrap()
        .1;
    assert_eq!(
        parent.last_transition_key,
        Some(format!("await-item-continuation-failed:{unit_id}:{index}"))
    );
    assert!(parent
        .error_message
        .unwrap()
        .starts_with("Await item continuation failed after 3 attempts: "));
    // The other items' children no longer run: their parent left the await.
    let other = c.item_children(TENANT, &id, now).unwrap().remove(1);
    let ended = c
        .process_work_item(TENANT, &other.execution_id, now)
        .unwrap();
    assert_eq!(
        ended.record.error_code.as_deref(),
        Some(tpf_model::coordinator::AWAIT_PARENT_NOT_WAITING)
    );
    assert_eq!(
        c.worker()
            .runs()
            .iter()
            .filter(|r| r.execution_id == other.execution_id)
            .count(),
        0
    );
    c.log().check_all().expect("invariants");
}

#[test]
fn in_process_continuations_run_inside_the_completion_call_as_tpf_does_today() {
    let mut c = with_items(itemized_pipeline(true), ItemContinuations::InProcess, |w| w);
    let id = submit(&mut c, "file-1", T0);
    let released = park_and_complete_items(&mut c, &id);
    assert_eq!(
        released,
        vec![false, false, false, true],
        "the last item releases"
    );
    let children = c.item_children(TENANT, &id, T0).unwrap();
    assert_eq!(children.len(), 3);
    assert!(children
        .iter()
        .all(|r| r.status == ExecutionStatus::Succeeded));
    // Each child was written QUEUED and marked SUCCEEDED at once: a driver the bridge starts
    // for it finds nothing to do.
    for child in &children {
        assert_eq!(
            trace(&c, &child.execution_id)
                .iter()
                .map(|t| (t.1.clone(), t.4))
                .collect::<Vec<_>>(),
            vec![
                ("QUEUED".to_owned(), "item-child"),
                ("SUCCEEDED".to_owned(), "succeed")
            ]
        );
        let answer = c
            .process_work_item(TENANT, &child.execution_id, T0 + MINUTE)
            .unwrap();
        assert!(!answer.claimed);
    }
    let parent = c.status(TENANT, &id, T0 + MINUTE).unwrap();
    assert_eq!(
        (parent.status, parent.current_step_index),
        (ExecutionStatus::Queued, 3)
    );
}

#[test]
fn an_in_process_continuation_fails_the_parent_after_three_quick_attempts() {
    let fail = || StepOutcome::FailRetryable("java.io.IOException".into());
    let mut c = with_items(itemized_pipeline(true), ItemContinuations::InProcess, |w| {
        w.script(2, vec![fail(), fail(), fail()])
    });
    let id = submit(&mut c, "file-1", T0);
    c.process_work_item(TENANT, &id, T0).unwrap();
    let first = interactions(&c, &id, T0).remove(0);
    c.complete_await(&completion(&first.interaction_id, "paid"), T0 + SECOND)
        .unwrap();
    let parent = c.status(TENANT, &id, T0 + SECOND).unwrap();
    assert_eq!(parent.status, ExecutionStatus::Failed);
    assert_eq!(
        parent.error_code.as_deref(),
        Some("AWAIT_ITEM_CONTINUATION_FAILED")
    );
    assert_eq!(
        c.worker()
            .runs()
            .iter()
            .filter(|r| r.step_index == 2)
            .count(),
        3
    );
    assert!(
        c.item_children(TENANT, &id, T0).unwrap().is_empty(),
        "no child written"
    );
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
fn interactions_carry_the_await_descriptor() {
    let pipeline = PipelineDef::new(vec![StepDef::await_scalar("Await SMS Reply", 5 * MINUTE)
        .with_await(|a| {
            a.transport_type = "webhook".into();
            a.output_type = "com.example.Reply".into();
            a.idempotency_key_fields = vec!["orderId".into()];
            a.correlation_strategy = Some("businessKey".into());
        })]);
    let mut c = coordinator_with(pipeline, |w| w);
    let id = submit(&mut c, "k", T0);
    c.process_work_item(TENANT, &id, T0).expect("park");
    let i = interactions(&c, &id, T0).remove(0);
    assert_eq!(i.step_id, "ProcessAwaitSmsReplyService");
    assert_eq!(
        i.deadline_epoch_ms,
        Some(T0 + 5 * MINUTE),
        "always a deadline"
    );
    assert_eq!(i.ttl_epoch_s, (T0 + 5 * MINUTE) / 1000 + 86_400);
    assert_eq!(i.output_type.as_deref(), Some("com.example.Reply"));
    assert_eq!(i.transport_type.as_deref(), Some("webhook"));
    assert_eq!(i.idempotency_key, "ProcessAwaitSmsReplyService:orderId=k");
    assert_eq!(
        i.correlation_id,
        ids::correlation_id(
            Some("businessKey"),
            TENANT,
            &id,
            &i.step_id,
            &i.idempotency_key
        )
    );
}
