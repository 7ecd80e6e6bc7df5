//! The gateway world proven with a test double of a gateway driver (`gateway_world/double.rs`,
//! not a backend): every runnable scenario of the catalogue passes every check, the scenarios
//! that cannot run say why, TPF's 22 scenarios are each named, and each check fails on a driver
//! or a wake path that breaks its invariant.

#[path = "gateway_world/double.rs"]
mod double;

use double::{DoubleMutant, TestDoubleEngine};
use tpf_sfn_mapping::gateway::catalogue::{conformance, scenario, tpf_title, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::failure::ScenarioFailure;
use tpf_sfn_mapping::gateway::scenarios::{
    run_catalogue, run_in, run_scenario, setup_for, unexpected, ScenarioReport,
};
use tpf_sfn_mapping::gateway::world::Mutation;

fn double(
    s: &tpf_sfn_mapping::gateway::world::Setup,
    mutant: Option<DoubleMutant>,
) -> TestDoubleEngine {
    TestDoubleEngine::new(s.longest_await_timeout_ms(), mutant)
}

fn run(name: &str, mutant: Option<DoubleMutant>, mutations: &[Mutation]) -> ScenarioReport {
    let info = scenario(name).unwrap_or_else(|| panic!("no scenario {name}"));
    run_scenario(info, double(&setup_for(info), mutant), mutations)
}

/// Every runnable scenario passes every check, but the protocol's findings
/// (`catalogue::FINDINGS`), which fail by their own assertion.
#[test]
fn every_runnable_scenario_passes_every_check_on_the_test_double() {
    let reports = run_catalogue(|s| double(s, None));
    assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
    let wrong = unexpected(&reports);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for f in FINDINGS {
        assert!(reports.iter().any(|r| r.name == f.scenario && !r.passed()));
    }
}

#[test]
fn the_catalogue_names_tpfs_22_scenarios_and_runs_each() {
    let rows = conformance();
    assert_eq!(rows.len(), 22);
    for (id, own, covering) in &rows {
        assert!(own.starts_with(&format!("tpf-{id:02}-")), "{id}: {own}");
        assert!(tpf_title(*id).is_some());
        let info = scenario(own).unwrap();
        // Every one of TPF's 22 runs, each covered by the scenario named for it.
        assert!(info.runs, "{own} runs");
        assert!(covering.contains(own), "{own} covers its own id");
    }
    assert_eq!(
        tpf_title(1),
        Some("lost ingress response after AWS accepted the start")
    );
    assert_eq!(
        tpf_title(22),
        Some("AWS schedules Await deadline and TPF admits timeout")
    );
    for case in [
        "second-await",
        "sequential-awaits",
        "concurrent-awaits",
        "missing-registration",
        "index-lag",
        "provider-loss-before-registration",
        "suspended-timeout",
    ] {
        assert!(scenario(case).is_some_and(|s| s.runs), "{case}");
    }
}

/// The scenario fails, and by the named check, and a catalogue run would report it.
fn fails_by(report: &ScenarioReport, check: GatewayCheck) {
    report.failed_by(check).unwrap();
}

#[test]
fn a_driver_that_sends_a_new_key_per_submit_attempt_breaks_one_execution_per_submission() {
    let r = run(
        "tpf-03-submit-committed-before-checkpoint",
        Some(DoubleMutant::NewKeyPerSubmitAttempt),
        &[],
    );
    fails_by(&r, GatewayCheck::OneExecutionPerSubmission);
}

#[test]
fn a_request_tpf_cannot_read_breaks_requests_tpf_reads() {
    let r = run(
        "tpf-11-completion-after-binding",
        Some(DoubleMutant::LowercaseOperation),
        &[],
    );
    fails_by(&r, GatewayCheck::RequestsTpfReads);
}

#[test]
fn an_unqualified_gateway_invoke_breaks_gateway_numbered_version() {
    let r = run(
        "tpf-11-completion-after-binding",
        Some(DoubleMutant::UnqualifiedArn),
        &[],
    );
    fails_by(&r, GatewayCheck::NumberedVersion);
}

#[test]
fn a_driver_that_succeeds_on_tpfs_failure_breaks_driver_ends_as_tpf_ends() {
    let r = run(
        "tpf-22-await-deadline",
        Some(DoubleMutant::SucceedOnFailure),
        &[],
    );
    fails_by(&r, GatewayCheck::DriverEndsAsTpfEnds);
}

#[test]
fn tpfs_host_gap_a_park_without_timeout_breaks_await_deadline_while_parked() {
    let r = run(
        "tpf-22-await-deadline",
        Some(DoubleMutant::NoParkTimeout),
        &[],
    );
    fails_by(&r, GatewayCheck::AwaitDeadlineWhileParked);
}

#[test]
fn tpfs_host_gap_a_second_park_in_a_generation_breaks_one_callback_per_generation() {
    let r = run("second-await", Some(DoubleMutant::ParkTwice), &[]);
    fails_by(&r, GatewayCheck::OneCallbackPerGeneration);
}

#[test]
fn a_wake_up_without_the_fence_breaks_generation_fence() {
    let r = run(
        "tpf-15-generation-race",
        None,
        &[Mutation::NoGenerationFence],
    );
    fails_by(&r, GatewayCheck::GenerationFence);
}

#[test]
fn a_wake_up_that_writes_no_delivery_row_breaks_delivery_evidence() {
    let r = run(
        "tpf-11-completion-after-binding",
        None,
        &[Mutation::NoDeliveryEvidence],
    );
    fails_by(&r, GatewayCheck::DeliveryEvidence);
}

#[test]
fn a_replacement_on_the_active_release_breaks_release_pinned() {
    let r = run(
        "new-release-mid-flight",
        None,
        &[Mutation::ReplacementOnActiveRelease],
    );
    fails_by(&r, GatewayCheck::ReleasePinned);
}

#[test]
fn a_status_on_another_release_breaks_release_pinned() {
    let r = run(
        "tpf-11-completion-after-binding",
        Some(DoubleMutant::StatusOnAnotherRelease),
        &[],
    );
    fails_by(&r, GatewayCheck::ReleasePinned);
    assert!(r
        .violations
        .iter()
        .any(|v| v.detail.contains("STATUS") && v.detail.contains(double::ANOTHER_RELEASE)));
}

#[test]
fn a_generation_that_runs_on_after_its_hand_over_breaks_single_live_generation() {
    let r = run("second-await", Some(DoubleMutant::RunOnAfterHandOver), &[]);
    fails_by(&r, GatewayCheck::SingleLiveGeneration);
}

/// TPF's scenario 15 starts a second generation as TPF's operator while the first is parked:
/// the race the generation fence resolves, not the host's own double start.
#[test]
fn an_operators_racing_generation_is_not_a_second_live_generation() {
    let r = run("tpf-15-generation-race", None, &[]);
    assert!(r.passed(), "{r:?}");
    assert!(!r
        .violations
        .iter()
        .any(|v| v.check == GatewayCheck::SingleLiveGeneration));
}

#[test]
fn a_driver_that_redrives_breaks_redrive_by_operator_only() {
    let r = run(
        "tpf-21-retry-exhaustion-redrive",
        Some(DoubleMutant::RedriveOnFailure),
        &[],
    );
    fails_by(&r, GatewayCheck::RedriveByOperatorOnly);
}

#[test]
fn hourly_polls_break_retries_queued_when_due() {
    let r = run(
        "tpf-21-retry-exhaustion-redrive",
        Some(DoubleMutant::HourlyPolls),
        &[],
    );
    fails_by(&r, GatewayCheck::RetriesQueuedWhenDue);
}

#[test]
fn polls_without_a_wait_break_calls_paced_by_tpf() {
    let r = run(
        "tpf-11-completion-after-binding",
        Some(DoubleMutant::TightPolls),
        &[],
    );
    fails_by(&r, GatewayCheck::CallsPacedByTpf);
}

/// A registration TPF keeps refusing, handed over at once (a second later): each generation
/// reads TPF, registers, is refused and starts the next, until the await's deadline.
#[test]
fn generations_that_hand_over_at_once_after_a_refused_registration_break_calls_paced_by_tpf() {
    let r = run(
        "registration-refused-until-deadline",
        Some(DoubleMutant::HandOverAtOnceOnRefusal),
        &[],
    );
    fails_by(&r, GatewayCheck::CallsPacedByTpf);
}

/// A park of 5 s on a minute's await deadline (the scenario's pipeline given a one-minute
/// await, so the hand-overs it causes last a minute).
#[test]
fn a_park_that_times_out_early_breaks_parks_without_polling() {
    let info = scenario("tpf-22-await-deadline").unwrap();
    let setup = setup_for(info).with_await_timeout_ms(60_000);
    let engine = double(&setup, Some(DoubleMutant::ShortParkTimeout));
    let (r, _) = run_in(info, setup, engine, &[]);
    fails_by(&r, GatewayCheck::ParksWithoutPolling);
}

/// The transition-worker scenarios' own assertions catch a work function that commits a
/// response to another request (a duplicate's or a late one, left on the response queue).
#[test]
fn a_work_function_taking_another_requests_response_fails_the_transition_scenarios() {
    for (name, says) in [
        // The resumed segment committed a duplicate's answer to the first request; its own
        // response stayed on the queue.
        (
            "tpf-06-transition-response-before-ack",
            "not all the first request's",
        ),
        (
            "tpf-07-duplicate-transition-delivery",
            "not all the first request's",
        ),
        // The retry committed the late first request's answer, then its own: a second park.
        ("transition-timeout", "parked 2 times"),
    ] {
        let r = run(name, None, &[Mutation::AnyTransitionResponse]);
        assert!(
            !unexpected(std::slice::from_ref(&r)).is_empty(),
            "{name} passed"
        );
        let e = r.outcome.as_ref().expect_err(name);
        assert!(e.to_string().contains(says), "{name}: {e}");
    }
}

/// A work function that claims before its admission declines breaks the admission scenario
/// by its own assertion: the declined delivery wrote.
#[test]
fn a_work_function_that_claims_before_admission_breaks_admission_declines_without_claiming() {
    let name = "admission-declines-without-claiming";
    assert!(run(name, None, &[]).passed(), "the unbroken host passes");
    let r = run(name, None, &[Mutation::ClaimBeforeAdmission]);
    let e = r.outcome.as_ref().expect_err(name);
    assert!(
        matches!(e, ScenarioFailure::Unmet { expected, shown }
            if expected == "a declined delivery re-enqueued, neither claimed nor written"
                && shown.contains("a declined delivery claimed or wrote")),
        "{e}"
    );
}
