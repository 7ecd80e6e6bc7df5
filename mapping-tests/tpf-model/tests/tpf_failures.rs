//! Retry/backoff, terminal failure + DLQ envelope, and re-drive (`ExecutionFailureHandler`,
//! `ExecutionRedrivePlan`).

use crate::tpf_support;

use tpf_model::{CoordinatorError, StepOutcome};
use tpf_support::*;
use tpf_wire::records::ExecutionStatus;

fn failing_step3(
    times: usize,
) -> impl FnOnce(tpf_model::ScriptedWorker) -> tpf_model::ScriptedWorker {
    move |w| {
        w.script(
            3,
            vec![StepOutcome::FailRetryable("org.example.DecisionRejectedException".into()); times],
        )
    }
}

/// Parks and completes the await so the next segment starts at step 3.
fn to_step3(c: &mut tpf_model::Coordinator<tpf_model::InMemoryStore>, id: &str) {
    c.process_work_item(TENANT, id, T0).expect("park");
    let interaction = interactions(c, id, T0).remove(0);
    c.complete_await(&completion(&interaction.interaction_id, "accepted"), T0)
        .expect("complete");
}

#[test]
fn retries_back_off_10_20_40_seconds_then_fail_with_a_dlq_envelope() {
    let mut c = restaurant(failing_step3(4));
    let id = submit(&mut c, "order-1", T0);
    to_step3(&mut c, &id);

    let mut now = T0;
    let mut due_times = Vec::new();
    for expected_attempt in 1..=3u32 {
        let out = c.process_work_item(TENANT, &id, now).expect("attempt");
        assert!(out.claimed);
        assert_eq!(out.record.status, ExecutionStatus::WaitRetry);
        assert_eq!(out.record.attempt, expected_attempt);
        // TPF wraps a worker's FAILED envelope (TransitionFailureEnvelope.toException).
        assert_eq!(
            out.record.error_code.as_deref(),
            Some("TransitionWorkerFailureException")
        );
        assert!(out
            .record
            .error_message
            .as_deref()
            .is_some_and(|m| m.starts_with("org.example.DecisionRejectedException: ")));
        due_times.push(out.record.next_due_epoch_ms - now);
        // Not due a millisecond early.
        let early = c
            .process_work_item(TENANT, &id, out.record.next_due_epoch_ms - 1)
            .expect("early");
        assert!(!early.claimed);
        now = out.record.next_due_epoch_ms;
    }
    assert_eq!(due_times, vec![10 * SECOND, 20 * SECOND, 40 * SECOND]);

    let last = c.process_work_item(TENANT, &id, now).expect("last attempt");
    assert_eq!(last.record.status, ExecutionStatus::Failed);
    assert_eq!(last.record.attempt, 3);
    assert_eq!(last.record.current_step_index, 3);
    assert_eq!(
        last.record.last_transition_key.as_deref(),
        Some(format!("{id}:3:3").as_str())
    );
    let dlq = c.dead_letters();
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].terminal_status, "FAILED");
    assert_eq!(dlq[0].terminal_reason, "retry_exhausted");
    assert_eq!(dlq[0].retries_observed, 3);
    assert!(dlq[0].retryable);
    // The record's key: the client's, scoped by the pinned pipeline and release.
    assert_eq!(
        dlq[0].correlation_id,
        tpf_wire::ids::scoped_root_execution_key(PIPELINE, "sha256:v1", "order-1").unwrap()
    );
    assert_eq!(dlq[0].error_code, "TransitionWorkerFailureException");
    assert_eq!(dlq[0].transition_key, format!("{id}:3:3"));
    assert_eq!(dlq[0].resource_type, "tpf.orchestrator.execution");
    assert_eq!(dlq[0].resource_name, "OrchestratorService/Run");

    let causes: Vec<_> = trace(&c, &id).iter().map(|t| t.4).collect();
    assert_eq!(
        causes,
        vec![
            "create",
            "claim",
            "park",
            "await-completed",
            "claim",
            "retry",
            "claim",
            "retry",
            "claim",
            "retry",
            "claim",
            "fail"
        ]
    );
    let step3_attempts: Vec<u32> = c
        .worker()
        .runs()
        .iter()
        .filter(|r| r.step_index == 3)
        .map(|r| r.attempt)
        .collect();
    assert_eq!(step3_attempts, vec![0, 1, 2, 3]);
    c.log().check_all().expect("invariants");
}

#[test]
fn backoff_is_capped_at_thirty_minutes() {
    let c = restaurant(|w| w);
    let config = c.config();
    assert_eq!(config.retry_delay_for(1), 10 * SECOND);
    assert_eq!(config.retry_delay_for(4), 80 * SECOND);
    assert_eq!(config.retry_delay_for(9), 30 * MINUTE);
    assert_eq!(config.retry_delay_for(60), 30 * MINUTE);
}

#[test]
fn a_non_retryable_failure_fails_at_once() {
    let mut c = restaurant(|w| {
        w.script(
            1,
            vec![StepOutcome::FailNonRetryable(
                "org.example.BadOrderException".into(),
            )],
        )
    });
    let id = submit(&mut c, "order-1", T0);
    let out = c.process_work_item(TENANT, &id, T0).expect("segment");
    assert_eq!(out.record.status, ExecutionStatus::Failed);
    assert_eq!(out.record.attempt, 0);
    assert_eq!(
        out.record.error_code.as_deref(),
        Some("NonRetryableException")
    );
    assert_eq!(c.dead_letters().len(), 1);
    assert_eq!(c.dead_letters()[0].terminal_reason, "non_retryable");
    assert!(!c.dead_letters()[0].retryable);
    // Terminal: nothing claims it again.
    let again = c
        .process_work_item(TENANT, &id, T0 + MINUTE)
        .expect("again");
    assert!(!again.claimed);
}

#[test]
fn redrive_needs_allow_failed_and_the_current_version() {
    let mut c = restaurant(failing_step3(4));
    let id = submit(&mut c, "order-1", T0);
    to_step3(&mut c, &id);
    let mut now = T0;
    loop {
        let out = c.process_work_item(TENANT, &id, now).expect("attempt");
        if out.record.status == ExecutionStatus::Failed {
            break;
        }
        now = out.record.next_due_epoch_ms;
    }
    let failed = c.status(TENANT, &id, now).unwrap();
    assert_eq!(failed.version, 11);

    let refused = c
        .redrive(TENANT, &id, None, false, now)
        .expect_err("FAILED needs allowFailed");
    assert!(matches!(refused, CoordinatorError::Conflict(_)));
    assert_eq!(refused.http_status(), 409);
    let stale = c
        .redrive(TENANT, &id, Some(failed.version - 1), true, now)
        .expect_err("wrong version");
    assert_eq!(stale.http_status(), 409);
    assert!(c
        .redrive(TENANT, "no-such", None, true, now)
        .is_err_and(|e| e.http_status() == 404));

    let redriven = c
        .redrive(TENANT, &id, Some(failed.version), true, now + MINUTE)
        .expect("redrive");
    assert_eq!(redriven.previous_status, ExecutionStatus::Failed);
    assert_eq!(redriven.status, ExecutionStatus::Queued);
    assert_eq!(redriven.version, failed.version + 1);
    assert_eq!(redriven.attempt, failed.attempt + 1);
    assert_eq!(redriven.current_step_index, 3);
    assert_eq!(redriven.release_version, "sha256:v1");

    let record = c.status(TENANT, &id, now + MINUTE).unwrap();
    assert_eq!(
        record.last_transition_key.as_deref(),
        Some(format!("redrive:{id}:{}", failed.version).as_str())
    );
    assert_eq!(record.execution_key, failed.execution_key);
    assert_eq!(record.input_payload, failed.input_payload);
    assert_eq!(record.await_unit_id, failed.await_unit_id);
    assert_eq!(record.error_code, None);
    assert_eq!(record.next_due_epoch_ms, now + MINUTE);

    // Attempt 4 is past the script: the step completes and the re-driven segment resumes from
    // the await response it reloads through the kept await unit.
    let done = c
        .process_work_item(TENANT, &id, now + MINUTE)
        .expect("rerun");
    assert_eq!(done.record.status, ExecutionStatus::Succeeded);
    assert_eq!(
        done.record
            .result_payload
            .as_ref()
            .and_then(|r| r.get("input"))
            .cloned(),
        Some(serde_json::json!({"decision": "accepted"}))
    );
    c.log().check_all().expect("invariants");
}

#[test]
fn a_redriven_execution_that_fails_again_gets_exactly_one_attempt() {
    let mut c = restaurant(failing_step3(10));
    let id = submit(&mut c, "order-1", T0);
    to_step3(&mut c, &id);
    let mut now = T0;
    while c.process_work_item(TENANT, &id, now).unwrap().record.status != ExecutionStatus::Failed {
        now = c.status(TENANT, &id, now).unwrap().next_due_epoch_ms;
    }
    c.redrive(TENANT, &id, None, true, now).expect("redrive");
    let again = c.process_work_item(TENANT, &id, now).expect("rerun");
    assert_eq!(again.record.status, ExecutionStatus::Failed);
    assert_eq!(again.record.attempt, 4);
    assert_eq!(c.dead_letters().len(), 2);
    c.log().check_all().expect("invariants");
}

#[test]
fn retry_delays_follow_javas_arithmetic_for_odd_settings() {
    let mut c = restaurant(|w| w);
    // Math.max(1.0, NaN) is NaN: pow(NaN, 0) = 1 keeps the first delay, later ones are
    // (long) NaN = 0.
    c.config_mut().retry_multiplier = f64::NAN;
    assert_eq!(c.config().retry_delay_for(1), 10 * SECOND);
    assert_eq!(c.config().retry_delay_for(2), 0);
    // A negative base is floored at 0; an infinite multiplier saturates into the cap.
    c.config_mut().retry_multiplier = f64::INFINITY;
    assert_eq!(c.config().retry_delay_for(2), 30 * MINUTE);
    c.config_mut().retry_delay_ms = -5 * SECOND;
    assert_eq!(c.config().retry_delay_for(3), 0);
}
