//! The gateway world on Step Functions: the driver compiled from August 2026's Restaurant
//! Approval with the gateway binding (its park timeout the scenario pipeline's longest await,
//! through `await-timeout-seconds`), run on the ASL interpreter through the gateway Task
//! binding, against every runnable scenario of the catalogue.

use serde_json::Value;
use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::asl::{self, StateMachine};
use tpf_sfn_compiler::sfn::states::gateway as state_names;
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::gateway::catalogue::{scenario, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::scenarios::{run_catalogue, run_scenario, setup_for, unexpected};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway::GatewayFunctions;
use tpf_sfn_mapping::sfn::gateway_engine::SfnGatewayEngine;
use tpf_sfn_mapping::sfn::gateway_proof::{STARTER, SUBMITTER_RETRY};

/// The engine over the compiled driver, its definition changed by `mutate` first (a driver
/// with one of TPF's host's gaps).
fn mutated_engine<'a>(
    transport: &'a str,
    mutate: impl Fn(&mut Value) + 'a,
) -> impl FnMut(&Setup) -> SfnGatewayEngine + 'a {
    budgeted_engine(transport, "", mutate)
}

/// The engine over the driver compiled with `extra` config (a `[history]` table), changed by
/// `mutate`, each generation held to the compiled event budget.
fn budgeted_engine<'a>(
    transport: &'a str,
    extra: &'a str,
    mutate: impl Fn(&mut Value) + 'a,
) -> impl FnMut(&Setup) -> SfnGatewayEngine + 'a {
    move |s: &Setup| {
        let await_seconds = (s.longest_await_timeout_ms().max(1) + 999) / 1000;
        let toml = format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{}\"\n\
             transport = \"{transport}\"\nqueue-url = \"http://localhost:4566/000000000000/tpf-gateway\"\n\
             starter-function-arn = \"{STARTER}\"\nawait-timeout-seconds = {await_seconds}\n{extra}",
            gateway_version_arn()
        );
        let out = compile(
            &Input {
                config: Some(("tpf-sfn.toml", &toml)),
                ..bundled::august_restaurant_input()
            },
            StepFunctions,
        )
        .unwrap();
        let functions = GatewayFunctions {
            gateway_arn: gateway_version_arn(),
            starter_arn: STARTER.into(),
        };
        let mut definition = serde_json::to_value(&out.driver).unwrap();
        mutate(&mut definition);
        let driver: StateMachine = asl::from_value("driver.asl.json", definition).unwrap();
        let scheduled = out.plan.binding.scheduled_sweep_seconds();
        SfnGatewayEngine::new(&out.sfn.machines.driver, driver, functions, T0)
            .unwrap()
            .with_proven_history(u64::from(out.sfn.budget.event_budget))
            .with_scheduled_sweep(scheduled)
    }
}

#[test]
fn every_runnable_scenario_passes_every_check_on_step_functions() {
    catalogue_passes("");
}

/// The same catalogue with TPF swept on the wake-path stack's schedule: the drivers sweep only
/// while TPF waits to retry and after a park, and every check still holds.
#[test]
fn every_runnable_scenario_passes_every_check_with_the_scheduled_sweep() {
    catalogue_passes(SCHEDULED);
}

/// `sweeper.mode = "schedule"` at EventBridge Scheduler's shortest rate.
const SCHEDULED: &str = "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(1 minute)\"\n";

fn catalogue_passes(extra: &str) {
    for transport in ["lambda", "queue"] {
        let reports = run_catalogue(budgeted_engine(transport, extra, |_| {}));
        assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
        let mut failed = Vec::new();
        for r in &reports {
            // The protocol's findings fail by their own assertion and the checks they name,
            // as on the test double; one that passes now must leave FINDINGS.
            if FINDINGS.iter().any(|f| f.scenario == r.name) {
                assert!(
                    !r.passed(),
                    "{transport}: {}: a finding that passes",
                    r.name
                );
                failed.extend(unexpected(std::slice::from_ref(r)));
                continue;
            }
            assert!(
                r.violations.is_empty(),
                "{transport}: {}: {:?}",
                r.name,
                r.violations
            );
            match SUBMITTER_RETRY.iter().find(|(name, _)| *name == r.name) {
                Some((_, expectation)) => {
                    let e = r.outcome.as_ref().expect_err(r.name);
                    assert!(
                        e.to_string().contains(expectation),
                        "{transport}: {}: {e}",
                        r.name
                    );
                }
                None if !r.passed() => failed.push(format!("{}: {:?}", r.name, r.outcome)),
                None => {}
            }
        }
        assert!(failed.is_empty(), "{transport}:\n{}", failed.join("\n"));
    }
}

/// The lateness `docs/benchmarks.md` reports, held to what the driver's wait ladder allows: a
/// retry goes on TPF's work queue no earlier than its `nextDue` (the sweep enqueues only due
/// work) and no later than one poll interval after it, 300 s at most.
#[test]
fn retries_are_queued_after_tpfs_next_due_within_one_poll_interval() {
    use tpf_sfn_mapping::gateway::catalogue::scenario;
    use tpf_sfn_mapping::gateway::scenarios::{run_in, setup_for};
    use tpf_wire::records::ExecutionStatus;

    let info = scenario("tpf-21-retry-exhaustion-redrive").unwrap();
    // With the scheduled sweep too: a driver still sweeps while TPF waits to retry.
    for extra in ["", SCHEDULED] {
        let setup = setup_for(info);
        let eng = budgeted_engine("lambda", extra, |_| {})(&setup);
        let (report, world) = run_in(info, setup, eng, &[]);
        assert!(report.passed(), "{report:?}");
        let retries: Vec<_> = world
            .trace()
            .dispatches
            .iter()
            .filter(|d| d.status == ExecutionStatus::WaitRetry)
            .collect();
        assert!(!retries.is_empty(), "the scenario retries");
        for d in retries {
            let late = d.at_ms - d.next_due_ms;
            assert!(
                (0..=300_000).contains(&late),
                "{extra}: a retry queued {late} ms after its nextDue: {d:?}"
            );
        }
    }
}

/// Runs `name` on the compiled driver changed by `mutate`: it fails, and by `check`.
fn fails_by(name: &str, mutate: impl Fn(&mut Value), check: GatewayCheck) {
    let info = scenario(name).unwrap();
    let mut make = mutated_engine("lambda", mutate);
    run_scenario(info, make(&setup_for(info)), &[])
        .failed_by(check)
        .unwrap();
}

/// The driver's states, by name.
fn states(definition: &mut Value) -> &mut serde_json::Map<String, Value> {
    definition["States"].as_object_mut().unwrap()
}

/// TPF's driver sets no callback timeout: the compiled park without its `TimeoutSeconds`.
fn park_without_timeout(definition: &mut Value) {
    let parks: Vec<String> = states(definition)
        .iter()
        .filter(|(_, s)| {
            s["Catch"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["ErrorEquals"] == serde_json::json!(["States.Timeout"]))
            })
        })
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(parks.len(), 1, "one park: {parks:?}");
    let park = states(definition).get_mut(&parks[0]).unwrap();
    assert!(park
        .as_object_mut()
        .unwrap()
        .remove("TimeoutSeconds")
        .is_some());
}

/// TPF's driver parks at every await: the route's "waiting again after a park hands over"
/// choice removed, so a second await parks again in the same generation.
fn park_at_every_await(definition: &mut Value) {
    let mut removed = 0;
    for state in states(definition).values_mut() {
        if let Some(choices) = state["Choices"].as_array_mut() {
            let before = choices.len();
            choices.retain(|c| {
                !c["And"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|t| t["BooleanEquals"] == Value::Bool(true)))
            });
            removed += before - choices.len();
        }
    }
    assert_eq!(removed, 1, "one hand-over choice");
}

#[test]
fn tpfs_host_gap_a_step_functions_park_without_timeout_breaks_await_deadline_while_parked() {
    fails_by(
        "tpf-22-await-deadline",
        park_without_timeout,
        GatewayCheck::AwaitDeadlineWhileParked,
    );
}

#[test]
fn tpfs_host_gap_a_step_functions_second_park_in_a_generation_breaks_one_callback_per_generation() {
    fails_by(
        "second-await",
        park_at_every_await,
        GatewayCheck::OneCallbackPerGeneration,
    );
}

/// STATUS names another release than the execution's: its `releaseVersion` a literal instead
/// of the checkpoint's.
fn status_on_another_release(definition: &mut Value) {
    fn rewrite(v: &mut Value) -> usize {
        match v {
            Value::Object(m) if m.get("operation") == Some(&Value::from("STATUS")) => {
                let had = m.remove("releaseVersion.$").is_some();
                m.insert("releaseVersion".into(), Value::from(ANOTHER_RELEASE));
                usize::from(had)
            }
            Value::Object(m) => m.values_mut().map(rewrite).sum(),
            Value::Array(a) => a.iter_mut().map(rewrite).sum(),
            _ => 0,
        }
    }
    assert_eq!(rewrite(definition), 1, "one STATUS request");
}

const ANOTHER_RELEASE: &str = "sha256:another-release";

#[test]
fn a_step_functions_status_on_another_release_breaks_release_pinned() {
    fails_by(
        "tpf-11-completion-after-binding",
        status_on_another_release,
        GatewayCheck::ReleasePinned,
    );
}

/// The route without its history-budget choice: the generation polls on past the iterations
/// the compiler sized for its event budget.
fn no_budget_hand_over(definition: &mut Value) {
    let choices = states(definition)[state_names::ROUTE]["Choices"]
        .as_array_mut()
        .expect("the route's choices");
    let before = choices.len();
    choices.retain(|c| c.get("NumericGreaterThanEquals").is_none());
    assert_eq!(before - choices.len(), 1, "one budget choice");
}

/// TPF's work claimed a day after the submission: the driver polls all day at the ladder's
/// longest wait. Compiled with the smallest event budget the config takes, the driver hands
/// over and every generation stays under it; without its budget choice, one generation
/// writes past it, and `history-within-budget` names it.
#[test]
fn a_step_functions_generation_without_its_budget_hand_over_breaks_history_within_budget() {
    use tpf_sfn_mapping::gateway::checks::check;
    use tpf_sfn_mapping::gateway::engine::GatewayEngine;
    use tpf_sfn_mapping::gateway::world::GatewayWorld;

    const HISTORY: &str = "[history]\nevent-budget = 1000\n";
    const DAY_MS: i64 = 24 * 3_600_000;
    let run = |mutate: fn(&mut Value)| {
        let setup = Setup {
            work_delay_ms: DAY_MS,
            ..Setup::restaurant()
        };
        let engine = budgeted_engine("lambda", HISTORY, mutate)(&setup);
        let mut w = GatewayWorld::new(engine, setup);
        w.ingress("order-1").unwrap();
        w.run_for(DAY_MS).unwrap();
        let generations = w.engine.drivers().len();
        (check(&w, GatewayCheck::HistoryWithinBudget), generations)
    };
    let (kept, generations) = run(|_| {});
    assert!(kept.is_empty(), "{kept:?}");
    assert!(generations > 1, "the compiled driver handed over");
    let (broken, generations) = run(no_budget_hand_over);
    assert_eq!(generations, 1);
    assert!(
        broken.iter().any(
            |v| v.check == GatewayCheck::HistoryWithinBudget && v.detail.contains("limit 1000")
        ),
        "{broken:?}"
    );
}

/// The poll loop's Wait at `seconds`, whatever the ladder's rung.
fn polls_every(seconds: u64) -> impl Fn(&mut Value) {
    move |definition: &mut Value| {
        let wait = states(definition)
            .get_mut(state_names::WAIT)
            .and_then(Value::as_object_mut)
            .expect("the poll's wait");
        assert!(wait.remove("SecondsPath").is_some());
        wait.insert("Seconds".into(), Value::from(seconds));
    }
}

#[test]
fn step_functions_hourly_polls_break_retries_queued_when_due() {
    fails_by(
        "tpf-21-retry-exhaustion-redrive",
        polls_every(3_600),
        GatewayCheck::RetriesQueuedWhenDue,
    );
}

/// A poll loop that does not wait asks TPF again at once, until the engine's budget stops it.
#[test]
fn step_functions_polls_without_a_wait_break_calls_paced_by_tpf() {
    fails_by(
        "tpf-11-completion-after-binding",
        polls_every(0),
        GatewayCheck::CallsPacedByTpf,
    );
}

/// The driver before its hand-over was paced: a registration that failed for good hands over
/// at once, without the ladder's wait at its generation.
fn hand_over_at_once_after_a_refused_registration(definition: &mut Value) {
    let catches = states(definition)[state_names::PARK]["Catch"]
        .as_array_mut()
        .expect("the park's catches");
    let all = catches
        .iter_mut()
        .find(|c| c["ErrorEquals"] == serde_json::json!(["States.ALL"]))
        .expect("the park's catch-all");
    assert_eq!(all["Next"], state_names::REFUSED);
    all["Next"] = Value::from(state_names::HAND_OVER);
}

/// A registration TPF keeps refusing, handed over without a wait: each generation reads TPF,
/// registers, is refused and starts the next at once, thousands of them in no virtual time
/// until the engine's budget stops the run (the paced driver: 16 generations until the
/// await's deadline).
#[test]
fn a_step_functions_driver_that_hands_over_at_once_after_a_refused_registration_breaks_calls_paced_by_tpf(
) {
    use tpf_sfn_mapping::gateway::engine::GatewayEngine;
    use tpf_sfn_mapping::gateway::scenarios::run_in;

    let info = scenario("registration-refused-until-deadline").unwrap();
    let setup = setup_for(info);
    let engine = mutated_engine("lambda", hand_over_at_once_after_a_refused_registration)(&setup);
    let (report, world) = run_in(info, setup, engine, &[]);
    report.failed_by(GatewayCheck::CallsPacedByTpf).unwrap();
    let generations = world.engine.drivers().len();
    assert!(generations > 1_000, "{generations} generations");
    let paced = run_scenario(
        info,
        mutated_engine("lambda", |_| {})(&setup_for(info)),
        &[],
    );
    assert!(paced.passed(), "{paced:?}");
}

/// The hand-over Task goes back to the poll loop's Wait instead of ending the generation.
fn run_on_after_hand_over(definition: &mut Value) {
    let wait = state_names::WAIT.to_owned();
    assert_eq!(states(definition)[&wait]["Type"], "Wait");
    let handed_over: Vec<String> = states(definition)
        .iter()
        .filter(|(_, s)| {
            s["Type"] == "Pass"
                && s["Parameters"]
                    .as_object()
                    .is_some_and(|p| p.keys().any(|k| k.starts_with("handedOverTo")))
        })
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(handed_over.len(), 1, "one hand-over output");
    let mut rerouted = 0;
    for state in states(definition).values_mut() {
        if state["Type"] == "Task" && state["Next"] == handed_over[0].as_str() {
            state["Next"] = Value::from(wait.as_str());
            rerouted += 1;
        }
    }
    assert_eq!(rerouted, 1, "one hand-over Task");
}

#[test]
fn a_step_functions_generation_that_runs_on_after_its_hand_over_breaks_single_live_generation() {
    fails_by(
        "second-await",
        run_on_after_hand_over,
        GatewayCheck::SingleLiveGeneration,
    );
}

/// TPF's FAILED routed through a REDRIVE the driver sends (the STATUS Task's request, as
/// REDRIVE with an expected version and a reason) before the driver ends.
fn redrive_on_failure(definition: &mut Value) {
    fn as_redrive(v: &mut Value) -> usize {
        match v {
            Value::Object(m) if m.get("operation") == Some(&Value::from("STATUS")) => {
                m.insert("operation".into(), Value::from("REDRIVE"));
                m.insert("expectedVersion".into(), Value::from(0));
                m.insert("reason".into(), Value::from("driver"));
                1
            }
            Value::Object(m) => m.values_mut().map(as_redrive).sum(),
            Value::Array(a) => a.iter_mut().map(as_redrive).sum(),
            _ => 0,
        }
    }
    let (status, mut redrive) = states(definition)
        .iter()
        .find(|(_, s)| s["Type"] == "Task" && s["Parameters"].to_string().contains("\"STATUS\""))
        .map(|(n, s)| (n.clone(), s.clone()))
        .unwrap();
    assert_eq!(as_redrive(&mut redrive), 1, "{status}: one request");
    let mut ended = None;
    for state in states(definition).values_mut() {
        for choice in state["Choices"].as_array_mut().into_iter().flatten() {
            if choice["StringEquals"] == "FAILED" {
                ended = Some(choice["Next"].clone());
                choice["Next"] = Value::from("Redrive");
            }
        }
    }
    redrive["ResultPath"] = Value::Null;
    redrive["Next"] = ended.expect("a FAILED route");
    states(definition).insert("Redrive".into(), redrive);
}

#[test]
fn a_step_functions_driver_that_redrives_breaks_redrive_by_operator_only() {
    fails_by(
        "tpf-21-retry-exhaustion-redrive",
        redrive_on_failure,
        GatewayCheck::RedriveByOperatorOnly,
    );
}

/// The compiled park with a 5 s timeout: the driver polls TPF long before any await's
/// deadline, unsignalled.
fn park_times_out_early(definition: &mut Value) {
    let mut parks = 0;
    for state in states(definition).values_mut() {
        let is_park = state["Catch"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["ErrorEquals"] == serde_json::json!(["States.Timeout"]))
        });
        if is_park {
            state["TimeoutSeconds"] = Value::from(5);
            parks += 1;
        }
    }
    assert_eq!(parks, 1, "one park");
}

/// On a minute's await deadline, so the hand-overs the early timeouts cause last a minute.
#[test]
fn a_step_functions_park_that_times_out_early_breaks_parks_without_polling() {
    use tpf_sfn_mapping::gateway::scenarios::run_in;
    let info = scenario("tpf-22-await-deadline").unwrap();
    let setup = setup_for(info).with_await_timeout_ms(60_000);
    let engine = mutated_engine("lambda", park_times_out_early)(&setup);
    let (r, _) = run_in(info, setup, engine, &[]);
    r.failed_by(GatewayCheck::ParksWithoutPolling).unwrap();
}

/// The scheduled sweep is what recovers what the drivers no longer sweep for: a release
/// compiled for it, deployed without the schedule (nothing sweeps while its driver polls a
/// QUEUED execution), leaves TPF's due work unqueued in `missing-registration`; with the
/// schedule the same release completes it.
#[test]
fn a_scheduled_sweep_release_without_its_schedule_leaves_due_work_unqueued() {
    use tpf_sfn_mapping::gateway::scenarios::run_in;
    let info = scenario("missing-registration").unwrap();
    let setup = setup_for(info);
    for transport in ["lambda", "queue"] {
        let mut make = budgeted_engine(transport, SCHEDULED, |_| {});
        let engine = make(&setup).with_scheduled_sweep(None);
        let (report, world) = run_in(info, setup.clone(), engine, &[]);
        let shown = report.assertion().unwrap_or_default();
        assert!(shown.contains("Queued"), "{transport}: {report:?}");
        assert!(world.trace().scheduled_sweeps.is_empty());
        let (report, world) = run_in(info, setup.clone(), make(&setup), &[]);
        assert!(report.passed(), "{transport}: {report:?}");
        assert!(!world.trace().scheduled_sweeps.is_empty());
    }
}
