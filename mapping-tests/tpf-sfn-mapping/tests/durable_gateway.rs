//! The gateway driver (`tpf_durable_driver::gateway`) on the replay engine against TPF's action
//! gateway over TPF's control plane (`tpf_model::gateway::Gateway` over `LocalControlPlane`),
//! with TPF's work function claiming queued work between the engine's steps. Every request the
//! driver sends is read as TPF's gateway reads it, and must be accepted; the wake-up here is
//! the protocol's last step only (the REGISTRATION row's callback id completed with TPF's
//! signal), so each test shows what the driver does, not what the wake path decides.

use std::rc::Rc;

use durable_interp::{Effects, Engine, ExecutionStatus, StepCall, StepError, StepHandler};
use serde_json::{json, Value};
use tpf_durable_driver::GatewayRun;
use tpf_model::coordinator::{local_release, LocalControlPlane};
use tpf_model::gateway::{BindingStore, Gateway, InMemoryBindings};
use tpf_model::{
    AwaitCompletion, Coordinator, InMemoryStore, PipelineDef, ScriptedWorker, StepDef, StepOutcome,
};
use tpf_sfn_mapping::durable::gateway::{gateway_step, GatewayProgram};
use tpf_sfn_mapping::gateway::engine::{GatewayHost, InvokeError};
use tpf_wire::gateway::names::{coordinator, durable_execution_name};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity, StartResponse};
use tpf_wire::gateway::{
    ActionRequest, AwaitIdentity, CallbackSignal, DriverCheckpoint, ExecutionCheckpoint,
    FunctionError, Operation,
};
use tpf_wire::Identity;

const TENANT: &str = "restaurant-demo";
const PIPELINE: &str = "org.pipelineframework.restaurantapproval";
const RELEASE: &str = "sha256:v1";
/// 2026-11-30T06:40:00Z.
const T0: i64 = 1_796_020_800_000;
const SECOND: i64 = 1_000;
const MINUTE: i64 = 60 * SECOND;
/// The gateway's numbered version, the only address the driver may invoke.
const GATEWAY_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:7";
/// The restaurant await's timeout (PT30M).
const AWAIT_SECONDS: u64 = 30 * 60;

type ModelGateway = Gateway<LocalControlPlane<InMemoryStore>, InMemoryBindings>;

fn identity() -> Identity {
    Identity {
        pipeline_id: PIPELINE.to_owned(),
        contract_version: RELEASE.to_owned(),
        release_version: RELEASE.to_owned(),
    }
}

/// TPF's side: the gateway over the control plane, every request the driver sent, and the
/// transport faults the next invokes meet.
struct Host {
    gateway: ModelGateway,
    now: i64,
    sent: Vec<ActionRequest>,
    /// What the gateway answered each request (before any fault lost it).
    replies: Vec<Result<String, FunctionError>>,
    /// Faults of the next invokes: the gateway ran, the answer is lost.
    faults: Vec<InvokeError>,
}

impl GatewayHost for Host {
    fn now_ms(&self) -> i64 {
        self.now
    }

    fn invoke(&mut self, function_arn: &str, request_json: &str) -> Result<String, InvokeError> {
        assert_eq!(
            function_arn, GATEWAY_ARN,
            "the gateway by its numbered version"
        );
        let request = ActionRequest::read(request_json)
            .unwrap_or_else(|e| panic!("TPF's gateway refuses {request_json}: {e}"));
        assert_eq!(
            request.to_json(),
            request_json,
            "the driver writes TPF's 15 keys in TPF's order"
        );
        self.sent.push(request);
        let reply = self.gateway.serve(request_json, self.now);
        self.replies.push(reply.clone());
        if !self.faults.is_empty() {
            return Err(self.faults.remove(0));
        }
        reply.map_err(InvokeError::Function)
    }

    fn start(&mut self, _: &ExecutionInput) -> Result<StartResponse, FunctionError> {
        panic!("the durable driver hands over by its own named invoke, not the starter")
    }
}

struct Steps<'a>(&'a mut Host);

impl StepHandler for Steps<'_> {
    fn step(&mut self, call: &StepCall<'_>, effects: &mut Effects) -> Result<Value, StepError> {
        self.0.now = call.now_ms;
        gateway_step(call, effects, self.0)
            .unwrap_or_else(|| Err(StepError(format!("not a gateway step: {}", call.payload))))
    }
}

struct World {
    engine: Engine,
    host: Host,
    driver_arn: String,
}

impl World {
    fn new(pipeline: PipelineDef, script: impl FnOnce(ScriptedWorker) -> ScriptedWorker) -> World {
        let worker = script(ScriptedWorker::new(identity()));
        let mut c = Coordinator::new(InMemoryStore::new(), pipeline, worker);
        c.register_release(&local_release(TENANT, &identity(), T0 - MINUTE))
            .unwrap();
        c.activate_release(TENANT, PIPELINE, RELEASE, T0 - MINUTE)
            .unwrap();
        let mut engine = Engine::new(T0);
        let driver_arn = engine.publish_version(
            "tpf-driver",
            Rc::new(GatewayProgram {
                gateway_arn: GATEWAY_ARN.to_owned(),
                run: GatewayRun {
                    longest_await_seconds: AWAIT_SECONDS,
                    scheduled_sweep: false,
                },
            }),
        );
        World {
            engine,
            host: Host {
                gateway: Gateway::new(LocalControlPlane::new(c), InMemoryBindings::new()),
                now: T0,
                sent: Vec::new(),
                replies: Vec::new(),
                faults: Vec::new(),
            },
            driver_arn,
        }
    }

    fn start(&mut self, input: &ExecutionInput) -> String {
        let value: Value = serde_json::from_str(&input.to_json()).unwrap();
        self.engine
            .start_execution(&self.driver_arn, &input.durable_execution_name(), value)
            .unwrap()
            .arn
    }

    /// TPF's work function claims what is queued; then the engine runs what is due.
    fn settle(&mut self) {
        loop {
            self.engine.run_until_idle(&mut Steps(&mut self.host));
            let now = self.engine.now_ms();
            let worked = self.host.gateway.plane.run_work(now).unwrap();
            if worked.is_empty() {
                return;
            }
        }
    }

    /// Runs timers up to `until`, TPF's work function between them.
    fn run_until(&mut self, until: i64) {
        self.settle();
        while let Some(t) = self.engine.next_timer().filter(|&t| t <= until) {
            self.engine.advance_to(t, &mut Steps(&mut self.host));
            self.settle();
        }
        self.engine.advance_to(until, &mut Steps(&mut self.host));
        self.settle();
    }

    fn execution(&self, arn: &str) -> &durable_interp::Execution {
        self.engine.execution(arn).unwrap()
    }

    fn ops(&self, arn: &str) -> Vec<String> {
        self.execution(arn)
            .ops
            .iter()
            .map(|o| o.name.clone())
            .collect()
    }

    /// SUBMIT's answers: (execution id, duplicate).
    fn submitted(&self) -> Vec<(String, bool)> {
        self.host
            .sent
            .iter()
            .zip(&self.host.replies)
            .filter(|(r, _)| r.operation == Operation::Submit)
            .map(|(_, reply)| {
                let r = tpf_wire::gateway::ActionResponse::read(reply.as_ref().unwrap()).unwrap();
                (r.checkpoint.unwrap().execution_id, r.duplicate)
            })
            .collect()
    }

    /// TPF's record of the execution SUBMIT created.
    fn record(&self) -> tpf_wire::records::ExecutionRecord {
        let id = self.submitted()[0].0.clone();
        self.host
            .gateway
            .plane
            .coordinator
            .status(TENANT, &id, self.engine.now_ms())
            .unwrap()
    }

    fn sent(&self) -> Vec<Operation> {
        self.host.sent.iter().map(|r| r.operation).collect()
    }

    /// The open await of TPF's execution, as TPF's gateway reports it.
    fn pending(&mut self, driver: &DriverCheckpoint) -> AwaitIdentity {
        let request = ActionRequest::for_execution(Operation::QueryPendingAwait, driver).unwrap();
        let text = self
            .host
            .gateway
            .serve(&request.to_json(), self.engine.now_ms())
            .unwrap();
        tpf_wire::gateway::ActionResponse::read(&text)
            .unwrap()
            .await_identity
            .expect("an open await")
    }

    /// A human decides through TPF's await API.
    fn decide(&mut self, interaction_id: &str) {
        let now = self.engine.now_ms();
        self.host
            .gateway
            .plane
            .coordinator
            .complete_await(
                &AwaitCompletion {
                    tenant_id: TENANT.to_owned(),
                    interaction_id: Some(interaction_id.to_owned()),
                    correlation_id: None,
                    response_payload: json!({ "decision": "accepted" }),
                    actor: Some("chef".to_owned()),
                },
                now,
            )
            .unwrap();
    }

    /// The wake-up's delivery: the generation's REGISTRATION names the callback; it is
    /// completed with TPF's signal.
    fn wake(&mut self, identity: &AwaitIdentity) {
        let registration = self
            .host
            .gateway
            .bindings
            .find_registration(
                &identity.tenant_id,
                &identity.execution_id,
                identity.generation,
            )
            .unwrap()
            .expect("the driver registered its callback");
        let signal = CallbackSignal::new(identity, Some("COMPLETED")).unwrap();
        self.engine
            .send_callback_success(
                &registration.provider.callback_id,
                serde_json::to_value(&signal).unwrap(),
            )
            .unwrap();
    }
}

fn input(key: &str) -> ExecutionInput {
    ExecutionInput::new(
        Some(TENANT),
        Some(key),
        ReleaseIdentity {
            pipeline_id: Some(PIPELINE),
            contract_version: Some(RELEASE),
            release_version: Some(RELEASE),
        },
        Some(r#"{"orderId":"o-42","total":12.50}"#),
        None,
        1,
    )
    .unwrap()
}

/// The driver checkpoint of `execution_id` in `generation`.
fn driver_checkpoint(execution_id: &str, generation: i64) -> DriverCheckpoint {
    DriverCheckpoint::new(
        ExecutionCheckpoint::new(
            Some(TENANT),
            Some(execution_id),
            Some(PIPELINE),
            Some(RELEASE),
            Some(RELEASE),
        )
        .unwrap(),
        generation,
    )
    .unwrap()
}

fn output(w: &World, arn: &str) -> Value {
    let x = w.execution(arn);
    assert_eq!(x.status, ExecutionStatus::Succeeded, "{:?}", x.error);
    x.result.clone().unwrap()
}

/// The await step completes live: SUBMIT, the polls, RESULT, TPF's output.
#[test]
fn the_happy_path_submits_polls_and_returns_tpfs_output() {
    let mut w = World::new(PipelineDef::restaurant(), |s| {
        s.script(2, vec![StepOutcome::Complete])
    });
    let first = input("order-42:submit");
    let arn = w.start(&first);
    w.run_until(T0 + 10 * MINUTE);
    let out = output(&w, &arn);
    assert_eq!(
        out.as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "tenantId",
            "executionId",
            "pipelineId",
            "contractVersion",
            "releaseVersion",
            "generation",
            "resultJson"
        ],
        "TPF's AwsDurableExecutionOutput"
    );
    assert_eq!(
        (out["tenantId"].as_str(), out["generation"].as_i64()),
        (Some(TENANT), Some(1))
    );
    assert!(
        serde_json::from_str::<Value>(out["resultJson"].as_str().unwrap())
            .unwrap()
            .is_object()
    );
    assert_eq!(
        w.ops(&arn),
        [
            coordinator::SUBMIT_STEP.to_owned(),
            coordinator::wait_for_condition(0),
            coordinator::RESULT_STEP.to_owned()
        ]
    );
    let sent = w.sent();
    assert_eq!(sent.first(), Some(&Operation::Submit));
    assert_eq!(sent.last(), Some(&Operation::Result));
    assert!(
        sent[1..sent.len() - 1]
            .chunks(2)
            .all(|c| c == [Operation::Sweep, Operation::Status]),
        "every check SWEEPs then reads STATUS: {sent:?}"
    );
    // The execution is named by TPF's recipe.
    assert_eq!(
        w.execution(&arn).name,
        durable_execution_name(Some(TENANT), Some("order-42:submit"), 1).unwrap()
    );
}

/// A lost SUBMIT answer and a throttle are retried as TPF's step is (5 s, then 10 s); the
/// retried SUBMIT is TPF's duplicate, the same execution.
#[test]
fn submit_is_retried_with_tpfs_step_retry_and_stays_one_execution() {
    let mut w = World::new(PipelineDef::restaurant(), |s| {
        s.script(2, vec![StepOutcome::Complete])
    });
    w.host.faults = vec![
        InvokeError::Transport("Lambda.TooManyRequestsException".into()),
        InvokeError::Transport("Lambda.ServiceException".into()),
    ];
    let arn = w.start(&input("order-43:submit"));
    w.run_until(T0 + 10 * MINUTE);
    output(&w, &arn);
    let submits: Vec<_> = w
        .execution(&arn)
        .history
        .iter()
        .filter(|e| {
            e.name.as_deref() == Some(coordinator::SUBMIT_STEP) && e.event_type == "StepStarted"
        })
        .map(|e| e.timestamp_ms - T0)
        .collect();
    assert_eq!(submits, [0, 5 * SECOND, 15 * SECOND]);
    let answers = w.submitted();
    assert_eq!(answers.len(), 3);
    assert!(
        answers.iter().all(|(id, _)| id == &answers[0].0),
        "one execution"
    );
    assert_eq!(
        answers.iter().map(|a| a.1).collect::<Vec<_>>(),
        [false, true, true],
        "the retries are TPF's duplicates"
    );
}

/// The driver parks on TPF's callback; the decision arrives; the wake-up completes the
/// callback with TPF's signal; the driver polls to SUCCEEDED.
#[test]
fn an_await_parks_on_a_registered_callback_and_the_signal_resumes_the_driver() {
    let mut w = World::new(PipelineDef::restaurant(), |s| s);
    let arn = w.start(&input("order-44:submit"));
    w.run_until(T0 + MINUTE);
    let x = w.execution(&arn);
    assert_eq!(x.status, ExecutionStatus::Running);
    assert_eq!(
        w.ops(&arn),
        [
            coordinator::SUBMIT_STEP.to_owned(),
            coordinator::wait_for_condition(0),
            coordinator::wait_for_callback(0),
            coordinator::wait_for_callback(0),
            durable_interp::submitter(&coordinator::wait_for_callback(0)),
        ]
    );
    let register = w
        .host
        .sent
        .iter()
        .find(|r| r.operation == Operation::RegisterCallback)
        .expect("REGISTER_CALLBACK")
        .clone();
    assert_eq!(
        register.provider_execution_name.as_deref(),
        Some(x.name.as_str())
    );
    assert_eq!(
        register.provider_execution_arn.as_deref(),
        Some(arn.as_str())
    );
    let callback = x.ops[3].callback_id.clone().unwrap();
    assert_eq!(
        register.provider_callback_id.as_deref(),
        Some(callback.as_str())
    );
    // The park's timeout is the longest await + 1 s.
    assert_eq!(
        x.ops[3].fire_at_ms.unwrap() - x.ops[3].fire_at_ms.unwrap() % SECOND,
        x.history
            .iter()
            .find(|e| e.event_type == "CallbackStarted")
            .unwrap()
            .timestamp_ms
            + (AWAIT_SECONDS as i64 + 1) * SECOND
    );

    let e = register.execution_id.clone().unwrap();
    let driver = driver_checkpoint(&e, 1);
    let pending = w.pending(&driver);
    w.run_until(T0 + 5 * MINUTE);
    w.decide(&pending.interaction_id);
    w.wake(&pending);
    w.run_until(T0 + 10 * MINUTE);
    let out = output(&w, &arn);
    assert_eq!(out["executionId"].as_str(), Some(e.as_str()));
    assert_eq!(
        w.ops(&arn).last().map(String::as_str),
        Some(coordinator::RESULT_STEP)
    );
    assert!(w.ops(&arn).contains(&coordinator::wait_for_condition(1)));
}

/// Nobody decides: the park times out a second after TPF's deadline, the next check SWEEPs
/// (TPF applies its await timeout) and the driver routes the status TPF left.
#[test]
fn an_await_timeout_is_applied_while_parked() {
    let mut w = World::new(PipelineDef::restaurant(), |s| s);
    let arn = w.start(&input("order-45:submit"));
    w.run_until(T0 + MINUTE);
    let parked_at = w
        .execution(&arn)
        .history
        .iter()
        .find(|e| e.event_type == "CallbackStarted")
        .unwrap()
        .timestamp_ms;
    w.run_until(T0 + 2 * 60 * MINUTE);
    let x = w.execution(&arn);
    let timed_out = x
        .history
        .iter()
        .find(|e| e.event_type == "CallbackTimedOut")
        .expect("the park timed out")
        .timestamp_ms;
    assert_eq!(timed_out - parked_at, (AWAIT_SECONDS as i64 + 1) * SECOND);
    // After the timeout: a SWEEP, then STATUS, at the timeout's instant.
    let after: Vec<_> = x
        .history
        .iter()
        .filter(|e| e.timestamp_ms >= timed_out && e.event_type == "StepStarted")
        .map(|e| e.name.clone().unwrap())
        .collect();
    assert_eq!(after.first(), Some(&coordinator::wait_for_condition(1)));
    let status = w.record().status;
    assert!(
        status.as_str() != "WAITING_EXTERNAL",
        "TPF applied its await timeout: {status}"
    );
    // The driver ended as TPF's execution did, or goes on polling it.
    match status.as_str() {
        "FAILED" | "DLQ" => {
            assert_eq!(x.status, ExecutionStatus::Failed);
            let f = x.error.as_ref().unwrap();
            assert_eq!(f.error, "TPF.ExecutionEnded");
            assert_eq!(f.cause, format!("TPF execution ended with status {status}"));
        }
        "SUCCEEDED" => assert_eq!(x.status, ExecutionStatus::Succeeded),
        _ => assert_eq!(x.status, ExecutionStatus::Running),
    }
}

/// Step 0 fails on every attempt until TPF's retries are spent: the driver fails with TPF's text; an operator re-drives through the
/// gateway; generation 2, started with TPF's replacement input, resumes from its input, parks
/// on the await under its own generation and completes.
#[test]
fn retry_exhaustion_fails_the_driver_and_a_redrive_completes_in_generation_two() {
    let mut w = World::new(PipelineDef::restaurant(), |s| {
        s.script(
            0,
            vec![StepOutcome::FailRetryable("java.net.SocketTimeoutException".into()); 10],
        )
    });
    let arn = w.start(&input("order-46:submit"));
    w.run_until(T0 + 60 * MINUTE);
    assert!(
        w.host.replies.iter().any(|r| r
            .as_ref()
            .is_ok_and(|t| t.contains(r#""executionStatus":"WAIT_RETRY""#))),
        "TPF retried the step while the driver polled"
    );
    let x = w.execution(&arn);
    assert_eq!(x.status, ExecutionStatus::Failed);
    let f = x.error.clone().unwrap();
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        (
            "TPF.ExecutionEnded",
            "TPF execution ended with status FAILED"
        )
    );

    let e = w.host.sent[0].clone();
    let record = w.record();
    let (execution_id, version) = (record.execution_id.clone(), record.version);
    assert_eq!(e.operation, Operation::Submit);
    let gen1 = driver_checkpoint(&execution_id, 1);
    // The cause is fixed; the operator re-drives.
    w.host
        .gateway
        .plane
        .coordinator
        .worker_mut()
        .set_script(0, vec![]);
    let redrive = ActionRequest::redrive(&gen1, version, Some("operator retry")).unwrap();
    w.host
        .gateway
        .serve(&redrive.to_json(), w.engine.now_ms())
        .unwrap();
    let next = ExecutionInput::resume_execution(
        TENANT,
        &execution_id,
        1,
        ReleaseIdentity {
            pipeline_id: Some(PIPELINE),
            contract_version: Some(RELEASE),
            release_version: Some(RELEASE),
        },
    )
    .unwrap();
    let sent_before = w.host.sent.len();
    let arn2 = w.start(&next);
    w.run_until(T0 + 62 * MINUTE);
    let gen2 = DriverCheckpoint::new(gen1.execution.clone(), 2).unwrap();
    let pending = w.pending(&gen2);
    w.decide(&pending.interaction_id);
    w.wake(&pending);
    w.run_until(T0 + 70 * MINUTE);
    let out = output(&w, &arn2);
    assert_eq!(out["generation"].as_i64(), Some(2));
    assert_eq!(out["executionId"].as_str(), Some(execution_id.as_str()));
    assert_eq!(w.ops(&arn2)[0], coordinator::RESUME_STEP);
    assert!(
        w.host.sent[sent_before..]
            .iter()
            .all(|r| r.operation != Operation::Submit && r.generation == 2),
        "generation 2 resumes from its input and speaks as generation 2"
    );
    assert_eq!(
        w.execution(&arn2).name,
        durable_execution_name(Some(TENANT), Some(&execution_id), 2).unwrap()
    );
}

/// Two awaits in one generation: after the first park and its wake, the driver meets
/// WAITING_EXTERNAL again and hands over to generation 2 instead of registering a second
/// callback under generation 1's key; generation 2 parks and completes.
#[test]
fn a_second_await_hands_over_to_the_next_generation() {
    let pipeline = PipelineDef::new(vec![
        StepDef::internal("Validate"),
        StepDef::await_scalar("First Approval", 30 * 60 * 1000),
        StepDef::await_scalar("Second Approval", 30 * 60 * 1000),
        StepDef::internal("Finalize"),
    ]);
    let mut w = World::new(pipeline, |s| s);
    let arn = w.start(&input("order-47:submit"));
    w.run_until(T0 + MINUTE);
    let execution_id = w
        .host
        .sent
        .iter()
        .find_map(|r| {
            (r.operation == Operation::RegisterCallback).then(|| r.execution_id.clone().unwrap())
        })
        .expect("a registration");
    let gen1 = driver_checkpoint(&execution_id, 1);
    let first = w.pending(&gen1);
    w.decide(&first.interaction_id);
    w.wake(&first);
    w.run_until(T0 + 5 * MINUTE);

    let out = output(&w, &arn);
    let x = w.execution(&arn);
    let next_name = durable_execution_name(Some(TENANT), Some(&execution_id), 2).unwrap();
    assert_eq!(
        out,
        json!({"tenantId": TENANT, "executionId": execution_id, "handedOverTo": next_name, "nextGeneration": 2})
    );
    assert_eq!(
        x.ops.last().unwrap().name,
        tpf_durable_driver::gateway::HAND_OVER_STEP
    );
    let registrations = w
        .host
        .sent
        .iter()
        .filter(|r| r.operation == Operation::RegisterCallback && r.generation == 1)
        .count();
    assert_eq!(registrations, 1, "generation 1 never registers twice");

    let gen2 = w
        .engine
        .executions()
        .iter()
        .find(|e| e.name == next_name)
        .expect("generation 2 started")
        .arn
        .clone();
    let gen2_checkpoint = DriverCheckpoint::new(gen1.execution.clone(), 2).unwrap();
    let second = w.pending(&gen2_checkpoint);
    assert_ne!(second.interaction_id, first.interaction_id);
    w.decide(&second.interaction_id);
    w.wake(&second);
    w.run_until(T0 + 10 * MINUTE);
    let out = output(&w, &gen2);
    assert_eq!(out["generation"].as_i64(), Some(2));
}

/// A signal for another execution fails the driver with TPF's text.
#[test]
fn a_signal_for_another_execution_fails_the_driver() {
    let mut w = World::new(PipelineDef::restaurant(), |s| s);
    let arn = w.start(&input("order-48:submit"));
    w.run_until(T0 + MINUTE);
    let callback = w.execution(&arn).ops[3].callback_id.clone().unwrap();
    let stranger =
        AwaitIdentity::new(Some(TENANT), Some("someone-else"), Some("i"), Some("c"), 1).unwrap();
    let signal = CallbackSignal::new(&stranger, Some("COMPLETED")).unwrap();
    w.engine
        .send_callback_success(&callback, serde_json::to_value(&signal).unwrap())
        .unwrap();
    w.run_until(T0 + 2 * MINUTE);
    let f = w.execution(&arn).error.clone().unwrap();
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        (
            "TPF.CallbackIdentityMismatch",
            "provider callback identity does not match the TPF execution checkpoint"
        )
    );
}
