//! The durable backend end to end, on AWS's own durable execution emulator: the bridge starts
//! each release's durable driver function, the function calls TPF's Action API from
//! checkpointed steps, parks on callbacks whose ids it writes to the wakeup table, and the
//! bridge completes them when TPF's records move on. TPF's records live in DynamoDB (moto).
//!
//! Every test asserts TPF's side (the record's status and attempts) and the durable
//! execution's side (its status and the operations its history checkpointed), and prints the
//! operation counts; the happy path prints the wake latency on the emulator.

/// Shared with the gateway driver's tests (`gateway_e2e_durable`).
pub(crate) mod harness;

use std::time::{Duration, Instant};

use harness::{Loop, Options};
use tpf_wire::wakeup::{self, attr};

const PARK: &str = "Park on 'Await Restaurant Decision'";

fn names(ops: &[(String, String)]) -> Vec<&str> {
    ops.iter().map(|(_, n)| n.as_str()).collect()
}

fn count(ops: &[(String, String)], name: &str) -> usize {
    ops.iter().filter(|(_, n)| n == name).count()
}

/// Polls the history until an event of `kind` (with `name`, when given) is there; when it was
/// seen.
async fn until_event(lp: &Loop, arn: &str, kind: &str, name: Option<&str>) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        let found =
            lp.history(arn).await.iter().any(|e| {
                e["EventType"] == kind && name.is_none_or(|n| e["Name"].as_str() == Some(n))
            });
        if found {
            return Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no {kind} {name:?} in {arn}\n{}", lp.logs());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_driver_parks_is_woken_by_the_bridge_and_succeeds() {
    let lp = Loop::start("happy-path", Options::default()).await;
    let id = lp.submit("order-1").await;
    let arn = lp.wait_started(&id).await;

    let token = lp.wait_parked(&id, &arn).await;
    assert!(!token[attr::TASK_TOKEN].is_empty(), "{token:?}");
    let driver = lp.row(&id, wakeup::DRIVER_ROW).await.expect("driver row");
    assert_eq!(driver[attr::EXECUTION_ARN], arn, "{driver:?}");
    assert_eq!(driver[attr::LINEAGE], id);
    assert_eq!(driver[attr::GENERATION], "0");
    assert_eq!(
        driver[attr::RELEASE_VERSION],
        lp.releases[0].release_version
    );

    let interaction = lp.pending(&id).await.expect("pending interaction");
    let completed = Instant::now();
    lp.complete(&interaction).await;
    // A duplicate completion is admitted once by TPF and must not wake the driver twice.
    let dup = lp.complete(&interaction).await;
    assert_eq!(dup["duplicate"], true, "{dup}");
    let woken = until_event(&lp, &arn, "CallbackSucceeded", None).await;
    let asked = until_event(&lp, &arn, "StepStarted", Some("Ask TPF #1")).await;
    println!(
        "wake latency on the emulator: interaction completed -> callback succeeded {} ms, -> driver's next call started {} ms (history polled every 20 ms)",
        (woken - completed).as_millis(),
        (asked - completed).as_millis()
    );

    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");

    let ops = lp.operations(&arn).await;
    println!("happy path: {} operations: {:?}", ops.len(), names(&ops));
    assert_eq!(ops[0].1, "Register this generation");
    assert_eq!(count(&ops, PARK), 1, "one park: {ops:?}");
    assert_eq!(
        lp.history(&arn)
            .await
            .iter()
            .filter(|e| e["EventType"] == "CallbackSucceeded")
            .count(),
        1,
        "woken once"
    );
    let park_at = names(&ops).iter().position(|n| *n == PARK).unwrap();
    assert_eq!(
        names(&ops)[park_at + 1..],
        ["Ask TPF #1"],
        "after the wake, one call that TPF answers SUCCEEDED: {ops:?}"
    );
    // Only the bridge started executions, one per lineage.
    let started = lp.shim.started();
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0].function, lp.releases[0].function);
    assert_eq!(started[0].input["lineage"], id.as_str());
    assert_eq!(started[0].input["generation"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_retries_exhausted_then_tpf_redrive_runs_a_new_lineage_to_the_end() {
    let lp = Loop::start("retries-exhausted-then-redrive", Options::default()).await;
    let id = lp.submit("order-1").await;
    let first = lp.wait_started(&id).await;
    // The scripted step is after the await: the first generation parks, is woken, then waits
    // out each of TPF's retry delays (real durable waits, until TPF's due time) and fails with
    // TPF when it gives up.
    lp.wait_parked(&id, &first).await;
    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    assert_eq!(lp.wait_ended(&first).await, "FAILED", "{}", lp.logs());
    let failed = lp.record(&id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    assert_eq!(failed["attempt"], 3, "three retries, then FAILED: {failed}");
    let execution = lp.execution(&first).await;
    assert_eq!(
        execution["Error"]["ErrorType"], "TPF.ExecutionFailed",
        "{execution}"
    );
    let ops = lp.operations(&first).await;
    println!(
        "failed generation: {} operations: {:?}",
        ops.len(),
        names(&ops)
    );
    assert_eq!(
        count(&ops, "Wait until TPF's due time"),
        3,
        "one durable wait per retry TPF scheduled: {ops:?}"
    );
    assert_eq!(
        names(&ops).last(),
        Some(&"Ask TPF #4"),
        "the call TPF answered FAILED ends the generation: {ops:?}"
    );

    let redrive = lp
        .post_admin(
            &format!("executions/{id}/redrive"),
            r#"{"allowFailed": true}"#,
        )
        .await;
    let version = redrive["version"].as_i64().expect("version");
    let second = lp.wait_started(&format!("{id}-r{version}")).await;
    assert_eq!(lp.wait_ended(&second).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let driver = lp.row(&id, wakeup::DRIVER_ROW).await.expect("driver row");
    assert_eq!(driver[attr::LINEAGE], format!("{id}-r{version}"));
    let ops = lp.operations(&second).await;
    println!(
        "re-drive generation: {} operations: {:?}",
        ops.len(),
        names(&ops)
    );
    // TPF re-drives from the failed step, after the await: one call runs it to the end.
    assert_eq!(names(&ops), ["Register this generation", "Ask TPF #0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_new_release_mid_flight_keeps_the_parked_execution_on_its_version() {
    let lp = Loop::start(
        "new-release-mid-flight",
        Options {
            next_release: true,
            ..Options::default()
        },
    )
    .await;
    let old = lp.submit("order-1").await;
    let old_arn = lp.wait_started(&old).await;
    lp.wait_parked(&old, &old_arn).await;

    let next = &lp.releases[1];
    let descriptor = std::fs::read_to_string(&next.file).expect("next release");
    let pipelines = format!("pipelines/{}/releases", lp.pipeline_id());
    lp.post_admin(&format!("{pipelines}/register"), &descriptor)
        .await;
    let active = lp
        .post_admin(
            &format!("{pipelines}/{}/activate", next.release_version),
            "",
        )
        .await;
    assert_eq!(active["releaseVersion"], next.release_version.as_str());

    // A new submission pins the new release, and the bridge starts that release's function.
    let new = lp.submit("order-2").await;
    let new_arn = lp.wait_started(&new).await;
    lp.wait_parked(&new, &new_arn).await;
    let by_name = |name: &str| {
        lp.shim
            .started()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.function)
    };
    assert_eq!(
        by_name(&old).as_deref(),
        Some(lp.releases[0].function.as_str())
    );
    assert_eq!(
        by_name(&new).as_deref(),
        Some(lp.releases[1].function.as_str())
    );

    // The parked execution resumes on its own version, still calling with its pinned identity
    // (TPF refuses any other: the driver would fail with TPF.ReleaseIdentityMismatch).
    let interaction = lp.pending(&old).await.expect("pending interaction");
    lp.complete(&interaction).await;
    assert_eq!(lp.wait_ended(&old_arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&old).await["status"], "SUCCEEDED");
    let old_driver = lp.row(&old, wakeup::DRIVER_ROW).await.expect("driver row");
    assert_eq!(
        old_driver[attr::RELEASE_VERSION],
        lp.releases[0].release_version
    );

    let interaction = lp.pending(&new).await.expect("pending interaction");
    lp.complete(&interaction).await;
    assert_eq!(lp.wait_ended(&new_arn).await, "SUCCEEDED", "{}", lp.logs());
    let new_driver = lp.row(&new, wakeup::DRIVER_ROW).await.expect("driver row");
    assert_eq!(
        new_driver[attr::RELEASE_VERSION],
        lp.releases[1].release_version
    );
    let (a, b) = (lp.operations(&old_arn).await, lp.operations(&new_arn).await);
    println!(
        "new release mid-flight: {} and {} operations",
        a.len(),
        b.len()
    );
    assert_eq!(
        names(&a),
        names(&b),
        "both versions' drivers took the same path"
    );
}

/// Submits, waits until the driver parks, kills the bridge, then completes the interaction: TPF's
/// record moves on and nothing completes the callback. The execution id and the driver's ARN.
async fn parked_then_wakeup_lost(lp: &mut Loop) -> (String, String) {
    let id = lp.submit("order-1").await;
    let arn = lp.wait_started(&id).await;
    lp.wait_parked(&id, &arn).await;
    lp.kill("bridge");
    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    (id, arn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_lost_wakeup_is_ended_by_the_callback_timeout() {
    let mut lp = Loop::start(
        "happy-path",
        Options {
            serve: vec!["--await-timeout-seconds", "8"],
            ..Options::default()
        },
    )
    .await;
    let (id, arn) = parked_then_wakeup_lost(&mut lp).await;

    // The callback times out at TPF's wakeInSeconds; the driver asks again and TPF, whose
    // record already left the await, runs it to the end.
    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let history = lp.history(&arn).await;
    let kinds = |k: &str| history.iter().filter(|e| e["EventType"] == k).count();
    assert_eq!(kinds("CallbackSucceeded"), 0, "nobody woke it");
    assert_eq!(kinds("CallbackTimedOut"), 1, "its timeout did");
    let ops = lp.operations(&arn).await;
    println!("lost wakeup: {} operations: {:?}", ops.len(), names(&ops));

    // The bridge comes back and catches up on the record's move: its wake finds the callback
    // long closed, which counts as done (not an error that would stall the shard).
    lp.spawn("bridge");
    let caught_up = lp
        .wait_log("bridge", |log| {
            log.lines()
                .any(|l| l.contains("already done") && !l.contains(" 0 already done"))
        })
        .await;
    assert!(
        !caught_up.contains("SendDurableExecutionCallbackSuccess failed"),
        "{caught_up}"
    );
}

/// The release's sweeper function sends the wakeup the bridge lost, long before the callback's
/// own timeout; a second sweep finds nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_lost_wakeup_is_sent_by_the_sweeper() {
    let mut lp = Loop::start("happy-path", Options::default()).await;
    let (id, arn) = parked_then_wakeup_lost(&mut lp).await;

    let report = lp.sweep(0, "sweep-1").await;
    assert_eq!(
        (
            report.due,
            report.woken,
            report.recovered.len(),
            report.failed.len()
        ),
        (1, 1, 0, 0),
        "{report:?}\n{}",
        lp.logs()
    );
    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let history = lp.history(&arn).await;
    let kinds = |k: &str| history.iter().filter(|e| e["EventType"] == k).count();
    assert_eq!(kinds("CallbackSucceeded"), 1, "the sweeper woke it");
    assert_eq!(kinds("CallbackTimedOut"), 0, "before its timeout");

    let again = lp.sweep(0, "sweep-2").await;
    assert_eq!(
        (again.woken, again.recovered.len(), again.failed.len()),
        (0, 0, 0),
        "{again:?}"
    );
}

/// No driver was ever started (the bridge was down at submit): the sweeper starts the recovery
/// lineage `<id>-s<version>` on the release's version, which parks; once the interaction
/// completes, the next sweep wakes it and it runs to the end. A repeated sweep of the same
/// record version starts nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_sweeper_recovers_an_execution_without_a_driver() {
    let mut lp = Loop::start("happy-path", Options::default()).await;
    lp.kill("bridge");
    let id = lp.submit("order-1").await;

    let report = lp.sweep(0, "sweep-1").await;
    assert_eq!(report.due, 1, "{report:?}\n{}", lp.logs());
    assert_eq!(report.failed, Vec::<String>::new());
    let [lineage] = report.recovered.as_slice() else {
        panic!("one recovery expected: {report:?}\n{}", lp.logs());
    };
    assert!(lineage.starts_with(&format!("{id}-s")), "{lineage}");
    // Swept again at once: the lineage's name exists (or its driver already runs).
    let again = lp.sweep(0, "sweep-1b").await;
    assert!(
        again.recovered.is_empty() && again.failed.is_empty(),
        "{again:?}"
    );
    let arn = lp.wait_started(lineage).await;
    lp.wait_parked(&id, &arn).await;

    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    let woke = lp.sweep(0, "sweep-2").await;
    assert_eq!(
        (woke.woken, woke.recovered.len(), woke.failed.len()),
        (1, 0, 0),
        "{woke:?}\n{}",
        lp.logs()
    );
    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    assert_eq!(lp.shim.started().len(), 1, "one driver in all");
}
