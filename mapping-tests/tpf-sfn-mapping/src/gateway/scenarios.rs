//! The catalogue's scenarios as runs over a [`GatewayWorld`], and the runner: set the world
//! up, run the scenario's acts and assertions, let every driver finish, evaluate every check.

use tpf_model::gateway::BindingStore;
use tpf_model::{PipelineDef, StepDef};
use tpf_wire::gateway::binding::{attr, DeliveryOutcome};
use tpf_wire::gateway::host::refused_registration_wait_seconds;
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, durable_execution_name, generation_sort_key,
};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{ActionRequest, ActionResponse, FunctionError, Operation};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{interaction_attr, AttrValue, ExecutionStatus, Item};

use super::catalogue::{ScenarioInfo, CATALOGUE};
use super::checks::{evaluate, GatewayCheck, Violation, EXECUTION_ENDED_ERROR};
use super::engine::{DriverStatus, DriverView, GatewayEngine, ProviderRefusal};
use super::failure::{ensure, NotFailedBy, ScenarioFailure};
use super::faults::FaultPoint;
use super::trace::{SendResult, Stream};
use super::world::{GatewayWorld, Mutation, Saturation, Setup, WorldError, HOUR, MINUTE, TENANT};
use tpf_model::coordinator::remote::TRANSITION_WORKER_FAILURE;

type Run<E> = fn(&mut GatewayWorld<E>) -> Outcome;

/// A scenario's (or one of its parts') verdict.
type Outcome<T = ()> = Result<T, ScenarioFailure>;

/// What one scenario run found.
#[derive(Debug, Clone)]
pub struct ScenarioReport {
    pub name: &'static str,
    /// The scenario's own assertions.
    pub outcome: Outcome,
    pub violations: Vec<Violation>,
}

impl ScenarioReport {
    pub fn passed(&self) -> bool {
        self.outcome.is_ok() && self.violations.is_empty()
    }

    /// The scenario's own assertion that failed, as a report prints it.
    pub fn assertion(&self) -> Option<String> {
        self.outcome.as_ref().err().map(ToString::to_string)
    }

    /// `Ok` when the run failed as a catalogue run reports it and broke `check` (a driver or a
    /// host that breaks the check's invariant), else what it did instead.
    pub fn failed_by(&self, check: GatewayCheck) -> Result<(), Box<NotFailedBy>> {
        let reported = !unexpected(std::slice::from_ref(self)).is_empty();
        if reported && self.violations.iter().any(|v| v.check == check) {
            return Ok(());
        }
        Err(Box::new(NotFailedBy {
            scenario: self.name,
            check: check.name(),
            outcome: self.outcome.clone(),
            violations: self.violations.clone(),
        }))
    }
}

/// The setup a scenario runs in (an engine is built for it: a driver's park timeout comes
/// from the pipeline's awaits).
pub fn setup_for(info: &ScenarioInfo) -> Setup {
    let minutes = |m: i64| m * MINUTE;
    match info.name {
        "second-await" => Setup::with_pipeline(PipelineDef::new(vec![
            StepDef::internal("Validate Order Request"),
            StepDef::await_scalar("Await Kitchen", minutes(30)),
            StepDef::internal("Prepare"),
            StepDef::await_scalar("Await Courier", minutes(20)),
            StepDef::internal("Finalize"),
        ])),
        "sequential-awaits" => Setup::with_pipeline(PipelineDef::new(vec![
            StepDef::await_scalar("Await One", minutes(30)),
            StepDef::internal("Between One"),
            StepDef::await_scalar("Await Two", minutes(30)),
            StepDef::internal("Between Two"),
            StepDef::await_scalar("Await Three", minutes(30)),
            StepDef::internal("Finalize"),
        ])),
        "concurrent-awaits" => Setup::with_pipeline(PipelineDef::new(vec![
            StepDef::internal("Validate Order Request"),
            StepDef::await_itemized("Collect Approvals", 3, minutes(30)),
            StepDef::internal("Finalize"),
        ])),
        "index-lag" => Setup {
            index_lag_ms: minutes(10),
            ..Setup::restaurant()
        },
        "admission-declines-without-claiming" => Setup {
            tenant_quota: 4,
            ..Setup::restaurant()
        },
        "tpf-06-transition-response-before-ack"
        | "tpf-07-duplicate-transition-delivery"
        | "transition-timeout" => Setup {
            remote_transitions: true,
            ..Setup::restaurant()
        },
        _ => Setup::restaurant(),
    }
}

/// Runs one scenario on `engine`, with the world's `mutations`.
pub fn run_scenario<E: GatewayEngine>(
    info: &'static ScenarioInfo,
    engine: E,
    mutations: &[Mutation],
) -> ScenarioReport {
    run_in(info, setup_for(info), engine, mutations).0
}

/// Runs one scenario in `setup` on `engine`, with the world's `mutations`: its report and the
/// world it leaves (the trace a summary reads).
pub fn run_in<E: GatewayEngine>(
    info: &'static ScenarioInfo,
    setup: Setup,
    engine: E,
    mutations: &[Mutation],
) -> (ScenarioReport, GatewayWorld<E>) {
    let mut w = GatewayWorld::new(engine, setup);
    for m in mutations {
        w.mutate(*m);
    }
    let outcome = match runner::<E>(info.name) {
        None => Err(ScenarioFailure::NotRunnable {
            scenario: info.name,
            gap: info.gap.unwrap_or_default(),
        }),
        Some(run) => run(&mut w).and_then(|()| Ok(finish(&mut w)?)),
    };
    let report = ScenarioReport {
        name: info.name,
        outcome,
        violations: evaluate(&w),
    };
    (report, w)
}

/// Every runnable scenario of the catalogue, each on an engine `make` builds for its setup.
pub fn run_catalogue<E: GatewayEngine>(mut make: impl FnMut(&Setup) -> E) -> Vec<ScenarioReport> {
    CATALOGUE
        .iter()
        .filter(|s| s.runs)
        .map(|s| run_scenario(s, make(&setup_for(s)), &[]))
        .collect()
}

/// Every runnable scenario of the catalogue with every await's deadline `await_timeout_ms`
/// (a user's contract's), each on an engine `make` builds for its setup; the first engine
/// that cannot be built ends the run.
pub fn try_run_catalogue<E: GatewayEngine, X>(
    await_timeout_ms: i64,
    mut make: impl FnMut(&Setup) -> Result<E, X>,
) -> Result<Vec<ScenarioReport>, X> {
    CATALOGUE
        .iter()
        .filter(|s| s.runs)
        .map(|s| {
            let setup = setup_for(s).with_await_timeout_ms(await_timeout_ms);
            let engine = make(&setup)?;
            Ok(run_in(s, setup, engine, &[]).0)
        })
        .collect()
}

/// What is wrong with a catalogue run: every scenario that failed, except a finding
/// ([`super::catalogue::FINDINGS`]) that failed by its own assertion and broke no check but the
/// ones it names; and a finding that passed (the protocol was fixed: the entry goes).
pub fn unexpected(reports: &[ScenarioReport]) -> Vec<String> {
    let finding = |name: &str| {
        super::catalogue::FINDINGS
            .iter()
            .find(|f| f.scenario == name)
    };
    reports
        .iter()
        .filter_map(|r| match (finding(r.name), &r.outcome) {
            (Some(f), Err(e))
                if e.to_string().contains(f.fails_with)
                    && r.violations.iter().all(|v| f.breaks.contains(&v.check)) =>
            {
                None
            }
            (Some(_), Ok(())) if r.violations.is_empty() => Some(format!(
                "{}: a finding that passes now; remove it from FINDINGS",
                r.name
            )),
            _ if r.passed() => None,
            _ => Some(format!("{}: {:?} {:?}", r.name, r.outcome, r.violations)),
        })
        .collect()
}

/// The run of a scenario, by name.
pub fn runner<E: GatewayEngine>(name: &str) -> Option<Run<E>> {
    let run: Run<E> = match name {
        "tpf-01-lost-ingress-response" => tpf_01,
        "tpf-02-replay-before-submit" => {
            |w| faulted_happy_path(w, FaultPoint::SubmitBeforeTpfCommit, 1)
        }
        "tpf-03-submit-committed-before-checkpoint" => tpf_03,
        "tpf-04-work-failure-before-admission" => {
            |w| faulted_happy_path(w, FaultPoint::WorkBeforeAction, 2)
        }
        "tpf-05-work-committed-before-ack" => {
            |w| faulted_happy_path(w, FaultPoint::WorkAfterAction, 1)
        }
        "tpf-06-transition-response-before-ack" => {
            |w| transition_redelivery(w, FaultPoint::TransitionAfterAction)
        }
        "tpf-07-duplicate-transition-delivery" => {
            |w| transition_redelivery(w, FaultPoint::TransitionBeforeAction)
        }
        "tpf-08-submitter-failure-before-binding" => {
            |w| faulted_happy_path(w, FaultPoint::BindBeforeProviderBinding, 1)
        }
        "tpf-09-binding-before-submitter-checkpoint" => tpf_09,
        "tpf-10-completion-before-binding" => tpf_10,
        "tpf-11-completion-after-binding" => tpf_11,
        "tpf-12-duplicate-stream-delivery" => tpf_12,
        "tpf-13-callback-accepted-before-response-loss" => tpf_13,
        "tpf-14-closed-callback-next-generation" => tpf_14,
        "tpf-15-generation-race" => tpf_15,
        "tpf-16-stopped-execution-reconstructs" => tpf_16,
        "tpf-17-alias-rollout" => tpf_17,
        "tpf-18-stream-failure-retained" => tpf_18,
        "tpf-19-missed-stream-record" => tpf_19,
        "tpf-20-callback-throttled" => {
            |w| faulted_happy_path(w, FaultPoint::CallbackApiThrottled, 1)
        }
        "tpf-21-retry-exhaustion-redrive" => tpf_21,
        "tpf-22-await-deadline" => tpf_22,
        "second-await" => |w| handed_over(w, 2),
        "sequential-awaits" => |w| handed_over(w, 3),
        "concurrent-awaits" => concurrent_awaits,
        "missing-registration" => missing_registration,
        "index-lag" => index_lag,
        "provider-loss-before-registration" => provider_loss_before_registration,
        "registration-refused-until-deadline" => registration_refused_until_deadline,
        "suspended-timeout" => suspended_timeout,
        "provider-history-loss" => provider_history_loss,
        "lost-answer-and-history-loss" => lost_answer_and_history_loss,
        "new-release-mid-flight" => new_release_mid_flight,
        "transition-timeout" => transition_timeout,
        "admission-declines-without-claiming" => admission_declines_without_claiming,
        _ => return None,
    };
    Some(run)
}

// --- helpers ------------------------------------------------------------------------------

const KEY: &str = "order-42";
/// How long a scenario waits for something before it calls it missing.
const PATIENCE: i64 = 2 * HOUR;

/// Lets every driver end (or `PATIENCE` pass).
fn finish<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Result<(), WorldError> {
    let until = w.now() + 3 * PATIENCE;
    w.run_until_cond(until, |w| {
        w.engine.drivers().iter().all(|d| d.status.ended())
    })?;
    Ok(())
}

fn name(key: &str, generation: i64) -> String {
    durable_execution_name(Some(TENANT), Some(key), generation).unwrap_or_default()
}

fn driver<E: GatewayEngine>(w: &GatewayWorld<E>, name: &str) -> Option<DriverView> {
    w.engine.drivers().into_iter().find(|d| d.name == name)
}

/// The application starts `KEY`; answers its TPF execution once TPF has it.
fn submit<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome<String> {
    w.ingress(KEY).map_err(ingress)?;
    admitted(w)
}

/// `KEY`'s TPF execution, once TPF has it.
fn admitted<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome<String> {
    until(w, "TPF has the execution", |w| {
        w.execution_of(KEY).is_some()
    })?;
    Ok(w.execution_of(KEY)
        .map(|r| r.execution_id)
        .unwrap_or_default())
}

fn until<E: GatewayEngine>(
    w: &mut GatewayWorld<E>,
    what: &str,
    done: impl FnMut(&GatewayWorld<E>) -> bool,
) -> Outcome {
    let limit = w.now() + PATIENCE;
    if w.run_until_cond(limit, done)? {
        Ok(())
    } else {
        Err(ScenarioFailure::NotWithin {
            what: what.to_owned(),
            minutes: PATIENCE / MINUTE,
        })
    }
}

/// The failure of a call to TPF's gateway or starter.
fn gateway(call: &'static str) -> impl FnOnce(FunctionError) -> ScenarioFailure {
    move |error| ScenarioFailure::Gateway { call, error }
}

fn ingress(error: FunctionError) -> ScenarioFailure {
    gateway("the ingress")(error)
}

/// The failure of a call to the provider.
fn provider(call: &'static str) -> impl FnOnce(ProviderRefusal) -> ScenarioFailure {
    move |source| ScenarioFailure::Provider { call, source }
}

/// The failure of a key or an input TPF's rules refused.
fn key(what: &'static str) -> impl FnOnce(JavaError) -> ScenarioFailure {
    move |source| ScenarioFailure::Key { what, source }
}

fn missing(what: &str) -> ScenarioFailure {
    ScenarioFailure::Missing(what.to_owned())
}

/// Until generation `generation` of the execution has registered its callback.
fn parked<E: GatewayEngine>(w: &mut GatewayWorld<E>, execution: &str, generation: i64) -> Outcome {
    until(w, &format!("generation {generation} registers"), |w| {
        w.bindings()
            .find_registration(TENANT, execution, generation)
            .ok()
            .flatten()
            .is_some()
    })
}

fn complete<E: GatewayEngine>(w: &mut GatewayWorld<E>, execution: &str) -> Outcome {
    Ok(w.complete(execution)?)
}

fn tpf_status<E: GatewayEngine>(w: &GatewayWorld<E>, execution: &str) -> Option<ExecutionStatus> {
    w.coordinator()
        .status(TENANT, execution, w.now())
        .ok()
        .map(|r| r.status)
}

fn expect_tpf<E: GatewayEngine>(
    w: &GatewayWorld<E>,
    execution: &str,
    want: ExecutionStatus,
) -> Outcome {
    let got = tpf_status(w, execution);
    if got == Some(want) {
        return Ok(());
    }
    Err(ScenarioFailure::Unmet {
        expected: want.to_string().into(),
        shown: format!("TPF's execution is {got:?}"),
    })
}

fn expect_driver<E: GatewayEngine>(
    w: &GatewayWorld<E>,
    name: &str,
    want: DriverStatus,
) -> Outcome<DriverView> {
    let d = driver(w, name).ok_or_else(|| missing(&format!("driver {name}")))?;
    if d.status != want {
        return Err(ScenarioFailure::Unmet {
            expected: format!("{want:?}").into(),
            shown: format!("driver {name} is {:?} ({:?})", d.status, d.error),
        });
    }
    Ok(d)
}

/// The driver failed with `TPF.ExecutionEnded`.
fn expect_ended_by_tpf<E: GatewayEngine>(w: &GatewayWorld<E>, name: &str) -> Outcome {
    let d = expect_driver(w, name, DriverStatus::Failed)?;
    ensure(
        d.error
            .as_ref()
            .is_some_and(|(e, _)| e == EXECUTION_ENDED_ERROR),
        EXECUTION_ENDED_ERROR,
        || format!("driver {name} failed with {:?}", d.error),
    )
}

fn row<E: GatewayEngine>(w: &GatewayWorld<E>, pk: &str, sk: &str) -> Option<Item> {
    let keys = w.bindings().keys();
    let items: Vec<Item> = w.bindings().items().cloned().collect();
    keys.into_iter()
        .zip(items)
        .find(|((p, s, _), _)| p == pk && s == sk)
        .map(|(_, i)| i)
}

fn first_interaction<E: GatewayEngine>(w: &GatewayWorld<E>, execution: &str) -> Outcome<String> {
    w.interactions()
        .into_iter()
        .find(|i| i.execution_id == execution)
        .map(|i| i.interaction_id)
        .ok_or_else(|| missing(&format!("await of execution {execution}")))
}

fn bound<E: GatewayEngine>(w: &GatewayWorld<E>, execution: &str, generation: i64) -> Outcome {
    let interaction = first_interaction(w, execution)?;
    let pk = binding_partition_key(TENANT, &interaction);
    let sk = generation_sort_key(generation).map_err(key("the BINDING row's sort key"))?;
    row(w, &pk, &sk)
        .map(|_| ())
        .ok_or_else(|| missing(&format!("BINDING {sk}")))
}

fn delivered<E: GatewayEngine>(
    w: &GatewayWorld<E>,
    execution: &str,
    generation: i64,
) -> Outcome<String> {
    let interaction = first_interaction(w, execution)?;
    let pk = binding_partition_key(TENANT, &interaction);
    let sk = delivered_sort_key(generation);
    match row(w, &pk, &sk).and_then(|i| i.get(attr::PROVIDER_OUTCOME).cloned()) {
        Some(AttrValue::S(o)) => Ok(o),
        _ => Err(missing(&sk)),
    }
}

fn received<E: GatewayEngine>(w: &GatewayWorld<E>, generation: i64) -> usize {
    w.trace()
        .sends
        .iter()
        .filter(|s| s.generation == generation && s.result.received())
        .count()
}

/// Submit, park, complete, finish; `SUCCEEDED` on one execution.
fn happy_path<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome<String> {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    complete(w, &execution)?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    ensure(w.executions().len() == 1, "one TPF execution", || {
        format!("{} TPF executions", w.executions().len())
    })?;
    Ok(execution)
}

/// `point` fired `times`, and TPF holds one await interaction.
fn fired_with_one_await<E: GatewayEngine>(
    w: &GatewayWorld<E>,
    point: FaultPoint,
    times: usize,
) -> Outcome {
    ensure(
        w.faults().count(point) == times,
        "the fault to fire as often as armed",
        || format!("{} fired {} times", point.name(), w.faults().count(point)),
    )?;
    let interactions = w.interactions().len();
    ensure(interactions == 1, "one await interaction", || {
        format!("{interactions} await interactions")
    })
}

/// The happy path with `point` armed `times`; the point must have fired that often.
fn faulted_happy_path<E: GatewayEngine>(
    w: &mut GatewayWorld<E>,
    point: FaultPoint,
    times: usize,
) -> Outcome {
    for _ in 0..times {
        w.arm(point);
    }
    let execution = happy_path(w)?;
    fired_with_one_await(w, point, times)?;
    match point {
        FaultPoint::SubmitBeforeTpfCommit => {
            let submits = w.trace().calls(Operation::Submit).count();
            ensure(submits >= 2, "SUBMIT sent again", || {
                format!("{submits} SUBMIT calls")
            })?;
        }
        FaultPoint::BindBeforeProviderBinding => bound(w, &execution, 1)?,
        FaultPoint::CallbackApiThrottled => {
            let throttled = w
                .trace()
                .sends
                .iter()
                .any(|s| s.result == SendResult::NotSent("callback-api-throttled"));
            ensure(throttled, "a throttled callback send", || {
                "no throttled send".to_owned()
            })?;
            delivered(w, &execution, 1)?;
            ensure(received(w, 1) == 1, "one signal", || {
                "not one signal".to_owned()
            })?;
        }
        _ => {}
    }
    Ok(())
}

// --- TPF's scenarios ----------------------------------------------------------------------

/// TPF's work function declines its first three deliveries (a saturated executor twice, the
/// tenant's transition quota once): none claims or writes, each comes back after TPF's
/// saturated delay, and the execution then runs as on the happy path.
fn admission_declines_without_claiming<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let injected = [
        Saturation::Worker,
        Saturation::Worker,
        Saturation::TenantQuota,
    ];
    for s in injected {
        w.saturate(s);
    }
    happy_path(w)?;
    let declines = &w.trace().declines;
    let denials: Vec<&str> = declines.iter().map(|d| d.denial).collect();
    ensure(
        denials
            == [
                "WORKER_SATURATED",
                "WORKER_SATURATED",
                "TENANT_TRANSITION_QUOTA_SATURATED",
            ],
        "two worker saturations, then the tenant's quota",
        || format!("declined: {denials:?}"),
    )?;
    for d in declines {
        ensure(
            d.requeued && d.version_before == d.version_after,
            "a declined delivery re-enqueued, neither claimed nor written",
            || format!("a declined delivery claimed or wrote: {d:?}"),
        )?;
    }
    let spaced = declines
        .windows(2)
        .all(|p| p[1].at_ms - p[0].at_ms >= SATURATED_DELAY_MS);
    ensure(spaced, "declines spaced by TPF's saturated delay", || {
        "a declined item came back before the saturated delay".to_owned()
    })?;
    let interactions = w.interactions().len();
    ensure(interactions == 1, "one await interaction", || {
        format!("{interactions} await interactions")
    })
}

/// TPF's `worker.saturated-delay` default.
const SATURATED_DELAY_MS: i64 = 1_000;

fn tpf_01<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.arm(FaultPoint::IngressAfterProviderStart);
    ensure(w.ingress(KEY).is_err(), "the ingress answer lost", || {
        "the lost answer was not lost".to_owned()
    })?;
    let again = w.ingress(KEY).map_err(ingress)?;
    ensure(
        again.durable_execution_name == name(KEY, 1) && again.status_code == 202,
        "202 for generation 1's name",
        || format!("the second start answered {again:?}"),
    )?;
    let starts = w
        .trace()
        .starts
        .iter()
        .filter(|s| s.name == name(KEY, 1))
        .count();
    ensure(starts == 2, "two starts of generation 1", || {
        format!("{starts} starts")
    })?;
    let execution = admitted(w)?;
    parked(w, &execution, 1)?;
    complete(w, &execution)?;
    finish(w)?;
    let gen1 = w
        .engine
        .drivers()
        .iter()
        .filter(|d| d.name == name(KEY, 1))
        .count();
    ensure(gen1 == 1, "one generation-1 driver", || {
        format!("{gen1} generation-1 drivers")
    })?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    ensure(w.executions().len() == 1, "one TPF execution", || {
        "not one execution".to_owned()
    })
}

fn tpf_03<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    faulted_happy_path(w, FaultPoint::SubmitAfterTpfCommit, 1)?;
    let duplicate = w.trace().calls(Operation::Submit).any(|c| {
        c.answer
            .as_ref()
            .ok()
            .and_then(|t| ActionResponse::read(t).ok())
            .is_some_and(|r| r.duplicate)
    });
    ensure(duplicate, "a SUBMIT answered duplicate", || {
        "no SUBMIT answered duplicate".to_owned()
    })
}

/// TPF's transition-redelivery flow: the transition worker's mapping off, the first request
/// sent twice more, `point` armed, the mapping on; then the happy path. TPF asserts one await
/// interaction and SUCCEEDED; here also that the duplicates ran, that the responses nobody
/// waited for were never committed (the execution parked once, under one claim), and that a
/// duplicate never made TPF's outcome uncertain (no `REMOTE_OUTCOME_UNKNOWN`).
fn transition_redelivery<E: GatewayEngine>(w: &mut GatewayWorld<E>, point: FaultPoint) -> Outcome {
    w.set_transition_mapping(false);
    let execution = submit(w)?;
    until(
        w,
        "the work function sends the first transition request",
        |w| w.transition_requests() > 0,
    )?;
    ensure(
        w.copy_transition_requests(2) == 2,
        "the first request copied twice",
        || "not one request to copy".to_owned(),
    )?;
    w.arm(point);
    w.set_transition_mapping(true);
    parked(w, &execution, 1)?;
    let interactions = w.interactions().len();
    ensure(interactions == 1, "one await interaction", || {
        format!("{interactions} await interactions once parked")
    })?;
    complete(w, &execution)?;
    finish(w)?;
    // The failed delivery comes back after the visibility timeout, once the execution moved on.
    until(w, "the transition-request queue drains", |w| {
        w.transition_requests() == 0
    })?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    fired_with_one_await(w, point, 1)?;
    ensure(w.executions().len() == 1, "one TPF execution", || {
        format!("{} TPF executions", w.executions().len())
    })?;
    // Two segments (to the await, after it) each answered once; the first request's other
    // deliveries ran too (the redelivered one after the execution had moved on), and their
    // responses stayed on the queue.
    let (ran, _) = w.transition_runs();
    ensure(ran >= 4, "the duplicates run (4 or more requests)", || {
        format!("the transition worker ran {ran} requests: the duplicates did not run")
    })?;
    let untaken = w.untaken_transition_responses();
    ensure(
        !untaken.is_empty()
            && untaken
                .iter()
                .all(|r| r.request_id == untaken[0].request_id),
        "the first request's responses alone left untaken",
        || {
            format!(
                "{} responses left, not all the first request's",
                untaken.len()
            )
        },
    )?;
    parked_once_never_unknown(w, &execution)
}

/// TPF's record of `execution` parked once and was never `REMOTE_OUTCOME_UNKNOWN`: no response
/// but the claim's own was committed.
fn parked_once_never_unknown<E: GatewayEngine>(w: &GatewayWorld<E>, execution: &str) -> Outcome {
    let log = w.coordinator().log();
    let parks = log.count(execution, "park");
    ensure(parks == 1, "one park", || {
        format!("the execution parked {parks} times")
    })?;
    let unknown = log.count(execution, "remote-outcome-unknown");
    ensure(unknown == 0, "never REMOTE_OUTCOME_UNKNOWN", || {
        "REMOTE_OUTCOME_UNKNOWN recorded".to_owned()
    })
}

/// The transition worker's mapping off past the work function's request timeout, until the
/// retry sent its own request.
fn transition_timeout<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.set_transition_mapping(false);
    let execution = submit(w)?;
    until(w, "the call times out and TPF schedules a retry", |w| {
        w.execution_of(KEY)
            .is_some_and(|r| r.status == ExecutionStatus::WaitRetry)
    })?;
    let record = w.execution_of(KEY).ok_or_else(|| missing("execution"))?;
    ensure(
        record.error_code.as_deref() == Some(TRANSITION_WORKER_FAILURE),
        "TPF's transition-worker failure",
        || format!("the retry's error is {:?}", record.error_code),
    )?;
    until(w, "the retry sends its own request", |w| {
        w.transition_requests() == 2
    })?;
    w.set_transition_mapping(true);
    parked(w, &execution, 1)?;
    complete(w, &execution)?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    let interactions = w.interactions().len();
    ensure(interactions == 1, "one await interaction", || {
        format!("{interactions} await interactions")
    })?;
    let untaken = w.untaken_transition_responses();
    ensure(
        untaken.len() == 1,
        "the first request's one response left untaken",
        || {
            format!(
                "{} responses left, not the first request's one",
                untaken.len()
            )
        },
    )?;
    parked_once_never_unknown(w, &execution)
}

fn tpf_09<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    faulted_happy_path(w, FaultPoint::BindAfterProviderBinding, 1)?;
    let answers: Vec<_> = w
        .trace()
        .calls(Operation::RegisterCallback)
        .filter_map(|c| c.answer.as_ref().ok())
        .filter_map(|t| ActionResponse::read(t).ok())
        .map(|r| r.binding_created)
        .collect();
    ensure(
        answers == [false],
        "one answered registration, bindingCreated false",
        || format!("the answered registrations said bindingCreated {answers:?}"),
    )
}

fn tpf_10<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    w.complete_before_next_register(&execution);
    parked(w, &execution, 1)?;
    finish(w)?;
    bound(w, &execution, 1)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    ensure(received(w, 1) <= 1, "at most one signal", || {
        "more than one signal".to_owned()
    })
}

fn tpf_11<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = happy_path(w)?;
    let outcome = delivered(w, &execution, 1)?;
    ensure(
        outcome == DeliveryOutcome::CallbackAccepted.as_str(),
        "CALLBACK_ACCEPTED delivery evidence",
        || format!("DELIVERED says {outcome}"),
    )?;
    ensure(received(w, 1) == 1, "one signal", || {
        "not one signal".to_owned()
    })
}

fn tpf_12<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = happy_path(w)?;
    let interaction = first_interaction(w, &execution)?;
    let pk = binding_partition_key(TENANT, &interaction);
    let sk = generation_sort_key(1).map_err(key("the BINDING row's sort key"))?;
    let binding = row(w, &pk, &sk).ok_or_else(|| missing(&format!("BINDING {sk}")))?;
    let mut bare = Item::new();
    bare.insert(
        attr::RECORD_TYPE.to_owned(),
        AttrValue::S("BINDING".to_owned()),
    );
    let sends = w.trace().sends.len();
    for image in [binding, bare] {
        let d = w.deliver_stream_record(Stream::Bindings, image);
        ensure(
            d.acknowledged(),
            "every record of the batch acknowledged",
            || format!("a record of the batch was {d:?}"),
        )?;
    }
    ensure(w.trace().sends.len() == sends, "no send again", || {
        "the batch sent again".to_owned()
    })
}

fn tpf_13<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.arm(FaultPoint::WakeupBeforeProviderCallback);
    w.arm(FaultPoint::WakeupAfterProviderCallback);
    let execution = happy_path(w)?;
    let outcome = delivered(w, &execution, 1)?;
    ensure(
        outcome == DeliveryOutcome::ProviderStateSucceeded.as_str(),
        "PROVIDER_STATE_SUCCEEDED delivery evidence",
        || format!("DELIVERED says {outcome}"),
    )?;
    ensure(received(w, 1) == 1, "one signal", || {
        format!("{} signals", received(w, 1))
    })
}

fn gen1_callback<E: GatewayEngine>(w: &GatewayWorld<E>, execution: &str) -> Outcome<String> {
    w.bindings()
        .find_registration(TENANT, execution, 1)
        .ok()
        .flatten()
        .map(|r| r.provider.callback_id)
        .ok_or_else(|| missing("registration of generation 1"))
}

fn gen1_arn<E: GatewayEngine>(w: &GatewayWorld<E>) -> Outcome<String> {
    driver(w, &name(KEY, 1))
        .map(|d| d.arn)
        .ok_or_else(|| missing("generation-1 driver"))
}

fn tpf_14<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let callback = gen1_callback(w, &execution)?;
    w.fail_callback(&callback, "States.Timeout")
        .map_err(provider("the callback's close"))?;
    parked(w, &execution, 2)?;
    complete(w, &execution)?;
    finish(w)?;
    bound(w, &execution, 2)?;
    expect_driver(w, &name(&execution, 2), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn resume_input(
    record: &tpf_wire::records::ExecutionRecord,
    generation: i64,
) -> Outcome<ExecutionInput> {
    ExecutionInput::resume_execution(
        &record.tenant_id,
        &record.execution_id,
        generation,
        ReleaseIdentity {
            pipeline_id: Some(&record.pipeline_id),
            contract_version: Some(&record.contract_version),
            release_version: Some(&record.release_version),
        },
    )
    .map_err(key("the resumed generation's input"))
}

fn tpf_15<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let record = w.execution_of(KEY).ok_or_else(|| missing("execution"))?;
    w.operator_start(resume_input(&record, 1)?)
        .map_err(gateway("the operator's start"))?;
    parked(w, &execution, 2)?;
    until(w, "generation 2 binds", |w| bound(w, &execution, 2).is_ok())?;
    complete(w, &execution)?;
    until(w, "generation 2 is signalled", |w| received(w, 2) == 1)?;
    let registration = w
        .bindings()
        .find_registration(TENANT, &execution, 1)
        .ok()
        .flatten()
        .ok_or_else(|| missing("generation-1 registration"))?;
    let d = w.deliver_stream_record(Stream::Bindings, registration.to_item());
    ensure(
        d.acknowledged(),
        "the replayed registration acknowledged",
        || format!("the replayed registration was {d:?}"),
    )?;
    ensure(received(w, 1) == 0, "no signal to generation 1", || {
        "generation 1 was signalled".to_owned()
    })?;
    let second = name(&execution, 2);
    until(w, "generation 2 ends", |w| {
        driver(w, &second).is_some_and(|d| d.status.ended())
    })?;
    expect_driver(w, &second, DriverStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Running)?;
    let arn = gen1_arn(w)?;
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn tpf_16<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let arn = gen1_arn(w)?;
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    complete(w, &execution)?;
    finish(w)?;
    let second = name(&execution, 2);
    let gen2 = w
        .engine
        .drivers()
        .iter()
        .filter(|d| d.name == second)
        .count();
    ensure(gen2 == 1, "one generation-2 driver", || {
        format!("{gen2} generation-2 drivers")
    })?;
    expect_driver(w, &second, DriverStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Stopped)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn tpf_17<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    w.activate("v2");
    complete(w, &execution)?;
    w.ingress("order-43").map_err(ingress)?;
    until(w, "the new submission parks", |w| {
        w.execution_of("order-43")
            .is_some_and(|r| r.status == ExecutionStatus::WaitingExternal)
    })?;
    let newer = w
        .execution_of("order-43")
        .ok_or_else(|| missing("second execution"))?;
    complete(w, &newer.execution_id)?;
    finish(w)?;
    let first = w.execution_of(KEY).ok_or_else(|| missing("execution"))?;
    ensure(
        first.release_version == "sha256:v1" && newer.release_version == "sha256:v2",
        "v1 for the first execution, v2 for the second",
        || {
            format!(
                "releases {} and {}",
                first.release_version, newer.release_version
            )
        },
    )?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded)?;
    expect_driver(w, &name("order-43", 1), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn tpf_18<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let mut malformed = Item::new();
    malformed.insert(
        attr::RECORD_TYPE.to_owned(),
        AttrValue::S("BINDING".to_owned()),
    );
    malformed.insert(
        attr::PK.to_owned(),
        AttrValue::S(format!("{TENANT}#broken")),
    );
    let d = w.deliver_stream_record(Stream::Bindings, malformed);
    ensure(d.acknowledged(), "the malformed row acknowledged", || {
        format!("the malformed row was {d:?}")
    })?;
    let mut orphan = Item::new();
    for (n, v) in [
        (interaction_attr::TENANT_ID, TENANT),
        (interaction_attr::EXECUTION_ID, "execution-without-driver"),
        (interaction_attr::INTERACTION_ID, "interaction-orphan"),
        (interaction_attr::CORRELATION_ID, "correlation-orphan"),
        (interaction_attr::STATUS, "COMPLETED"),
    ] {
        orphan.insert(n.to_owned(), AttrValue::S(v.to_owned()));
    }
    w.push_stream_record(Stream::Interactions, orphan);
    w.run_for(10 * MINUTE)?;
    let failed = w.stream_failures().len();
    ensure(failed == 1, "one record at the failure destination", || {
        format!("{failed} records reached the failure destination")
    })?;
    let tries = w
        .trace()
        .stream
        .iter()
        .filter(|e| e.disposition.contains("RegistrationMissing"))
        .count();
    ensure(
        tries as u32 == w.setup().stream_max_attempts,
        "as many deliveries as the stream's attempts",
        || format!("{tries} deliveries"),
    )?;
    happy_path(w).map(|_| ())
}

fn tpf_19<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.set_stream_mapping(Stream::Interactions, false);
    w.set_stream_mapping(Stream::Bindings, false);
    let execution = happy_path(w)?;
    ensure(
        w.trace().sends.is_empty(),
        "no signal with the streams off",
        || "a signal was sent".to_owned(),
    )?;
    ensure(
        delivered(w, &execution, 1).is_err(),
        "no DELIVERED row with the streams off",
        || "a DELIVERED row".to_owned(),
    )
}

fn tpf_21<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.persist(FaultPoint::PipelineTransition);
    let execution = submit(w)?;
    until(w, "TPF fails the execution", |w| {
        tpf_status(w, &execution) == Some(ExecutionStatus::Failed)
    })?;
    ensure(
        !w.coordinator().dead_letters().is_empty(),
        "a dead-letter envelope",
        || "no dead-letter envelope".to_owned(),
    )?;
    until(w, "generation 1 ends", |w| {
        driver(w, &name(KEY, 1)).is_some_and(|d| d.status.ended())
    })?;
    expect_ended_by_tpf(w, &name(KEY, 1))?;
    w.clear(FaultPoint::PipelineTransition);
    let redriven = w.redrive(&execution).map_err(gateway("REDRIVE"))?;
    ensure(
        redriven.execution_status.as_deref() == Some("QUEUED"),
        "REDRIVE answers QUEUED",
        || format!("REDRIVE answered {:?}", redriven.execution_status),
    )?;
    let record = w.execution_of(KEY).ok_or_else(|| missing("execution"))?;
    w.operator_start(resume_input(&record, 1)?)
        .map_err(gateway("the operator's start"))?;
    parked(w, &execution, 2)?;
    complete(w, &execution)?;
    finish(w)?;
    let second = name(&execution, 2);
    ensure(
        second != name(KEY, 1),
        "a new name for generation 2",
        || "the generations share a name".to_owned(),
    )?;
    expect_driver(w, &second, DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn tpf_22<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Failed)?;
    expect_ended_by_tpf(w, &name(KEY, 1))
}

// --- the plan's cases ---------------------------------------------------------------------

/// One generation per await: each parks once and the next await hands over.
fn handed_over<E: GatewayEngine>(w: &mut GatewayWorld<E>, awaits: i64) -> Outcome {
    let execution = submit(w)?;
    for generation in 1..=awaits {
        parked(w, &execution, generation)?;
        complete(w, &execution)?;
    }
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    for generation in 1..=awaits {
        let key = if generation == 1 {
            KEY.to_owned()
        } else {
            execution.clone()
        };
        let d = expect_driver(w, &name(&key, generation), DriverStatus::Succeeded)?;
        let last = generation == awaits;
        let final_output = d
            .output
            .as_deref()
            .is_some_and(|o| o.contains("\"resultJson\""));
        ensure(
            final_output == last,
            "the final output from the last generation only",
            || format!("generation {generation} answered {:?}", d.output),
        )?;
    }
    let refused = w
        .trace()
        .calls(Operation::RegisterCallback)
        .filter(|c| c.answer.is_err())
        .count();
    ensure(refused == 0, "no registration refused", || {
        format!("{refused} registrations refused")
    })
}

fn concurrent_awaits<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    for _ in 0..3 {
        complete(w, &execution)?;
        w.run_for(MINUTE)?;
    }
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    // Each completed item may wake the generation that waits and hand over once. TPF's
    // wake-up rule (a registration binds the first await listed) binds an item already
    // delivered to an older generation, wakes the new one at once and hands over without
    // bound; our wake-up binds only open or undelivered awaits (docs/runtime.md).
    let generations = w.trace().starts.iter().map(|s| s.input.generation).max();
    ensure(
        generations <= Some(4),
        "at most 4 generations for 3 items",
        || format!("{generations:?} generations for 3 items: hand-overs without bound"),
    )?;
    let open = w
        .interactions()
        .iter()
        .filter(|i| !i.status.terminal())
        .count();
    ensure(open == 0, "no open await", || {
        format!("{open} awaits still open")
    })
}

fn missing_registration<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    until(w, "TPF parks", |w| {
        tpf_status(w, &execution) == Some(ExecutionStatus::WaitingExternal)
    })?;
    complete(w, &execution)?;
    finish(w)?;
    let retried = w
        .trace()
        .stream
        .iter()
        .any(|e| e.disposition.contains("RegistrationMissing"));
    ensure(
        retried,
        "the completion retried for its registration",
        || "the completion's record was never retried for its registration".to_owned(),
    )?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    expect_driver(w, &name(KEY, 1), DriverStatus::Succeeded).map(|_| ())
}

fn stop_parked_then_finish<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome<String> {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let arn = gen1_arn(w)?;
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    parked(w, &execution, 2)?;
    complete(w, &execution)?;
    finish(w)?;
    expect_driver(w, &name(&execution, 2), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    Ok(execution)
}

fn index_lag<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    stop_parked_then_finish(w)?;
    let replaced = w
        .trace()
        .reconciles
        .iter()
        .any(|r| r.decision.starts_with("replace"));
    ensure(replaced, "a replacement by the reconciler", || {
        format!("the reconciler decided {:?}", w.trace().reconciles)
    })
}

fn provider_loss_before_registration<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.ingress(KEY).map_err(ingress)?;
    let arn = gen1_arn(w)?;
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    let execution = admitted(w)?;
    parked(w, &execution, 2)?;
    complete(w, &execution)?;
    finish(w)?;
    expect_driver(w, &name(&execution, 2), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    ensure(w.executions().len() == 1, "one TPF execution", || {
        "not one execution".to_owned()
    })
}

/// TPF's gateway refuses every registration until the await's deadline has passed: each
/// generation waits TPF's ladder at its generation after its refused registration, then hands
/// over (a wait that overruns it by a minute is no longer prompt); the await's timeout ends
/// TPF's execution and its last generation.
fn registration_refused_until_deadline<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.persist(FaultPoint::BindBeforeProviderBinding);
    let execution = submit(w)?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Failed)?;
    let answered = w
        .trace()
        .calls(Operation::RegisterCallback)
        .filter(|c| c.answer.is_ok())
        .count();
    ensure(answered == 0, "no registration answered", || {
        format!("{answered} registrations answered")
    })?;
    // Each generation's start, by the engine's drivers (a durable hand-over is the engine's
    // own start, which the world's trace does not see).
    let mut started: Vec<(i64, i64)> = w
        .engine
        .drivers()
        .iter()
        .filter_map(|d| {
            let input = ExecutionInput::read(&d.input).ok()?;
            Some((input.generation, d.started_at_ms))
        })
        .collect();
    started.sort_unstable();
    let last = started.last().map_or(0, |(g, _)| *g);
    ensure(last > 1, "a hand-over after a refused registration", || {
        format!("{} generation(s)", started.len())
    })?;
    expect_ended_by_tpf(w, &name(&execution, last))?;
    for pair in started.windows(2) {
        let ((generation, _), (next_generation, next)) = (pair[0], pair[1]);
        ensure(
            next_generation == generation + 1,
            "one driver per generation",
            || format!("generation {next_generation} after {generation}"),
        )?;
        let refused = w
            .trace()
            .calls(Operation::RegisterCallback)
            .filter(|c| ActionRequest::read(&c.request).is_ok_and(|r| r.generation == generation))
            .map(|c| c.at_ms)
            .max()
            .ok_or_else(|| missing(&format!("generation {generation}'s registration")))?;
        let wait = i64::try_from(refused_registration_wait_seconds(generation)).unwrap_or(0) * 1000;
        ensure(
            (wait..=wait + MINUTE).contains(&(next - refused)),
            "each hand-over after TPF's ladder's wait at its generation",
            || {
                format!(
                    "generation {next_generation} started {} ms after generation {generation}'s refused registration, its wait {wait} ms",
                    next - refused
                )
            },
        )?;
    }
    Ok(())
}

fn suspended_timeout<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let deadline = w
        .interactions()
        .iter()
        .filter_map(|i| i.deadline_epoch_ms)
        .max()
        .ok_or_else(|| missing("deadline"))?;
    w.run_until(deadline + 2 * MINUTE)?;
    ensure(
        complete(w, &execution).is_err(),
        "the completion after the deadline refused",
        || "a completion after the deadline was admitted".to_owned(),
    )?;
    finish(w)?;
    expect_tpf(w, &execution, ExecutionStatus::Failed)?;
    expect_ended_by_tpf(w, &name(KEY, 1))
}

fn new_release_mid_flight<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    w.activate("v2");
    let arn = gen1_arn(w)?;
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    parked(w, &execution, 2)?;
    complete(w, &execution)?;
    finish(w)?;
    expect_driver(w, &name(&execution, 2), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)
}

fn provider_history_loss<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    let execution = submit(w)?;
    parked(w, &execution, 1)?;
    let arn = gen1_arn(w)?;
    w.arm(FaultPoint::ProviderHistoryUnavailable);
    w.stop_driver(&arn).map_err(provider("StopExecution"))?;
    complete(w, &execution)?;
    finish(w)?;
    let fired = w.faults().count(FaultPoint::ProviderHistoryUnavailable);
    ensure(fired == 1, "one failed history read", || {
        format!("the history read failed {fired} times")
    })?;
    expect_driver(w, &name(&execution, 2), DriverStatus::Succeeded)?;
    expect_tpf(w, &execution, ExecutionStatus::Succeeded)?;
    ensure(w.executions().len() == 1, "one TPF execution", || {
        "not one execution".to_owned()
    })
}

fn lost_answer_and_history_loss<E: GatewayEngine>(w: &mut GatewayWorld<E>) -> Outcome {
    w.arm(FaultPoint::WakeupAfterProviderCallback);
    w.arm(FaultPoint::ProviderHistoryUnavailable);
    let execution = happy_path(w)?;
    let generations = w.trace().starts.iter().map(|s| s.input.generation).max();
    ensure(generations == Some(1), "one generation", || {
        format!("a redundant generation: {generations:?} generations for one signal")
    })?;
    ensure(received(w, 1) == 1, "one signal", || {
        "not one signal".to_owned()
    })?;
    delivered(w, &execution, 1).map(|_| ())
}
