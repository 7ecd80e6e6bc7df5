//! `REMOTE_OUTCOME_UNKNOWN` on both drivers: when TPF answers that a remote transition's outcome
//! is unconfirmed, each driver stops at once with `TPF.RemoteOutcomeUnknown` and TPF's error code
//! as the cause, and asks TPF nothing more: only an operator's re-drive moves the execution on.
//! The answer is the one TPF's model builds for such a record.

use std::cell::{Cell, RefCell};

use asl_interp::{Engine, ExecutionStatus as SfnStatus, TaskCall, TaskOutcome};
use serde_json::json;
use tpf_durable_driver::ops::{ActionCall, CallOutcome, GenerationRow, Ops, ParkRequest, Wake};
use tpf_durable_driver::{drive, DriverInput, End};
use tpf_model::store::{CreateExecutionCommand, ExecutionStore, InMemoryStore};
use tpf_sfn_compiler::bundled::restaurant_input;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::durable::LambdaDurable;
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_wire::action::{driver_error, ProcessWorkItemResponse};
use tpf_wire::records::ExecutionStatus;

const CODE: &str = "RemoteDeadlineExceeded";

/// 2026-11-30T06:40:00Z.
const NOW: i64 = 1_796_020_800_000;

/// TPF's process-work-item answer for an execution it marked REMOTE_OUTCOME_UNKNOWN.
fn answer() -> ProcessWorkItemResponse {
    let store = InMemoryStore::new();
    let r = store
        .create_or_get_execution(&CreateExecutionCommand {
            tenant_id: "t".into(),
            execution_id: tpf_wire::ids::execution_id("t", "k", NOW),
            execution_key: "k".into(),
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
            result_shape: tpf_wire::records::ResultShape::Single,
            input_payload: json!({}),
            initial_step_index: 0,
            now_ms: NOW,
            ttl_epoch_s: NOW / 1000 + 86_400,
        })
        .unwrap()
        .record;
    let claimed = store
        .claim_lease("t", &r.execution_id, "w", NOW, 30_000)
        .unwrap()
        .unwrap();
    let marked = store
        .mark_remote_outcome_unknown("t", &r.execution_id, claimed.version, CODE, "m", NOW)
        .unwrap()
        .unwrap();
    assert_eq!(marked.status, ExecutionStatus::RemoteOutcomeUnknown);
    ProcessWorkItemResponse {
        tenant_id: marked.tenant_id,
        execution_id: marked.execution_id,
        status: marked.status,
        version: marked.version,
        current_step_index: marked.current_step_index,
        attempt: marked.attempt,
        next_due_at: None,
        await_: None,
        error_code: marked.error_code,
        claimed: false,
        driver: None,
    }
}

/// The v1 drivers, named explicitly: the embedded default is the gateway binding.
fn v1_input() -> Input<'static> {
    Input {
        binding: Some(BindingKind::Http),
        ..restaurant_input()
    }
}

#[test]
fn the_state_machine_stops_on_it_with_its_own_error() {
    let out = compile(&v1_input(), StepFunctions).unwrap_or_else(|d| panic!("{d}"));
    let mut engine = Engine::new(NOW, 1);
    let machine = engine
        .create_state_machine("driver", out.driver.clone())
        .unwrap();
    let arn = engine
        .start_execution(
            &machine,
            "e",
            json!({"tenantId": "t", "executionId": "e", "lineage": "e", "generation": 0}),
        )
        .unwrap()
        .execution_arn;
    let asked = Cell::new(0);
    let body = serde_json::to_value(answer()).unwrap();
    let mut h = |c: &TaskCall<'_>| {
        if c.resource.contains("http:invoke") {
            asked.set(asked.get() + 1);
            let mut body = body.clone();
            // TPF echoes the request's driver object; the driver reads its counter from it.
            body["driver"] = c.input["RequestBody"]["driver"].clone();
            TaskOutcome::Succeeded(json!({
                "StatusCode": 200, "StatusText": "OK", "Headers": {}, "ResponseBody": body
            }))
        } else {
            TaskOutcome::Succeeded(json!({}))
        }
    };
    engine.advance_until_idle_or(i64::MAX, &mut h);
    let d = engine.describe_execution(&arn).unwrap();
    assert_eq!(d.status, SfnStatus::Failed, "{d:?}");
    assert_eq!(
        d.error.as_deref(),
        Some(driver_error::REMOTE_OUTCOME_UNKNOWN)
    );
    assert_eq!(d.cause.as_deref(), Some(CODE));
    assert_eq!(asked.get(), 1, "one answer is enough to stop");
}

/// An engine that answers every call with TPF's answer and records what the driver asked for.
struct Answering {
    calls: Cell<u32>,
    other: RefCell<Vec<&'static str>>,
}

impl Ops for Answering {
    type Stop = ();

    async fn register(
        &self,
        _: &str,
        _: &GenerationRow,
    ) -> Result<Result<(), tpf_durable_driver::ops::WriteFailed>, ()> {
        Ok(Ok(()))
    }

    async fn call(&self, _: &str, _: &ActionCall) -> Result<CallOutcome, ()> {
        self.calls.set(self.calls.get() + 1);
        Ok(CallOutcome::Answer {
            at_ms: NOW,
            response: Box::new(answer()),
        })
    }

    async fn wait(&self, _: &str, _: u64) -> Result<(), ()> {
        self.other.borrow_mut().push("wait");
        Ok(())
    }

    async fn park(&self, _: &str, _: &ParkRequest) -> Result<Wake, ()> {
        self.other.borrow_mut().push("park");
        Ok(Wake::TimedOut)
    }

    async fn hand_over(
        &self,
        _: &str,
        _: &DriverInput,
    ) -> Result<Result<(), tpf_durable_driver::ops::WriteFailed>, ()> {
        self.other.borrow_mut().push("hand over");
        Ok(Ok(()))
    }
}

#[test]
fn the_durable_driver_stops_on_it_with_the_same_error() {
    let out = compile(&v1_input(), LambdaDurable).unwrap_or_else(|d| panic!("{d}"));
    let ops = Answering {
        calls: Cell::new(0),
        other: RefCell::new(Vec::new()),
    };
    let input = DriverInput {
        tenant_id: "t".into(),
        execution_id: "e".into(),
        lineage: "e".into(),
        generation: 0,
    };
    let end = durable_interp::poll::ready(drive(&ops, &out.durable.spec, &input))
        .unwrap_or_else(|_| panic!("the driver resolves at once on this engine"))
        .unwrap_or_else(|()| panic!("no stop"));
    assert_eq!(
        end,
        End::Failed {
            error: driver_error::REMOTE_OUTCOME_UNKNOWN.into(),
            cause: CODE.into()
        }
    );
    assert_eq!(ops.calls.get(), 1);
    assert!(ops.other.borrow().is_empty(), "{:?}", ops.other.borrow());
}
