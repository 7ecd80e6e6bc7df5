//! The Step Functions gateway driver, compiled from today's Restaurant Approval and run on the
//! ASL interpreter through the gateway Task binding (`sfn::gateway`), sends only requests TPF's
//! gateway accepts: each one is read by the gateway's own reading (`ActionRequest::read`, the
//! Quarkus mapper), and its bytes are the bytes TPF's caller writes for the same call (the
//! factories the TPF vectors pin). A scripted gateway answers; the flows cover every request
//! the driver can send: SUBMIT, SWEEP, STATUS, REGISTER_CALLBACK, RESULT, the starter's input,
//! on both transports, with the wait ladder, the park's deadline, the hand-over, TPF's
//! terminal failures, a mismatched signal and a function error.

use std::collections::VecDeque;

use asl_interp::{Engine, ExecutionStatus, TaskCall, TaskHandler, TaskOutcome};
use serde_json::{json, Value};
use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_sfn_mapping::gateway::engine::{GatewayHost, InvokeError};
use tpf_sfn_mapping::sfn::gateway::{GatewayFunctions, GatewayTasks};
use tpf_wire::gateway::host::{driver_error, execution_ended_cause, ExecutionOutput};
use tpf_wire::gateway::records::{AwaitIdentity, CallbackSignal};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity, StartResponse, STARTED_STATUS};
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, DriverCheckpoint, ExecutionCheckpoint, FunctionError, Operation,
    ProviderCallback,
};

const GATEWAY: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action-gateway:7";
const STARTER: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-sfn-starter";
const TENANT: &str = "tenant-a";
const EXECUTION: &str = "exec-0001";
const RESULT: &str = "{\"approved\":true}";
const T0: i64 = 1_780_000_000_000;

fn config(transport: &str) -> String {
    format!(
        "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{GATEWAY}\"\n\
         transport = \"{transport}\"\nqueue-url = \"https://sqs.eu-west-1.amazonaws.com/210987654321/tpf-gateway\"\n\
         starter-function-arn = \"{STARTER}\"\n"
    )
}

struct Driver {
    engine: Engine,
    machine: String,
    release: (String, String, String),
}

fn driver(transport: &str) -> Driver {
    let toml = config(transport);
    let out = compile(
        &Input {
            config: Some(("tpf-sfn.toml", &toml)),
            ..bundled::restaurant_input()
        },
        StepFunctions,
    )
    .unwrap();
    let mut engine = Engine::new(T0, 7);
    let machine = engine
        .create_state_machine(&out.sfn.machines.driver, out.driver)
        .unwrap();
    let id = out.plan.identity;
    Driver {
        engine,
        machine,
        release: (id.pipeline_id, id.contract_version, id.release_version),
    }
}

impl Driver {
    fn release(&self) -> ReleaseIdentity<'_> {
        ReleaseIdentity {
            pipeline_id: Some(&self.release.0),
            contract_version: Some(&self.release.1),
            release_version: Some(&self.release.2),
        }
    }

    fn first_input(&self) -> ExecutionInput {
        ExecutionInput::new(
            Some(TENANT),
            Some("order-42:submit"),
            self.release(),
            Some("{\"requestId\":\"9b2e\"}"),
            None,
            1,
        )
        .unwrap()
    }

    fn checkpoint(&self) -> ExecutionCheckpoint {
        let r = self.release();
        ExecutionCheckpoint::new(
            Some(TENANT),
            Some(EXECUTION),
            r.pipeline_id,
            r.contract_version,
            r.release_version,
        )
        .unwrap()
    }

    /// Starts the generation `input` names, under TPF's name, as the starter does.
    fn start(&mut self, input: &ExecutionInput) -> String {
        let name = input.durable_execution_name();
        let value: Value = serde_json::from_str(&input.to_json()).unwrap();
        self.engine
            .start_execution(&self.machine, &name, value)
            .unwrap()
            .execution_arn
    }
}

/// A gateway that checks every request against TPF's reading and TPF's caller's bytes, and
/// answers from a script.
struct Scripted {
    input: ExecutionInput,
    checkpoint: ExecutionCheckpoint,
    statuses: VecDeque<&'static str>,
    status_error: Option<FunctionError>,
    /// `(operation, request bytes)` in call order.
    requests: Vec<(Operation, String)>,
    starts: Vec<ExecutionInput>,
}

impl Scripted {
    fn new(d: &Driver, input: ExecutionInput, statuses: &[&'static str]) -> Self {
        Self {
            input,
            checkpoint: d.checkpoint(),
            statuses: statuses.iter().copied().collect(),
            status_error: None,
            requests: Vec::new(),
            starts: Vec::new(),
        }
    }

    fn ops(&self) -> Vec<Operation> {
        self.requests.iter().map(|(op, _)| *op).collect()
    }

    /// What TPF's caller sends for this call: its factories, over the driver's checkpoint.
    fn expected(&self, read: &ActionRequest) -> ActionRequest {
        let cp = DriverCheckpoint::new(self.checkpoint.clone(), self.input.generation).unwrap();
        match read.operation {
            Operation::Submit => ActionRequest::submit(&self.input).unwrap(),
            Operation::RegisterCallback => {
                let name = self.input.durable_execution_name();
                let arn = read.provider_execution_arn.as_deref().unwrap();
                assert!(arn.ends_with(&format!(":{name}")), "{arn}");
                ActionRequest::register(
                    &cp,
                    ProviderCallback {
                        execution_name: Some(&name),
                        execution_arn: Some(arn),
                        callback_id: read.provider_callback_id.as_deref(),
                    },
                )
                .unwrap()
            }
            op => ActionRequest::for_execution(op, &cp).unwrap(),
        }
    }
}

impl GatewayHost for Scripted {
    fn now_ms(&self) -> i64 {
        T0
    }

    fn invoke(&mut self, function_arn: &str, request_json: &str) -> Result<String, InvokeError> {
        assert_eq!(
            function_arn, GATEWAY,
            "only the numbered version is invoked"
        );
        let read = ActionRequest::read(request_json)
            .unwrap_or_else(|e| panic!("TPF's gateway refuses {request_json}: {e}"));
        assert_eq!(
            request_json,
            self.expected(&read).to_json(),
            "not the bytes TPF's caller writes"
        );
        self.requests
            .push((read.operation, request_json.to_owned()));
        let response = match read.operation {
            Operation::Submit => ActionResponse::submitted(self.checkpoint.clone(), false),
            Operation::Sweep => {
                ActionResponse::status(tpf_wire::gateway::response::SWEEPED).unwrap()
            }
            Operation::Status => {
                if let Some(e) = self.status_error.take() {
                    return Err(InvokeError::Function(e));
                }
                ActionResponse::status(self.statuses.pop_front().expect("a scripted status"))
                    .unwrap()
            }
            Operation::Result => ActionResponse::result(RESULT).unwrap(),
            Operation::RegisterCallback => ActionResponse::bound(true),
            op => panic!("the driver never sends {op}"),
        };
        Ok(response.to_json())
    }

    fn start(&mut self, input: &ExecutionInput) -> Result<StartResponse, FunctionError> {
        self.starts.push(input.clone());
        Ok(StartResponse {
            durable_execution_name: input.durable_execution_name(),
            status_code: STARTED_STATUS,
        })
    }
}

/// Records when each Task state called, then hands the call to the gateway binding.
struct Timed<'h> {
    tasks: GatewayTasks<'h>,
    calls: Vec<(String, i64)>,
}

impl TaskHandler for Timed<'_> {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        self.calls.push((call.state_name.to_owned(), call.now_ms));
        self.tasks.invoke(call)
    }

    fn deferred(&mut self) -> Vec<asl_interp::Deferred> {
        self.tasks.deferred()
    }
}

fn functions() -> GatewayFunctions {
    GatewayFunctions {
        gateway_arn: GATEWAY.into(),
        starter_arn: STARTER.into(),
    }
}

fn signal(generation: i64) -> Value {
    let id = AwaitIdentity::new(
        Some(TENANT),
        Some(EXECUTION),
        Some("interaction-7f3a"),
        Some("corr-1"),
        generation,
    )
    .unwrap();
    serde_json::to_value(CallbackSignal::new(&id, Some("COMPLETED")).unwrap()).unwrap()
}

fn status_times(calls: &[(String, i64)]) -> Vec<i64> {
    calls
        .iter()
        .filter(|(s, _)| s == "Read TPF status")
        .map(|(_, t)| (t - T0) / 1000)
        .collect()
}

/// One driver execution against a scripted gateway: `input` (from the compiled release)
/// started under TPF's name, run until idle, then `then` (advancing the clock, waking it) with
/// the same handler. Answers the driver, the gateway's record, the Task calls' times and the
/// execution's ARN.
struct Ran {
    d: Driver,
    gw: Scripted,
    calls: Vec<(String, i64)>,
    arn: String,
}

fn run(
    transport: &str,
    input: impl FnOnce(&Driver) -> ExecutionInput,
    statuses: &[&'static str],
    status_error: Option<FunctionError>,
    then: impl FnOnce(&mut Engine, &str, &mut Timed<'_>),
) -> Ran {
    let mut d = driver(transport);
    let input = input(&d);
    let mut gw = Scripted::new(&d, input.clone(), statuses);
    gw.status_error = status_error;
    let f = functions();
    let arn = d.start(&input);
    let mut h = Timed {
        tasks: GatewayTasks::new(&mut gw, &f),
        calls: Vec::new(),
    };
    d.engine.run_until_idle(&mut h);
    then(&mut d.engine, &arn, &mut h);
    let calls = h.calls;
    Ran { d, gw, calls, arn }
}

#[test]
fn submit_poll_park_wake_and_result_on_both_transports() {
    for transport in ["lambda", "queue"] {
        let statuses = ["RUNNING", "RUNNING", "WAITING_EXTERNAL", "SUCCEEDED"];
        let r = run(
            transport,
            Driver::first_input,
            &statuses,
            None,
            |engine, arn, h| {
                engine.advance_to(T0 + 100_000, h);
                let tokens: Vec<String> = engine
                    .open_tokens(arn)
                    .iter()
                    .map(|t| t.to_string())
                    .collect();
                assert_eq!(tokens.len(), 1, "{transport}: parked on one token");
                engine.send_task_success(&tokens[0], signal(1)).unwrap();
                engine.run_until_idle(h);
            },
        );
        // The ladder's first two waits (5 s, 8 s), then the park until the wake at 100 s.
        assert_eq!(status_times(&r.calls), [0, 5, 13, 100], "{transport}");
        use Operation::*;
        assert_eq!(
            r.gw.ops(),
            [
                Submit,
                Sweep,
                Status,
                Sweep,
                Status,
                Sweep,
                Status,
                RegisterCallback,
                Sweep,
                Status,
                Result
            ],
            "{transport}"
        );
        let desc = r.d.engine.describe_execution(&r.arn).unwrap();
        assert_eq!(
            desc.status,
            ExecutionStatus::Succeeded,
            "{transport}: {desc:?}"
        );
        let expected: Value =
            serde_json::from_str(&ExecutionOutput::new(&r.d.checkpoint(), 1, RESULT).to_json())
                .unwrap();
        assert_eq!(desc.output, Some(expected), "{transport}");
    }
}

#[test]
fn a_resumed_generation_parks_once_sweeps_at_the_deadline_and_hands_over() {
    for transport in ["lambda", "queue"] {
        let resumed = |d: &Driver| {
            ExecutionInput::resume_execution(TENANT, EXECUTION, 1, d.release()).unwrap()
        };
        let statuses = ["WAITING_EXTERNAL", "WAITING_EXTERNAL"];
        let r = run(transport, resumed, &statuses, None, |engine, _, h| {
            // Today's sample's await times out after PT30M: the park lasts 1801 s.
            engine.advance_to(T0 + 1_800_000, h);
            assert_eq!(
                status_times(&h.calls),
                [0],
                "{transport}: still parked at 1800 s"
            );
            engine.advance_to(T0 + 1_802_000, h);
        });
        assert_eq!(status_times(&r.calls), [0, 1801], "{transport}");
        use Operation::*;
        assert_eq!(
            r.gw.ops(),
            [Sweep, Status, RegisterCallback, Sweep, Status],
            "{transport}"
        );
        // A second WAITING_EXTERNAL in this generation: TPF's replacement input, generation 3.
        let next = ExecutionInput::resume_execution(TENANT, EXECUTION, 2, r.d.release()).unwrap();
        assert_eq!(r.gw.starts, std::slice::from_ref(&next), "{transport}");
        let desc = r.d.engine.describe_execution(&r.arn).unwrap();
        assert_eq!(desc.status, ExecutionStatus::Succeeded, "{transport}");
        let out = desc.output.unwrap();
        assert_eq!(out["handedOverTo"], json!(next.durable_execution_name()));
        assert_eq!(out["generation"], json!(2));
        assert_eq!(out["executionId"], json!(EXECUTION));
    }
}

fn ends(
    transport: &str,
    statuses: &[&'static str],
    error: Option<FunctionError>,
    wake: Option<Value>,
) -> (String, String) {
    let r = run(
        transport,
        Driver::first_input,
        statuses,
        error,
        |engine, arn, h| {
            if let Some(signal) = wake {
                let token = engine.open_tokens(arn)[0].to_string();
                engine.send_task_success(&token, signal).unwrap();
                engine.run_until_idle(h);
            }
        },
    );
    let desc = r.d.engine.describe_execution(&r.arn).unwrap();
    assert_eq!(desc.status, ExecutionStatus::Failed, "{desc:?}");
    (desc.error.unwrap(), desc.cause.unwrap_or_default())
}

#[test]
fn terminal_statuses_a_foreign_signal_and_a_function_error_fail_the_driver_by_name() {
    for transport in ["lambda", "queue"] {
        for status in ["FAILED", "DLQ", "REMOTE_OUTCOME_UNKNOWN"] {
            assert_eq!(
                ends(transport, &[status], None, None),
                (
                    driver_error::EXECUTION_ENDED.to_owned(),
                    execution_ended_cause(status)
                ),
                "{transport}"
            );
        }
        let (error, _) = ends(transport, &["WAITING_EXTERNAL"], None, Some(signal(2)));
        assert_eq!(
            error,
            driver_error::CALLBACK_IDENTITY_MISMATCH,
            "{transport}"
        );
        let not_found = FunctionError {
            error_message: format!("Execution not found: {EXECUTION}"),
            error_type: "jakarta.ws.rs.NotFoundException".into(),
        };
        let (error, cause) = ends(transport, &[], Some(not_found.clone()), None);
        assert_eq!(error, not_found.error_type, "{transport}");
        assert!(
            cause.contains(&not_found.error_message),
            "{transport}: {cause}"
        );
    }
}
