//! Every invariant check of the Lambda durable functions backend can fail: each test runs a
//! deliberately broken durable driver (the shipped loop over an `Ops` wrapper that breaks one
//! thing, a hand-edited spec, or a broken bridge) and asserts the named check rejects it.

use std::cell::RefCell;
use std::sync::Arc;

use durable_interp::{poll, Stop};
use tpf_durable_driver::ops::{ActionCall, CallOutcome, GenerationRow, Ops, ParkRequest, Wake};
use tpf_durable_driver::{drive, names, DriverInput, DurableSpec, End};
use tpf_sfn_mapping::durable::{EngineOps, Subject, Variant};
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::model::{Action, Do, When};
use tpf_sfn_mapping::scenario::{matrix, Scenario};
use tpf_wire::records::ExecutionStatus;

fn subject() -> Subject {
    proof::subject(&proof::august_restaurant_v1_input(), None).expect("restaurant compiles")
}

/// What a broken driver gets wrong.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mutation {
    /// Waits a second instead of until TPF's nextDueAt.
    IgnoreDueTime,
    /// Reads TPF's WAIT_RETRY as RUNNING, so it waits for a lease instead of the due time.
    RetryAsLease,
    /// Reads TPF's WAITING_EXTERNAL as SUCCEEDED, so it ends while TPF is parked.
    ParkedAsSucceeded,
    /// Reads TPF's REMOTE_OUTCOME_UNKNOWN as this status: waits and asks again (RUNNING), ends
    /// in success (SUCCEEDED), or fails as if TPF had failed the execution (FAILED).
    RemoteUnknownAs(ExecutionStatus),
    /// Sends an empty release version.
    DropIdentity,
    /// Sends the lineage as the idempotency key, the same on every call.
    KeyWithoutIteration,
    /// Makes the key of a call from the invocation it is delivered in: well formed, but not
    /// the same when a step runs again.
    KeyPerInvocation,
    /// After a wakeup, parks again without asking TPF.
    ParkTwice,
    /// After a wakeup, makes up TPF's SUCCEEDED instead of asking.
    ResumeWithoutTpf,
    /// Polls every minute instead of parking on a callback.
    PollInsteadOfParking,
    /// Treats every first delivery as a transport error and retries TPF's answered call.
    RetryAnsweredCalls,
    /// Every wait lasts no time at all.
    NoWaits,
    LeaseWait(u64),
    RecheckWait(u64),
    /// Asks for one more step on every invocation after the first, named by how often the
    /// function version ran: a replay asks for another operation than the log holds.
    NonDeterministic,
}

/// The shipped loop over an `Ops` that breaks one thing.
struct Broken<'o, O> {
    inner: &'o O,
    m: Mutation,
    woken: RefCell<bool>,
    last: RefCell<Option<tpf_wire::action::ProcessWorkItemResponse>>,
    /// How often the function version ran before this invocation.
    runs: u64,
}

impl<O: Ops> Ops for Broken<'_, O> {
    type Stop = O::Stop;

    async fn register(
        &self,
        name: &str,
        row: &GenerationRow,
    ) -> Result<Result<(), tpf_durable_driver::ops::WriteFailed>, O::Stop> {
        self.inner.register(name, row).await
    }

    async fn call(&self, name: &str, call: &ActionCall) -> Result<CallOutcome, O::Stop> {
        let mut call = call.clone();
        match self.m {
            Mutation::DropIdentity => call.request.release_version.clear(),
            Mutation::KeyPerInvocation => {
                if let Some(k) = &mut call.request.idempotency_key {
                    k.push_str(&self.runs.to_string());
                }
            }
            Mutation::KeyWithoutIteration => {
                call.request.idempotency_key =
                    call.request.driver.as_ref().and_then(|d| d.lineage.clone())
            }
            Mutation::ResumeWithoutTpf if self.woken.replace(false) => {
                if let Some(mut r) = self.last.borrow().clone() {
                    r.status = ExecutionStatus::Succeeded;
                    return Ok(CallOutcome::Answer {
                        at_ms: 0,
                        response: Box::new(r),
                    });
                }
            }
            _ => {}
        }
        let mut out = self.inner.call(name, &call).await?;
        if let CallOutcome::Answer { response, .. } = &mut out {
            *self.last.borrow_mut() = Some((**response).clone());
            let s = &mut response.status;
            match (self.m, *s) {
                (Mutation::RetryAsLease, ExecutionStatus::WaitRetry) => {
                    *s = ExecutionStatus::Running
                }
                (Mutation::ParkedAsSucceeded, ExecutionStatus::WaitingExternal) => {
                    *s = ExecutionStatus::Succeeded
                }
                (Mutation::RemoteUnknownAs(read), ExecutionStatus::RemoteOutcomeUnknown) => {
                    *s = read
                }
                (Mutation::RetryAnsweredCalls, _) if !name.starts_with("Retry") => {
                    return Ok(CallOutcome::Transport {
                        message: "made up".into(),
                    })
                }
                _ => {}
            }
        }
        Ok(out)
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), O::Stop> {
        let seconds = match self.m {
            Mutation::IgnoreDueTime if name == names::WAIT_DUE => 1,
            Mutation::NoWaits => 0,
            Mutation::LeaseWait(s) if name == names::WAIT_LEASE => s,
            Mutation::RecheckWait(s) if name == names::RECHECK => s,
            _ => seconds,
        };
        self.inner.wait(name, seconds).await
    }

    async fn park(&self, name: &str, park: &ParkRequest) -> Result<Wake, O::Stop> {
        if self.m == Mutation::PollInsteadOfParking {
            self.inner.wait("Poll TPF", 60).await?;
            return Ok(Wake::TimedOut);
        }
        let wake = self.inner.park(name, park).await?;
        if let Wake::Woken { .. } = wake {
            *self.woken.borrow_mut() = true;
            if self.m == Mutation::ParkTwice {
                return self.inner.park(name, park).await;
            }
        }
        Ok(wake)
    }

    async fn hand_over(
        &self,
        name: &str,
        next: &DriverInput,
    ) -> Result<Result<(), tpf_durable_driver::ops::WriteFailed>, O::Stop> {
        self.inner.hand_over(name, next).await
    }
}

struct Mutant(Mutation, std::sync::atomic::AtomicU64);

impl Variant for Mutant {
    fn run(
        &self,
        ops: &EngineOps<'_, '_>,
        spec: &DurableSpec,
        input: &DriverInput,
    ) -> Result<Result<End, Stop>, Stop> {
        let runs = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.0 == Mutation::NonDeterministic && runs > 0 {
            let _ = ops.ctx.step(
                &format!("Ask TPF, invocation {runs}"),
                &serde_json::Value::Null,
            )?;
        }
        let broken = Broken {
            inner: ops,
            m: self.0,
            woken: RefCell::new(false),
            last: RefCell::new(None),
            runs,
        };
        poll::ready(drive(&broken, spec, input))
    }
}

fn mutant(m: Mutation) -> Subject {
    subject().with_variant(Arc::new(Mutant(m, Default::default())))
}

fn edited(edit: impl FnOnce(&mut DurableSpec)) -> Subject {
    let mut s = subject();
    edit(&mut s.program.spec);
    s
}

fn scenario(s: &Subject, name: &str) -> Scenario {
    proof::scenarios(s, Vec::new())
        .into_iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

fn failed_checks(s: &Subject, sc: &Scenario) -> Vec<&'static str> {
    let r = proof::run_one(s, sc, proof::SEED);
    assert!(r.error.is_none(), "{:?}", r.error);
    let mut names: Vec<_> = r.violations.iter().map(|v| v.invariant).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn assert_fails(s: &Subject, scenario_name: &str, check: &str) {
    // Scenarios come from the unbroken subject: a broken spec must not change the questions.
    let sc = scenario(&subject(), scenario_name);
    let failed = failed_checks(s, &sc);
    assert!(
        failed.contains(&check),
        "expected {check} to fail on {scenario_name}, got {failed:?}"
    );
}

#[test]
fn the_unbroken_driver_and_an_identity_wrapper_pass_the_happy_path() {
    // The wrapper itself changes nothing when it breaks nothing a scenario reaches.
    for s in [subject(), mutant(Mutation::LeaseWait(30))] {
        let r = proof::run_one(&s, &scenario(&s, "happy-path"), proof::SEED);
        assert!(
            r.passed(),
            "{:?} {:?}\n{}",
            r.unmet_expectations,
            r.violations,
            r.trace
        );
    }
}

#[test]
fn retrying_a_call_tpf_answered_is_caught() {
    assert_fails(
        &mutant(Mutation::RetryAnsweredCalls),
        "happy-path",
        "transport-only-retries",
    );
}

#[test]
fn writing_to_a_tpf_table_is_caught() {
    let s = edited(|spec| spec.wakeup.table_name = "tpf_execution".into());
    assert_fails(&s, "happy-path", "writes-only-the-wakeup-table");
}

#[test]
fn routing_a_retry_to_the_lease_wait_is_caught() {
    assert_fails(
        &mutant(Mutation::RetryAsLease),
        "retries-then-success",
        "routes-follow-tpf-outcome",
    );
}

#[test]
fn ignoring_next_due_at_is_caught() {
    assert_fails(
        &mutant(Mutation::IgnoreDueTime),
        "retries-then-success",
        "respects-tpf-due-time",
    );
}

#[test]
fn ending_while_tpf_is_parked_is_caught() {
    let s = mutant(Mutation::ParkedAsSucceeded);
    let failed = failed_checks(&s, &scenario(&s, "happy-path"));
    assert!(failed.contains(&"driver-ends-as-tpf-ends"), "{failed:?}");
    assert!(failed.contains(&"routes-follow-tpf-outcome"), "{failed:?}");
}

const ROU: &str = "remote-outcome-unknown-then-redrive";

#[test]
fn re_asking_tpf_after_a_remote_outcome_unknown_is_caught() {
    let s = mutant(Mutation::RemoteUnknownAs(ExecutionStatus::Running));
    assert_fails(&s, ROU, "routes-follow-tpf-outcome");
}

#[test]
fn ending_on_a_remote_outcome_unknown_as_if_tpf_had_decided_is_caught() {
    // Read as success, or as TPF's own failure: either way the driver ends as TPF did not.
    for read in [ExecutionStatus::Succeeded, ExecutionStatus::Failed] {
        let s = mutant(Mutation::RemoteUnknownAs(read));
        let failed = failed_checks(&s, &scenario(&subject(), ROU));
        for check in ["routes-follow-tpf-outcome", "driver-ends-as-tpf-ends"] {
            assert!(
                failed.contains(&check),
                "{read}: expected {check}, got {failed:?}"
            );
        }
    }
}

#[test]
fn a_second_live_driver_is_caught() {
    let s = subject();
    let mut sc = scenario(&s, "happy-path");
    sc.actions.push(Action {
        when: When::Start,
        step: None,
        nth: None,
        after_seconds: 0,
        act: Do::StartExtraDriver,
    });
    assert!(failed_checks(&s, &sc).contains(&"single-live-generation"));
}

#[test]
fn polling_instead_of_parking_is_caught() {
    assert_fails(
        &mutant(Mutation::PollInsteadOfParking),
        "happy-path",
        "parks-without-polling",
    );
}

#[test]
fn resuming_without_tpf_is_caught() {
    let s = mutant(Mutation::ResumeWithoutTpf);
    let failed = failed_checks(&s, &scenario(&s, "happy-path"));
    assert!(failed.contains(&"resume-goes-through-tpf"), "{failed:?}");
    assert!(failed.contains(&"driver-ends-as-tpf-ends"), "{failed:?}");
}

#[test]
fn waking_twice_for_one_park_is_caught() {
    assert_fails(
        &mutant(Mutation::ParkTwice),
        "happy-path",
        "one-resume-per-park",
    );
}

#[test]
fn dropping_the_pinned_identity_is_caught() {
    assert_fails(
        &mutant(Mutation::DropIdentity),
        "happy-path",
        "calls-carry-pinned-identity",
    );
}

#[test]
fn a_redrive_that_starts_no_driver_is_caught() {
    let s = subject();
    let mut sc = scenario(&s, "retries-exhausted-then-redrive");
    sc.faults.lose_redrive_starts = true;
    assert!(failed_checks(&s, &sc).contains(&"redrive-continues-same-execution"));
}

#[test]
fn an_idempotency_key_without_the_iteration_is_caught() {
    assert_fails(
        &mutant(Mutation::KeyWithoutIteration),
        "happy-path",
        "idempotency-keys-and-single-commits",
    );
}

#[test]
fn a_generation_that_never_hands_over_is_caught() {
    // More retries than half the operation budget: each costs a call and a wait, so a
    // generation that does not hand over checkpoints past its budget.
    let s = edited(|spec| spec.max_iterations = 1_000_000);
    let base = subject();
    let sc = matrix::derive_for(&base, u64::from(base.program.spec.operation_budget) / 2)
        .into_iter()
        .find(|x| x.name == "history-rollover")
        .unwrap();
    let failed = failed_checks(&s, &sc);
    assert!(
        failed.contains(&"history-within-proven-bound"),
        "{failed:?}"
    );
    assert!(failed.contains(&"definition-within-limits"), "{failed:?}");
    // The unbroken driver hands over on the same scenario and stays within its budget.
    let ok = proof::run_one(&base, &sc, proof::SEED);
    assert!(
        ok.passed(),
        "{:?} {:?}",
        ok.unmet_expectations,
        ok.violations
    );
    assert!(ok.metrics.generations >= 2);
}

/// The static checks stop the proof before any scenario runs, with their verdict alone.
fn assert_static_verdict(s: &Subject, code: &str) {
    let reports = proof::prove(s, &proof::scenarios(s, Vec::new()), proof::SEED);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].name, proof::STATIC_CHECKS);
    assert!(reports[0]
        .violations
        .iter()
        .all(|v| v.invariant == "definition-within-limits"));
    assert!(
        reports[0]
            .violations
            .iter()
            .any(|v| v.detail.contains(code)),
        "{:?}",
        reports[0].violations
    );
}

#[test]
fn a_spec_whose_budget_does_not_hold_its_loop_is_rejected_statically() {
    assert_static_verdict(
        &edited(|spec| spec.max_iterations = 1_000_000),
        "DURABLE_SPEC_BUDGET",
    );
    assert_static_verdict(
        &edited(|spec| spec.operation_budget = 30_000),
        "DURABLE_SPEC_BUDGET",
    );
}

#[test]
fn a_spec_whose_budget_could_write_more_than_the_state_cap_is_rejected_statically() {
    // 2,500 operations are under the service's 3,000, but at the bound of one checkpoint they
    // could write more than its 100 MiB.
    assert_static_verdict(
        &edited(|spec| spec.operation_budget = 2_500),
        "can write 122880000 bytes of state",
    );
}

#[test]
fn the_drivers_view_of_the_service_is_the_engines() {
    use tpf_durable_driver::limits;
    assert_eq!(limits::SERVICE_OPERATIONS, durable_interp::OPERATION_CAP);
    assert_eq!(
        limits::SERVICE_WRITTEN_STATE_BYTES,
        durable_interp::WRITTEN_STATE_CAP
    );
}

#[test]
fn a_spec_without_the_pinned_identity_is_rejected_statically() {
    assert_static_verdict(
        &edited(|spec| spec.identity.release_version.clear()),
        "DURABLE_SPEC_IDENTITY",
    );
}

#[test]
fn a_spec_that_polls_is_rejected_statically() {
    assert_static_verdict(
        &edited(|spec| spec.wakeup.late_recheck_seconds = 1),
        "DURABLE_SPEC_PACING",
    );
}

#[test]
fn a_driver_that_never_waits_is_stopped_and_named() {
    let s = mutant(Mutation::NoWaits);
    let failed = failed_checks(&s, &scenario(&s, "lease-held-elsewhere"));
    for check in [
        "run-within-budget",
        "calls-paced-by-tpf",
        "generations-paced",
        "lease-wait-bounded",
    ] {
        assert!(failed.contains(&check), "{check}: {failed:?}");
    }
}

/// The longest wait the checks must reject: about three years.
const YEARS: u64 = 99_999_999;

#[test]
fn a_lease_wait_of_zero_or_years_is_caught() {
    for s in [0, YEARS] {
        assert_fails(
            &mutant(Mutation::LeaseWait(s)),
            "lease-held-elsewhere",
            "lease-wait-bounded",
        );
    }
}

#[test]
fn a_recheck_wait_of_zero_or_years_is_caught() {
    for s in [0, YEARS] {
        assert_fails(
            &mutant(Mutation::RecheckWait(s)),
            "token-registration-fails",
            "recheck-wait-bounded",
        );
    }
}

#[test]
fn every_check_has_a_mutant_here() {
    // The names this file asserts, against the backend's checks: a new check without a mutant
    // fails here.
    let text = include_str!("durable_negative.rs");
    for c in tpf_sfn_mapping::invariants::CHECKS {
        assert!(
            text.contains(&format!("\"{}\"", c.name)),
            "no mutant for {}",
            c.name
        );
    }
}

#[test]
fn a_driver_whose_replay_takes_another_path_is_caught() {
    assert_fails(
        &mutant(Mutation::NonDeterministic),
        "happy-path",
        "driver-ends-as-tpf-ends",
    );
}

struct Pending;

impl Variant for Pending {
    fn run(
        &self,
        _: &EngineOps<'_, '_>,
        _: &DurableSpec,
        _: &DriverInput,
    ) -> Result<Result<End, Stop>, Stop> {
        poll::ready(std::future::pending::<Result<End, Stop>>())
    }
}

#[test]
fn an_engine_that_leaves_a_future_pending_gives_no_verdict() {
    let s = subject().with_variant(Arc::new(Pending));
    let r = proof::run_one(&s, &scenario(&s, "happy-path"), proof::SEED);
    assert!(!r.passed());
    let e = r
        .error
        .expect("a pending poll is a harness bug, reported as the run's error");
    assert!(e.contains(durable_interp::error::PENDING_POLL), "{e}");
}

#[test]
fn a_key_that_changes_when_a_step_runs_again_is_caught() {
    // The function dies after each of its first calls; the next invocation's delivery of the
    // same call must carry the same key, or TPF sees a new call with nothing new to answer.
    let s = mutant(Mutation::KeyPerInvocation);
    assert_fails(&s, "function-crashes-after-calls", "calls-paced-by-tpf");
    let ok = proof::run_one(
        &subject(),
        &scenario(&subject(), "function-crashes-after-calls"),
        proof::SEED,
    );
    assert!(
        ok.passed(),
        "{:?} {:?}",
        ok.unmet_expectations,
        ok.violations
    );
}
