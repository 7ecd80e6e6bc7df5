//! The whole runtime loop on moto's Step Functions interpreter (code nobody here wrote): the
//! bridge starts and wakes drivers from DynamoDB Streams, the relay carries their action calls
//! through SQS, and TPF's records live in DynamoDB. Every test asserts on TPF's records and on
//! moto's execution history, then runs the same scenario in our interpreter and fails when the
//! two disagree on the sequence of driver states.

mod harness;
use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use aws_sdk_sfn::types::ExecutionStatus;
use harness::{complete_interaction, pending_interaction, Loop, Options, Relay, Wake};
use tpf_sfn::relay::http::{ActionHost, HttpActionHost, Reply, Unreachable};
use tpf_sfn_mapping::harness::faults::Fault;

/// Each scenario twice: the wake path as processes (`tpf-sfn bridge`, `tpf-sfn relay`) and as
/// the Lambda handlers on event source mappings. Both must pass the same assertions.
macro_rules! on_both_wake_paths {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn processes() {
                    super::$scenario(super::Wake::Processes).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn lambda() {
                    super::$scenario(super::Wake::Lambda).await
                }
            }
        )*
    };
}

on_both_wake_paths!(
    submit_parks_completes_and_succeeds_through_bridge_and_relay,
    completion_before_park_is_caught_when_the_token_arrives,
    retries_exhausted_then_tpf_redrive_succeeds_in_a_new_generation,
    new_release_mid_flight_keeps_the_parked_execution_pinned,
    bridge_killed_and_restarted_mid_flight_loses_nothing,
    duplicate_submit_is_one_execution_with_one_driver,
    non_retryable_failure_fails_the_driver_with_tpf_code,
    retries_then_success_waits_out_tpf_retry_delays,
    await_deadline_wakes_the_driver_and_tpf_fails_it,
    transport_faults_are_retried_and_duplicates_are_harmless,
);

async fn submit_parks_completes_and_succeeds_through_bridge_and_relay(wake: Wake) {
    let lp = Loop::start(
        "happy-path",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    let parked = lp.wait_parked(&arn, &id).await;
    assert_eq!(lp.stored_status(&id), "WAITING_EXTERNAL");

    let interaction = lp.pending(&id).await.expect("pending interaction");
    let woken_at = Instant::now();
    lp.complete(&interaction).await;
    // A duplicate completion is admitted once by TPF and must not resume the driver twice.
    let dup = lp.complete(&interaction).await;
    assert_eq!(dup["duplicate"], true, "{dup}");
    lp.wait_resumed(&arn, parked).await;
    println!(
        "wake latency (interaction completed -> driver resumed on moto): {} ms",
        woken_at.elapsed().as_millis()
    );
    lp.wait_ended(&arn, &id, ExecutionStatus::Succeeded).await;
    assert_eq!(lp.stored_status(&id), "SUCCEEDED");
    assert_eq!(lp.await_exits(&arn).await, 1, "exactly one resume");

    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    lp.assert_same_record(&id, &sim).await;
    println!("driver states (moto = interpreter): {:?}", gens[0].1);

    // The comparison can fail: against the interpreter's run of another scenario (two retries
    // before success) both the states and TPF's record disagree.
    let other = lp.simulate_other("retries-then-success");
    let why = lp
        .compare(&other)
        .await
        .expect_err("a different path must not compare equal");
    assert!(why.contains("Wait until due"), "{why}");
    assert_ne!(
        lp.record_summary(&id).await,
        harness::interpreter_record(&other)
    );
}

/// The action path, hooked: when a process-work-item reply comes back and TPF has parked the
/// execution, the interaction is completed before the driver sees the reply. The token the
/// driver registers next therefore meets a record that has already left WAITING_EXTERNAL, and
/// only the bridge's re-check on the token's arrival can wake it.
struct CompleteBeforePark {
    inner: HttpActionHost,
    addr: std::net::SocketAddr,
    completed: Arc<AtomicBool>,
}

impl ActionHost for CompleteBeforePark {
    async fn post(&self, path: &str, body: &str) -> Result<Reply, Unreachable> {
        let reply = self.inner.post(path, body).await?;
        if path.ends_with("/process-work-item") && !self.completed.load(Ordering::SeqCst) {
            let execution = path.split('/').nth_back(1).unwrap_or_default().to_owned();
            if let Some(interaction) = pending_interaction(self.addr, &execution).await {
                complete_interaction(self.addr, &interaction).await;
                self.completed.store(true, Ordering::SeqCst);
            }
        }
        Ok(reply)
    }
}

async fn completion_before_park_is_caught_when_the_token_arrives(wake: Wake) {
    let lp = Loop::start(
        "complete-before-park/Await Restaurant Decision",
        Options {
            wake,
            relay: Relay::InTest,
            ..Options::default()
        },
    )
    .await;
    let completed = Arc::new(AtomicBool::new(false));
    let relay = lp.relay_in_test(CompleteBeforePark {
        inner: lp.action_host(),
        addr: lp.addr,
        completed: completed.clone(),
    });

    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    lp.wait_ended(&arn, &id, ExecutionStatus::Succeeded).await;
    drop(relay);
    assert!(
        completed.load(Ordering::SeqCst),
        "the hook never completed the interaction"
    );
    // The driver did park (registered its token) after the completion, and was woken once.
    assert_eq!(lp.await_exits(&arn).await, 1, "exactly one resume");
    assert_eq!(lp.stored_status(&id), "SUCCEEDED");
    lp.cross_check(&lp.simulate()).await;
}

async fn retries_exhausted_then_tpf_redrive_succeeds_in_a_new_generation(wake: Wake) {
    let lp = Loop::start(
        "retries-exhausted-then-redrive",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let step = &lp.scenario.worker[0].step;
    let id = lp.submit("order-1").await;
    let first = lp.arn(0, &id);
    // `step` fails on every attempt: the driver waits out each of TPF's retry delays (real
    // waits on moto, until TPF's due time), then TPF gives up. FAILED in both.
    lp.wait_ended_completing(&first, &id, ExecutionStatus::Failed, true)
        .await;
    let failed = lp.record(&id).await;
    assert_eq!(
        failed["attempt"], 3,
        "{step}: three retries, then FAILED: {failed}"
    );
    assert!(
        failed["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("TransientError")),
        "{failed}"
    );
    let waits = harness::driver_path(&lp.sfn, &first)
        .await
        .normalised
        .iter()
        .filter(|s| *s == "Wait until due")
        .count();
    assert_eq!(waits, 3, "one wait per retry TPF scheduled");

    let redrive = lp
        .post_admin(
            &format!("executions/{id}/redrive"),
            r#"{"allowFailed": true}"#,
        )
        .await;
    let version = redrive["version"].as_i64().expect("version");
    // The bridge names the re-drive's generation `<id>-r<version>`, on the same machine.
    let second = lp.arn(0, &format!("{id}-r{version}"));
    lp.wait_ended_completing(&second, &id, ExecutionStatus::Succeeded, true)
        .await;
    assert_eq!(lp.stored_status(&id), "SUCCEEDED");

    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    assert_eq!(gens.len(), 2, "two generations: {gens:?}");
    lp.assert_same_record(&id, &sim).await;
}

async fn new_release_mid_flight_keeps_the_parked_execution_pinned(wake: Wake) {
    let lp = Loop::start(
        "new-release-mid-flight",
        Options {
            wake,
            next_release: true,
            ..Options::default()
        },
    )
    .await;
    let old = lp.submit("order-1").await;
    let old_arn = lp.arn(0, &old);
    lp.wait_parked(&old_arn, &old).await;

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

    // A new submission pins the new release and runs on its machine.
    let new = lp.submit("order-2").await;
    let new_arn = lp.arn(1, &new);
    lp.wait_parked(&new_arn, &new).await;

    // The parked execution resumes on the machine of the release it was submitted under; a
    // driver of the other release would be refused by TPF's identity check.
    let interaction = lp.pending(&old).await.expect("pending interaction");
    lp.complete(&interaction).await;
    lp.wait_ended(&old_arn, &old, ExecutionStatus::Succeeded)
        .await;
    assert_eq!(lp.await_exits(&old_arn).await, 1, "exactly one resume");

    // The interpreter's scenario ends here: the first execution done, the second parked.
    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    let names: Vec<&str> = gens.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, [old.as_str(), new.as_str()], "one generation each");
    lp.assert_same_record(&old, &sim).await;

    let interaction = lp.pending(&new).await.expect("pending interaction");
    lp.complete(&interaction).await;
    lp.wait_ended(&new_arn, &new, ExecutionStatus::Succeeded)
        .await;
    let done = harness::entered_states(&lp.sfn, &new_arn).await;
    assert_eq!(
        done, gens[0].1,
        "the new release's driver ran the same path"
    );
}

async fn bridge_killed_and_restarted_mid_flight_loses_nothing(wake: Wake) {
    let mut lp = Loop::start(
        "happy-path",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let first = lp.submit("order-1").await;
    let first_arn = lp.arn(0, &first);
    let parked = lp.wait_parked(&first_arn, &first).await;

    // Crash the bridge, then change TPF's records while nobody reads the streams.
    lp.kill("bridge");
    let interaction = lp.pending(&first).await.expect("pending interaction");
    lp.complete(&interaction).await;
    let second = lp.submit("order-2").await;
    let second_arn = lp.arn(0, &second);
    assert!(
        harness::entered_states(&lp.sfn, &second_arn)
            .await
            .is_empty(),
        "no driver starts while the bridge is down"
    );

    // The restarted bridge resumes from its checkpoints: the parked driver wakes and the new
    // execution's driver starts, once each.
    lp.spawn("bridge");
    lp.wait_resumed(&first_arn, parked).await;
    lp.wait_ended(&first_arn, &first, ExecutionStatus::Succeeded)
        .await;
    lp.wait_parked(&second_arn, &second).await;
    let interaction = lp.pending(&second).await.expect("pending interaction");
    lp.complete(&interaction).await;
    lp.wait_ended(&second_arn, &second, ExecutionStatus::Succeeded)
        .await;

    let sim = lp.simulate();
    let happy = harness::interpreter_generations(&sim);
    assert_eq!(happy.len(), 1);
    let gens = lp.moto_generations().await;
    let names: Vec<&str> = gens.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [first.as_str(), second.as_str()],
        "one driver per execution"
    );
    for (name, states) in &gens {
        assert_eq!(
            states, &happy[0],
            "{name}: moto (left) vs our interpreter (right)"
        );
        assert_eq!(
            lp.await_exits(&lp.arn(0, name)).await,
            1,
            "{name}: one resume"
        );
    }
    // No duplicate transitions: each record took exactly the interpreter's transitions.
    for id in [&first, &second] {
        lp.assert_same_record(id, &sim).await;
    }
}

async fn duplicate_submit_is_one_execution_with_one_driver(wake: Wake) {
    let lp = Loop::start(
        "duplicate-submit",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    assert_eq!(lp.submit("order-1").await, id, "same key, same execution");
    let arn = lp.arn(0, &id);
    lp.wait_ended_completing(&arn, &id, ExecutionStatus::Succeeded, true)
        .await;
    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    assert_eq!(gens.len(), 1, "one driver: {gens:?}");
    lp.assert_same_record(&id, &sim).await;
}

async fn non_retryable_failure_fails_the_driver_with_tpf_code(wake: Wake) {
    let lp = Loop::start(
        "non-retryable-failure",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    lp.wait_ended_completing(&arn, &id, ExecutionStatus::Failed, true)
        .await;
    let record = lp.record(&id).await;
    let described = lp
        .sfn
        .describe_execution()
        .execution_arn(&arn)
        .send()
        .await
        .expect("describe");
    // The driver fails with TPF's code as its cause, so the console shows why.
    assert_eq!(described.error(), Some("TPF.ExecutionFailed"));
    assert_eq!(
        described.cause(),
        record["errorCode"].as_str(),
        "driver cause vs TPF's errorCode"
    );
    let sim = lp.simulate();
    lp.cross_check(&sim).await;
    lp.assert_same_record(&id, &sim).await;
}

async fn retries_then_success_waits_out_tpf_retry_delays(wake: Wake) {
    let lp = Loop::start(
        "retries-then-success",
        Options {
            wake,
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    lp.wait_ended_completing(&arn, &id, ExecutionStatus::Succeeded, true)
        .await;
    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    let waits = gens[0].1.iter().filter(|s| *s == "Wait until due").count();
    assert_eq!(waits, 2, "one wait per scheduled retry");
    lp.assert_same_record(&id, &sim).await;
}

/// Nobody completes the await: the driver's await task times out at TPF's deadline (moto runs
/// `TimeoutSecondsPath` = TPF's `wakeInSeconds`), it asks TPF, and TPF fails the execution.
async fn await_deadline_wakes_the_driver_and_tpf_fails_it(wake: Wake) {
    let lp = Loop::start(
        "deadline-timeout/Await Restaurant Decision",
        Options {
            wake,
            serve: vec!["--await-timeout-seconds", "1"],
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    lp.wait_ended(&arn, &id, ExecutionStatus::Failed).await;
    let record = lp.record(&id).await;
    assert_eq!(record["errorCode"], "AWAIT_TIMEOUT", "{record}");
    let sim = lp.simulate();
    lp.cross_check(&sim).await;
    lp.assert_same_record(&id, &sim).await;
}

/// The action path fails the way the proof's transport faults do: each call first gets a 503
/// (the relay answers `TPF.TransportError` and the driver's transport Retry re-sends it), then
/// is delivered to TPF twice (the second delivery finds the work done).
struct Faulty {
    inner: HttpActionHost,
    seen: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

impl ActionHost for Faulty {
    async fn post(&self, path: &str, body: &str) -> Result<Reply, Unreachable> {
        let key = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|b| b["idempotencyKey"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let n = {
            let mut seen = self.seen.lock().expect("lock");
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        match n {
            1 => Ok(Reply {
                status: 503,
                body: r#"{"code":"UNAVAILABLE"}"#.into(),
            }),
            2 => {
                self.inner.post(path, body).await?;
                self.inner.post(path, body).await
            }
            _ => self.inner.post(path, body).await,
        }
    }
}

async fn transport_faults_are_retried_and_duplicates_are_harmless(wake: Wake) {
    let mut lp = Loop::start(
        "happy-path",
        Options {
            wake,
            relay: Relay::InTest,
            ..Options::default()
        },
    )
    .await;
    // The same faults in the interpreter's run of this scenario.
    lp.scenario.faults.per_call = vec![Fault::Unavailable, Fault::Duplicate];
    let _relay = lp.relay_in_test(Faulty {
        inner: lp.action_host(),
        seen: Default::default(),
    });
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    lp.wait_ended_completing(&arn, &id, ExecutionStatus::Succeeded, true)
        .await;
    let sim = lp.simulate();
    lp.cross_check(&sim).await;
    lp.assert_same_record(&id, &sim).await;
    // Every action call failed in transport at least once and was retried. (moto reuses one
    // task token across a state's Retry attempts and replays the stale failure to the next
    // attempt, so it shows more failures than AWS would; see docs/runtime.md.)
    let history = lp
        .sfn
        .get_execution_history()
        .execution_arn(&arn)
        .max_results(1000)
        .send()
        .await
        .expect("history");
    let failed = history
        .events()
        .iter()
        .filter_map(|e| e.task_failed_event_details())
        .filter(|d| d.error() == Some("TPF.TransportError"))
        .count();
    let calls = harness::entered_states(&lp.sfn, &arn)
        .await
        .iter()
        .filter(|s| *s == "Process work item")
        .count();
    assert!(
        failed >= calls && calls == 2,
        "{failed} transport failures for {calls} action calls"
    );
}

/// The early-wake normalisation drops only no-op iterations: a not-claimed answer with an
/// unchanged version. Anything TPF acted on stays in the comparison.
#[test]
fn normalisation_drops_only_no_op_early_wakes() {
    use harness::{normalise, Event};
    let answer = |claimed: bool, version: i64| {
        Event::TaskSucceeded(
            serde_json::json!({"status": "WAIT_RETRY", "claimed": claimed, "version": version})
                .to_string(),
        )
    };
    let entered = |n: &str| Event::Entered(n.to_owned(), "{}".to_owned());
    let iteration = |claimed: bool, version: i64| {
        vec![
            entered("Process work item"),
            answer(claimed, version),
            entered("Route on TPF status"),
            entered("Wait until due"),
        ]
    };
    let run = |tail: Vec<Event>| {
        let mut events = vec![
            entered("Process work item"),
            answer(true, 5),
            entered("Route on TPF status"),
            entered("Wait until due"),
        ];
        events.extend(tail);
        normalise(events)
    };

    let early = run(iteration(false, 5));
    assert_eq!(early.early_wakes, 1);
    assert_eq!(early.states.len(), 6);
    assert_eq!(
        early.normalised,
        ["Process work item", "Route on TPF status", "Wait until due"]
    );
    // TPF claimed the item: a real retry, kept.
    let retried = run(iteration(true, 6));
    assert_eq!(retried.early_wakes, 0);
    assert_eq!(retried.normalised, retried.states);
    // Not claimed, but the record moved on: kept.
    let moved = run(iteration(false, 6));
    assert_eq!(moved.early_wakes, 0);
    assert_eq!(moved.normalised.len(), 6);
}

/// The data comparison sees the driver's counters and TPF's answers, and only ignores what
/// differs between two runs by construction (ids, unit ids, times).
#[test]
fn state_digest_keeps_counters_and_answers_and_ignores_ids() {
    use harness::digest;
    use serde_json::json;
    let input = |exec: &str, iteration: i64, version: i64, claimed: bool| {
        json!({
            "tenantId": "t", "executionId": exec, "lineage": exec, "generation": 0,
            "tpf": {"nextIteration": iteration,
                    "status": "WAIT_RETRY", "version": version, "currentStepIndex": 3,
                    "attempt": 1, "claimed": claimed, "errorCode": "E",
                    "nextDueAt": format!("2026-11-30T10:00:0{iteration}Z"),
                    "await": {"unitId": exec}}
        })
    };
    let base = input("a", 1, 5, true);
    assert_eq!(digest(&base, true), digest(&input("b", 1, 5, true), true));
    assert_ne!(digest(&base, true), digest(&input("a", 2, 5, true), true));
    assert_ne!(digest(&base, true), digest(&input("a", 1, 6, true), true));
    assert_ne!(digest(&base, true), digest(&input("a", 1, 5, false), true));
    // After dropped early wakes: the iteration count and `claimed` may differ, nothing else.
    assert_eq!(
        digest(&base, false),
        digest(&input("a", 2, 5, false), false)
    );
    assert_ne!(digest(&base, false), digest(&input("a", 1, 6, true), false));
}

/// Fails the first call of each named Step Functions operation, before it is sent, as a
/// throttled or unreachable endpoint would.
#[derive(Debug)]
struct FailFirst {
    left: std::sync::Mutex<Vec<&'static str>>,
}

impl aws_sdk_sfn::config::Intercept for FailFirst {
    fn name(&self) -> &'static str {
        "FailFirst"
    }

    fn read_before_execution(
        &self,
        context: &aws_sdk_sfn::config::interceptors::BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut aws_sdk_sfn::config::ConfigBag,
    ) -> Result<(), aws_sdk_sfn::error::BoxError> {
        use aws_sdk_sfn::operation::{send_task_success, start_execution};
        let input = context.input();
        let op = if input
            .downcast_ref::<start_execution::StartExecutionInput>()
            .is_some()
        {
            "StartExecution"
        } else if input
            .downcast_ref::<send_task_success::SendTaskSuccessInput>()
            .is_some()
        {
            "SendTaskSuccess"
        } else {
            return Ok(());
        };
        let mut left = self.left.lock().expect("lock");
        match left.iter().position(|o| *o == op) {
            Some(i) => {
                left.remove(i);
                Err(format!("injected failure of the first {op}").into())
            }
            None => Ok(()),
        }
    }
}

fn failing_sfn(config: &aws_config::SdkConfig, ops: &[&'static str]) -> aws_sdk_sfn::Client {
    aws_sdk_sfn::Client::from_conf(
        aws_sdk_sfn::config::Builder::from(config)
            .interceptor(FailFirst {
                left: std::sync::Mutex::new(ops.to_vec()),
            })
            .build(),
    )
}

/// Partial batch failures on the Lambda path: the bridge's first driver start and first wake,
/// and the relay's first task answer, fail. Each handler reports exactly that record or message,
/// the mapping delivers it again, and it is applied once: one driver, one resume, and TPF's
/// record took the interpreter's transitions, no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lambda_partial_batch_failures_are_retried_and_applied_once() {
    let config = support::moto_config().await;
    let lp = Loop::start(
        "happy-path",
        Options {
            wake: Wake::Lambda,
            bridge_sfn: Some(failing_sfn(&config, &["StartExecution", "SendTaskSuccess"])),
            relay_sfn: Some(failing_sfn(&config, &["SendTaskSuccess"])),
            ..Options::default()
        },
    )
    .await;
    let id = lp.submit("order-1").await;
    let arn = lp.arn(0, &id);
    let parked = lp.wait_parked(&arn, &id).await;
    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    lp.wait_resumed(&arn, parked).await;
    lp.wait_ended(&arn, &id, ExecutionStatus::Succeeded).await;

    let bridge = lp.bridge_deliveries.lock().expect("lock").clone();
    let relay = lp.relay_deliveries.lock().expect("lock").clone();
    assert_eq!(
        bridge.reported_failed, 2,
        "the start and the wake: {bridge:?}"
    );
    assert!(bridge.redelivered() >= 2, "{bridge:?}");
    assert_eq!(relay.reported_failed, 1, "{relay:?}");
    assert_eq!(
        relay.redelivered(),
        1,
        "only the failed message came back: {relay:?}"
    );

    assert_eq!(lp.await_exits(&arn).await, 1, "exactly one resume");
    let sim = lp.simulate();
    let gens = lp.cross_check(&sim).await;
    assert_eq!(gens.len(), 1, "one driver: {gens:?}");
    lp.assert_same_record(&id, &sim).await;
}
