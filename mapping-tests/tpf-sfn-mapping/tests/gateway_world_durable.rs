//! The gateway world on Lambda durable functions: the gateway driver
//! (`tpf_durable_driver::gateway`) on the replay engine, its park timeout the scenario
//! pipeline's longest await, against every runnable scenario of the catalogue. Every scenario
//! passes and keeps every check, except the protocol's findings, which fail by their own
//! assertion as on every engine.
//!
//! The replay engine refuses a send to a closed callback as the service does
//! (`CallbackTimeoutException`), and TPF's wake-up counts that as gone: a mutant engine that
//! answers another code shows the scenarios that depend on it failing.

use std::rc::Rc;

use durable_interp::engine::Failed;
use durable_interp::{poll, Context, Program, Stop, CALLBACK_CLOSED};
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::{self, PollDecision, StepRetry, TPF_STEP};
use tpf_durable_driver::ops::WriteFailed;
use tpf_durable_driver::{drive_gateway, GatewayEnd, GatewayOps, GatewayRun};
use tpf_sfn_mapping::durable::gateway_engine::DurableGatewayEngine;
use tpf_sfn_mapping::durable::program::EngineOps;
use tpf_sfn_mapping::gateway::catalogue::{self, scenario, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::engine::{
    DriverView, EngineError, GatewayEngine, GatewayHost, ProviderRefusal, Started,
};
use tpf_sfn_mapping::gateway::scenarios::{run_catalogue, run_scenario, setup_for, ScenarioReport};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway_proof::{durable_verdict, Verdict};
use tpf_sfn_wakeup::provider::ProviderState;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, DriverCheckpoint, ExecutionCheckpoint, Mapper,
};
use tpf_wire::records::ExecutionStatus as TpfStatus;

fn engine(s: &Setup) -> DurableGatewayEngine {
    engine_swept(s, None)
}

/// The driver for a deployment that sweeps TPF every `scheduled` seconds (`sweeper.mode =
/// "schedule"`), in a world that runs that schedule; `None`: TPF's driver's own sweeping.
fn engine_swept(s: &Setup, scheduled: Option<u64>) -> DurableGatewayEngine {
    let longest_await_seconds =
        u64::try_from((s.longest_await_timeout_ms().max(1) + 999) / 1000).unwrap_or(u64::MAX);
    DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds,
            scheduled_sweep: scheduled.is_some(),
        },
        T0,
    )
    .with_scheduled_sweep(scheduled)
}

#[test]
fn every_runnable_scenario_keeps_every_check_on_lambda_durable_functions() {
    catalogue_keeps_every_check(engine);
}

/// The same with the deployment's scheduled sweep (every minute): the driver's checks sweep
/// only at a condition's start and after a `WAIT_RETRY`, and every check still holds.
#[test]
fn every_runnable_scenario_keeps_every_check_with_the_scheduled_sweep() {
    catalogue_keeps_every_check(|s: &Setup| engine_swept(s, Some(60)));
}

/// The scheduled sweep saves the durable driver gateway calls: a poll through TPF's queued work
/// makes fewer SWEEPs. (No scenario of the catalogue needs the schedule on this driver: its
/// conditions start, and so sweep, after every park and in every generation.)
#[test]
fn the_scheduled_sweep_saves_the_durable_driver_sweeps() {
    use tpf_sfn_mapping::gateway::catalogue::scenario;
    use tpf_sfn_mapping::gateway::scenarios::{run_in, setup_for};
    use tpf_wire::gateway::Operation;
    let info = scenario("tpf-11-completion-after-binding").unwrap();
    let count =
        |trace: &tpf_sfn_mapping::gateway::trace::Trace, op: Operation| trace.calls(op).count();
    let mut setup = setup_for(info);
    setup.work_delay_ms = 20 * 60 * 1000;
    let (own, own_world) = run_in(info, setup.clone(), engine_swept(&setup, None), &[]);
    let (swept, swept_world) = run_in(info, setup.clone(), engine_swept(&setup, Some(60)), &[]);
    assert!(own.passed() && swept.passed(), "{own:?}\n{swept:?}");
    let (own, swept) = (own_world.trace(), swept_world.trace());
    assert!(
        count(swept, Operation::Status) > 2,
        "the driver polled through the queue"
    );
    assert!(
        count(swept, Operation::Sweep) < count(own, Operation::Sweep),
        "{} against {}",
        count(swept, Operation::Sweep),
        count(own, Operation::Sweep)
    );
    assert!(!swept.scheduled_sweeps.is_empty());
}

fn catalogue_keeps_every_check(make: impl FnMut(&Setup) -> DurableGatewayEngine) {
    let reports = run_catalogue(make);
    assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
    let mut broken = Vec::new();
    for r in &reports {
        // The protocol's findings fail by their own assertion on every engine.
        if let Some(f) = FINDINGS.iter().find(|f| f.scenario == r.name) {
            let says = r.outcome.as_ref().err();
            assert!(
                says.is_some_and(|e| e.to_string().contains(f.fails_with)),
                "{}: a finding that no longer fails as declared: {says:?}",
                r.name
            );
            assert!(
                matches!(durable_verdict(r), Verdict::KnownFailure { .. }),
                "{}",
                r.name
            );
            continue;
        }
        if !r.passed() || !r.violations.is_empty() {
            broken.push(format!("{}: {:?} {:?}", r.name, r.outcome, r.violations));
        }
        assert_eq!(durable_verdict(r), Verdict::Passed, "{}", r.name);
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The replay engine with one difference: a closed callback is refused with
/// `InvalidParameterValueException`, which TPF's wake-up does not count as gone (what the
/// engine answered before it followed the service).
struct NotGone(DurableGatewayEngine);

impl GatewayEngine for NotGone {
    fn kind(&self) -> WakeEngine {
        self.0.kind()
    }
    fn start(&mut self, name: &str, input_json: &str, now_ms: i64) -> Result<Started, EngineError> {
        self.0.start(name, input_json, now_ms)
    }
    fn send_callback_success(
        &mut self,
        callback_id: &str,
        result_json: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        self.0
            .send_callback_success(callback_id, result_json, now_ms)
            .map_err(|r| match r.code.as_str() {
                CALLBACK_CLOSED => ProviderRefusal {
                    code: "InvalidParameterValueException".into(),
                    message: r.message,
                },
                _ => r,
            })
    }
    fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
        cause: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        self.0
            .send_callback_failure(callback_id, error, cause, now_ms)
    }
    fn stop(&mut self, execution_arn: &str, now_ms: i64) -> Result<(), ProviderRefusal> {
        self.0.stop(execution_arn, now_ms)
    }
    fn driver(&self, execution_arn: &str) -> Option<DriverView> {
        self.0.driver(execution_arn)
    }
    fn drivers(&self) -> Vec<DriverView> {
        self.0.drivers()
    }
    fn callback_state(&self, callback_id: &str) -> ProviderState {
        self.0.callback_state(callback_id)
    }
    fn take_status_changes(&mut self) -> Vec<String> {
        self.0.take_status_changes()
    }
    fn run_until_idle(&mut self, host: &mut dyn GatewayHost) -> Result<(), EngineError> {
        self.0.run_until_idle(host)
    }
    fn next_timer(&self) -> Option<i64> {
        self.0.next_timer()
    }
    fn advance_to(&mut self, now_ms: i64) {
        self.0.advance_to(now_ms)
    }
}

/// Mutant: the closed callback's answer not counted as gone. tpf-13 then writes no
/// DELIVERED#1 (the wake-up retries the send instead of reading the history), and the
/// history-loss scenario never reads the history, so its injected failure never fires.
#[test]
fn a_closed_callback_answer_not_counted_as_gone_fails_tpf_13_and_the_history_loss() {
    for (name, says) in [
        (
            "tpf-13-callback-accepted-before-response-loss",
            "DELIVERED#1",
        ),
        ("provider-history-loss", "the history read failed 0 times"),
    ] {
        let info = catalogue::scenario(name).expect(name);
        let setup = tpf_sfn_mapping::gateway::scenarios::setup_for(info);
        let good = run_scenario(info, engine(&setup), &[]);
        assert!(good.passed(), "{name}: {:?}", good.outcome);
        let bad = run_scenario(info, NotGone(engine(&setup)), &[]);
        let e = bad.outcome.as_ref().expect_err(name);
        assert!(e.to_string().contains(says), "{name}: {e}");
        assert!(
            matches!(durable_verdict(&bad), Verdict::Failed { .. }),
            "{name}"
        );
    }
}

/// TPF's durable driver sets no callback timeout: its callback waits until the durable
/// execution's own timeout (TPF's template: `DurableExecutionTimeoutSeconds`, 2,592,000 s by
/// default). The driver program with that as its park is TPF's host's gap, and fails by name.
#[test]
fn tpfs_host_gap_a_durable_park_without_timeout_breaks_await_deadline_while_parked() {
    const EXECUTION_TIMEOUT_SECONDS: u64 = 2_592_000;
    let info = scenario("tpf-22-await-deadline").unwrap();
    let engine = DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds: EXECUTION_TIMEOUT_SECONDS,
            scheduled_sweep: false,
        },
        T0,
    );
    run_scenario(info, engine, &[])
        .failed_by(GatewayCheck::AwaitDeadlineWhileParked)
        .unwrap();
}

/// How a mutant durable driver breaks the flow (the shipped `drive_gateway` under an `Ops`
/// wrapper, run by [`Mutant`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Break {
    /// TPF's durable driver parks at every await of a generation: where the driver would hand
    /// over, it runs again in the same generation (from the checkpoint, under its own
    /// execution name, its operations renamed so the replay tells the runs apart) and starts
    /// nothing. Each run parks once; the second registers a second callback in the generation.
    ParkAtEveryAwait,
    /// The driver hands over, then runs on in its own generation.
    RunOnAfterHandOver,
    /// STATUS names a release other than the execution's.
    StatusOnAnotherRelease,
    /// After TPF's FAILED, the driver sends REDRIVE.
    RedriveOnFailure,
    /// The driver polls SWEEP + STATUS in its own steps, waiting this many seconds between
    /// polls, and never hands over (the shipped driver's wait for TPF's state is one condition
    /// on TPF's ladder, handing over when its checks run out).
    PollEvery(u64),
    /// The driver's condition checks TPF again at once after every answer still in progress
    /// (its wait strategy's every delay 0 s instead of TPF's ladder).
    NoPollWait,
    /// A generation whose registration failed for good hands over at once (no wait of TPF's
    /// ladder before the hand-over).
    NoRefusedWait,
}

const ANOTHER_RELEASE: &str = "sha256:another-release";

struct Mutant {
    run: GatewayRun,
    breaks: Break,
}

/// The engine's operations under a run's prefix, broken as `breaks` says.
struct MutantOps<'c, 'a> {
    ops: EngineOps<'c, 'a>,
    prefix: String,
    breaks: Break,
}

impl MutantOps<'_, '_> {
    /// SWEEP + STATUS, then a wait of `seconds`, until TPF's status is no longer in progress.
    async fn poll_every(
        &self,
        name: &str,
        poll: &StatePoll,
        seconds: u64,
    ) -> Result<PollEnd, Stop> {
        for round in 0.. {
            let step = |what: &str| format!("{}{name}-{what}-{round}", self.prefix);
            let _ = self
                .ops
                .gateway(&step("sweep"), &poll.sweep, &TPF_STEP)
                .await?;
            match self
                .ops
                .gateway(&step("status"), &poll.status, &TPF_STEP)
                .await?
            {
                Err(f) => return Ok(PollEnd::CheckFailed(f)),
                Ok(r) => {
                    let status = r.execution_status.unwrap_or_default();
                    let in_progress = [TpfStatus::Queued, TpfStatus::Running, TpfStatus::WaitRetry]
                        .iter()
                        .any(|s| s.as_str() == status);
                    if !in_progress {
                        return Ok(PollEnd::Settled(status));
                    }
                }
            }
            self.ops.ctx.wait(&step("wait"), seconds)?;
        }
        unreachable!("the rounds end with TPF's status")
    }

    /// REDRIVE of the execution STATUS asks about, as TPF's operator would send it.
    fn redrive(status: &ActionRequest) -> ActionRequest {
        let execution = ExecutionCheckpoint::new(
            Some(&status.tenant_id),
            status.execution_id.as_deref(),
            status.pipeline_id.as_deref(),
            status.contract_version.as_deref(),
            status.release_version.as_deref(),
        )
        .unwrap();
        let driver = DriverCheckpoint::new(execution, status.generation).unwrap();
        ActionRequest::redrive(&driver, 0, Some("driver")).unwrap()
    }
}

impl GatewayOps for MutantOps<'_, '_> {
    type Stop = Stop;

    async fn checkpoint(&self, name: &str, value: &Value) -> Result<Value, Stop> {
        self.ops
            .checkpoint(&format!("{}{name}", self.prefix), value)
            .await
    }

    async fn gateway(
        &self,
        name: &str,
        request: &ActionRequest,
        retry: &StepRetry,
    ) -> Result<Result<ActionResponse, GatewayFailure>, Stop> {
        self.ops
            .gateway(&format!("{}{name}", self.prefix), request, retry)
            .await
    }

    async fn wait_for_state(&self, name: &str, poll: &StatePoll) -> Result<PollEnd, Stop> {
        if let Break::PollEvery(seconds) = self.breaks {
            return self.poll_every(name, poll, seconds).await;
        }
        if self.breaks == Break::NoPollWait {
            let name = format!("{}{name}", self.prefix);
            return self
                .ops
                .wait_for_state_by(&name, poll, &|state, n| match policy::decide(state, n) {
                    PollDecision::Again(_) => PollDecision::Again(0),
                    d => d,
                });
        }
        let mut poll = poll.clone();
        if self.breaks == Break::StatusOnAnotherRelease {
            poll.status.release_version = Some(ANOTHER_RELEASE.to_owned());
        }
        let name = format!("{}{name}", self.prefix);
        let end = self.ops.wait_for_state(&name, &poll).await?;
        if self.breaks == Break::RedriveOnFailure
            && end == PollEnd::Settled(TpfStatus::Failed.as_str().to_owned())
        {
            // Whatever TPF answers, the request was sent.
            let _ = self
                .ops
                .gateway(
                    &format!("{name}-redrive"),
                    &Self::redrive(&poll.status),
                    &TPF_STEP,
                )
                .await?;
        }
        Ok(end)
    }

    async fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> Result<CallbackEnd, Stop> {
        self.ops
            .await_callback(
                &format!("{}{name}", self.prefix),
                registration,
                timeout_seconds,
            )
            .await
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), Stop> {
        if self.breaks == Break::NoRefusedWait {
            return Ok(());
        }
        self.ops
            .wait(&format!("{}{name}", self.prefix), seconds)
            .await
    }

    async fn start_generation(
        &self,
        name: &str,
        next: &ExecutionInput,
    ) -> Result<Result<(), WriteFailed>, Stop> {
        if self.breaks == Break::ParkAtEveryAwait {
            return Ok(Ok(()));
        }
        self.ops
            .start_generation(&format!("{}{name}", self.prefix), next)
            .await
    }
}

impl Program for Mutant {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop> {
        let mut input = ExecutionInput::read_value(input, Mapper::Durable).expect("a start input");
        let runs_on = matches!(
            self.breaks,
            Break::ParkAtEveryAwait | Break::RunOnAfterHandOver
        );
        for run in 0.. {
            let ops = MutantOps {
                ops: EngineOps {
                    ctx,
                    gateway_arn: gateway_version_arn(),
                },
                prefix: format!("run-{run}-"),
                breaks: self.breaks,
            };
            match poll::ready(drive_gateway(&ops, &self.run, &input))?? {
                Ok(GatewayEnd::HandedOver(h)) if runs_on => {
                    input.resume_execution_id = Some(h.execution_id);
                }
                Ok(end) => return Ok(Ok(serde_json::to_value(end).unwrap_or(Value::Null))),
                Err(f) => {
                    return Ok(Err(Failed {
                        error: f.error,
                        cause: f.cause,
                    }))
                }
            }
        }
        unreachable!("the runs end the execution")
    }
}

/// `name` on the mutant driver: it fails, and by `check`.
fn mutant_fails_by(name: &str, breaks: Break, check: GatewayCheck) {
    mutant_report(name, breaks).failed_by(check).unwrap();
}

/// `name` on the mutant driver.
fn mutant_report(name: &str, breaks: Break) -> ScenarioReport {
    let info = scenario(name).unwrap();
    let setup = setup_for(info);
    let longest_await_seconds = u64::try_from(setup.longest_await_timeout_ms() / 1000).unwrap();
    let engine = DurableGatewayEngine::with_program(
        Rc::new(Mutant {
            run: GatewayRun {
                longest_await_seconds,
                scheduled_sweep: false,
            },
            breaks,
        }),
        T0,
    );
    run_scenario(info, engine, &[])
}

/// A durable generation whose registration failed for good hands over at once. Its
/// submitter's retries still space the generations (5 + 10 + 20 + 40 + 60 s on the replay
/// engine, which takes each delay's upper bound; the deployed SDK draws them with full jitter,
/// down to nothing), so the STATUS pace holds; the scenario's own assertion, TPF's ladder's
/// wait at each generation before its hand-over, fails.
#[test]
fn a_durable_driver_that_hands_over_at_once_after_a_refused_registration_fails_its_pace() {
    let report = mutant_report("registration-refused-until-deadline", Break::NoRefusedWait);
    let e = report.outcome.expect_err("the mutant keeps the pace");
    assert!(
        e.to_string()
            .contains("each hand-over after TPF's ladder's wait at its generation"),
        "{e}"
    );
}

#[test]
fn tpfs_host_gap_a_durable_second_park_in_a_generation_breaks_one_callback_per_generation() {
    mutant_fails_by(
        "second-await",
        Break::ParkAtEveryAwait,
        GatewayCheck::OneCallbackPerGeneration,
    );
}

#[test]
fn a_durable_generation_that_runs_on_after_its_hand_over_breaks_single_live_generation() {
    mutant_fails_by(
        "second-await",
        Break::RunOnAfterHandOver,
        GatewayCheck::SingleLiveGeneration,
    );
}

#[test]
fn a_durable_status_on_another_release_breaks_release_pinned() {
    mutant_fails_by(
        "tpf-11-completion-after-binding",
        Break::StatusOnAnotherRelease,
        GatewayCheck::ReleasePinned,
    );
}

#[test]
fn a_durable_driver_that_redrives_breaks_redrive_by_operator_only() {
    mutant_fails_by(
        "tpf-21-retry-exhaustion-redrive",
        Break::RedriveOnFailure,
        GatewayCheck::RedriveByOperatorOnly,
    );
}

#[test]
fn a_durable_condition_without_its_ladder_breaks_calls_paced_by_tpf() {
    mutant_fails_by(
        "tpf-11-completion-after-binding",
        Break::NoPollWait,
        GatewayCheck::CallsPacedByTpf,
    );
}

#[test]
fn hourly_durable_polls_break_retries_queued_when_due() {
    mutant_fails_by(
        "tpf-21-retry-exhaustion-redrive",
        Break::PollEvery(3_600),
        GatewayCheck::RetriesQueuedWhenDue,
    );
}

/// TPF's work claimed a day after the submission: the shipped driver hands over when its
/// condition's checks run out and every generation stays far under the service's 3,000
/// operations; a driver that polls in its own steps every 5 s and never hands over is failed
/// by the engine at the cap within two hours, and `history-within-budget` names it.
#[test]
fn a_durable_generation_that_never_hands_over_breaks_history_within_budget() {
    use tpf_sfn_mapping::gateway::checks::check;
    use tpf_sfn_mapping::gateway::world::GatewayWorld;

    const DAY_MS: i64 = 24 * 3_600_000;
    let run = |engine: DurableGatewayEngine, for_ms: i64| {
        let setup = Setup {
            work_delay_ms: DAY_MS,
            ..Setup::restaurant()
        };
        let mut w = GatewayWorld::new(engine, setup);
        w.ingress("order-1").unwrap();
        w.run_for(for_ms).unwrap();
        let generations = w.engine.drivers().len();
        (check(&w, GatewayCheck::HistoryWithinBudget), generations)
    };
    let longest_await_seconds =
        u64::try_from(Setup::restaurant().longest_await_timeout_ms() / 1000).unwrap();
    let gateway_run = || GatewayRun {
        longest_await_seconds,
        scheduled_sweep: false,
    };
    let (kept, generations) = run(
        DurableGatewayEngine::new(&gateway_version_arn(), gateway_run(), T0),
        DAY_MS,
    );
    assert!(kept.is_empty(), "{kept:?}");
    assert!(generations > 1, "the shipped driver handed over");
    let (broken, _) = run(
        DurableGatewayEngine::with_program(
            Rc::new(Mutant {
                run: gateway_run(),
                breaks: Break::PollEvery(5),
            }),
            T0,
        ),
        2 * 3_600_000,
    );
    assert!(
        broken
            .iter()
            .any(|v| v.check == GatewayCheck::HistoryWithinBudget
                && v.detail.contains("failed it at its cap")),
        "{broken:?}"
    );
}

/// The durable driver's callback times out 5 s after it parks: it polls TPF long before any
/// await's deadline, unsignalled.
#[test]
fn a_durable_park_that_times_out_early_breaks_parks_without_polling() {
    use tpf_sfn_mapping::gateway::scenarios::run_in;
    // On a minute's await deadline, so the hand-overs the early timeouts cause last a minute.
    let info = scenario("tpf-22-await-deadline").unwrap();
    let setup = setup_for(info).with_await_timeout_ms(60_000);
    let engine = DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds: 4,
            scheduled_sweep: false,
        },
        T0,
    );
    let (r, _) = run_in(info, setup, engine, &[]);
    r.failed_by(GatewayCheck::ParksWithoutPolling).unwrap();
}
