//! A TEST DOUBLE of a gateway driver and its engine, written in Rust for these tests only: it
//! follows the driver flow the gateway protocol specifies (submit or resume, SWEEP + STATUS on
//! the fixed wait ladder, park with a timeout of the longest await + 1 s, check the signal's
//! identity, hand over at a second park, RESULT) so the gateway world's scenarios and checks
//! run before the real engines (Step Functions, Lambda durable functions) implement
//! `GatewayEngine`. It keeps a Lambda durable functions history, so the provider's
//! classification is `durable_callback_state`. It proves the world, never a backend.
//!
//! `DoubleMutant` breaks one rule of the flow, for the checks' own tests.

use serde_json::json;
use tpf_sfn_mapping::gateway::engine::{
    DriverStatus, DriverView, EngineError, GatewayEngine, GatewayHost, HistorySize, InvokeError,
    ProviderRefusal, Started,
};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, GATEWAY_FUNCTION};
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_sfn_wakeup::provider::{
    durable_callback_state, durable_event as ev, DurableEvent, ProviderState,
};
use tpf_wire::gateway::host::refused_registration_wait_seconds;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, CallbackSignal, DriverCheckpoint, ExecutionCheckpoint, Mapper,
    Operation, ProviderCallback,
};

/// The driver's wait ladder between polls, in seconds (5 × 1.5^n rounded up, capped at 300).
pub const LADDER_S: [i64; 13] = [5, 8, 11, 17, 25, 38, 57, 85, 128, 192, 288, 300, 300];
/// TPF's step retry: 6 attempts, 5 s initial, ×2, 60 s max (no jitter in the double).
const ATTEMPTS: u32 = 6;

/// One broken rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoubleMutant {
    /// The park has no timeout (TPF's own driver).
    NoParkTimeout,
    /// A second park in a generation registers another callback instead of handing over
    /// (TPF's own driver).
    ParkTwice,
    /// STATUS is sent with the operation in lower case.
    LowercaseOperation,
    /// The gateway is invoked by its unqualified name.
    UnqualifiedArn,
    /// A failed TPF execution ends the driver SUCCEEDED.
    SucceedOnFailure,
    /// Each SUBMIT attempt sends a new idempotency key.
    NewKeyPerSubmitAttempt,
    /// STATUS names a release other than the execution's.
    StatusOnAnotherRelease,
    /// A generation that hands over goes on polling instead of ending.
    RunOnAfterHandOver,
    /// A driver re-drives the execution TPF failed.
    RedriveOnFailure,
    /// The poll ladder waits an hour at every rung.
    HourlyPolls,
    /// The poll ladder's first three rungs wait nothing.
    TightPolls,
    /// The park times out after 5 s, long before any await's deadline.
    ShortParkTimeout,
    /// A refused registration hands over a second later: no retry under the same callback
    /// id, no wait of TPF's ladder.
    HandOverAtOnceOnRefusal,
}

/// The release a [`DoubleMutant::StatusOnAnotherRelease`] STATUS names.
pub const ANOTHER_RELEASE: &str = "sha256:another-release";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Submit,
    Poll {
        rung: usize,
    },
    Register {
        callback: String,
    },
    Parked {
        callback: String,
    },
    /// The registration failed for good: hand over once TPF's ladder's wait at this
    /// generation has passed.
    Refused,
    Done,
}

struct Exec {
    arn: String,
    name: String,
    input_text: String,
    input: Option<ExecutionInput>,
    status: DriverStatus,
    output: Option<String>,
    error: Option<(String, String)>,
    started_at: i64,
    ended_at: Option<i64>,
    checkpoint: Option<DriverCheckpoint>,
    phase: Phase,
    due: Option<i64>,
    /// Failed attempts of the current step.
    attempt: u32,
    parks: u32,
    /// A signal that arrived while the callback's registration was still being retried (the
    /// callback exists from the moment the driver creates it, before it registers).
    pending_signal: Option<String>,
    /// Events in Lambda durable functions' vocabulary: (type, operation id, callback id).
    history: Vec<(&'static str, String, Option<String>)>,
}

pub struct TestDoubleEngine {
    now: i64,
    park_timeout_ms: i64,
    mutant: Option<DoubleMutant>,
    execs: Vec<Exec>,
    changes: Vec<String>,
}

impl TestDoubleEngine {
    /// Parks for `longest_await_ms` + 1 s.
    pub fn new(longest_await_ms: i64, mutant: Option<DoubleMutant>) -> Self {
        Self {
            now: 0,
            park_timeout_ms: longest_await_ms + 1_000,
            mutant,
            execs: Vec::new(),
            changes: Vec::new(),
        }
    }

    fn is(&self, m: DoubleMutant) -> bool {
        self.mutant == Some(m)
    }
}

fn operation_id(parks: u32) -> String {
    format!("await-completion-{parks}")
}

impl Exec {
    fn end(&mut self, status: DriverStatus, now: i64, changes: &mut Vec<String>) {
        self.status = status;
        self.phase = Phase::Done;
        self.due = None;
        self.ended_at = Some(now);
        let event = match status {
            DriverStatus::Succeeded => ev::EXECUTION_SUCCEEDED,
            DriverStatus::Stopped => ev::EXECUTION_STOPPED,
            DriverStatus::TimedOut => ev::EXECUTION_TIMED_OUT,
            _ => ev::EXECUTION_FAILED,
        };
        self.history.push((event, "execution".to_owned(), None));
        changes.push(self.arn.clone());
    }

    fn fail(&mut self, error: &str, cause: &str, now: i64, changes: &mut Vec<String>) {
        self.error = Some((error.to_owned(), cause.to_owned()));
        self.end(DriverStatus::Failed, now, changes);
    }

    /// The callback's signal: its identity must be the checkpoint's, then the driver asks TPF
    /// again.
    fn accept_signal(&mut self, result_json: &str, now: i64, changes: &mut Vec<String>) {
        let signal = serde_json::from_str(result_json)
            .ok()
            .and_then(|v| CallbackSignal::read(&v, Mapper::Caller).ok());
        let matches = match (&signal, &self.checkpoint) {
            (Some(s), Some(c)) => {
                s.tenant_id == c.execution.tenant_id
                    && s.execution_id == c.execution.execution_id
                    && s.generation == c.generation
            }
            _ => false,
        };
        if matches {
            self.phase = Phase::Poll { rung: 0 };
            self.due = Some(now);
        } else {
            self.fail(
                "TPF.CallbackIdentityMismatch",
                "provider callback identity does not match the TPF execution checkpoint",
                now,
                changes,
            );
        }
    }

    /// A failed step: again after TPF's backoff, or the driver fails with the error.
    fn retry(&mut self, error: &InvokeError, now: i64, changes: &mut Vec<String>) {
        self.attempt += 1;
        if self.attempt >= ATTEMPTS {
            let (e, c) = match error {
                InvokeError::Function(f) => (f.error_type.clone(), f.error_message.clone()),
                InvokeError::Transport(t) => (t.clone(), t.clone()),
            };
            self.fail(&e, &c, now, changes);
        } else {
            let backoff = (5_000i64 << (self.attempt - 1)).min(60_000);
            self.due = Some(now + backoff);
        }
    }
}

impl TestDoubleEngine {
    fn call(
        &self,
        host: &mut dyn GatewayHost,
        request: &ActionRequest,
    ) -> Result<ActionResponse, InvokeError> {
        let mut text = request.to_json();
        if self.is(DoubleMutant::LowercaseOperation) && request.operation == Operation::Status {
            text = text.replace("\"STATUS\"", "\"status\"");
        }
        if self.is(DoubleMutant::StatusOnAnotherRelease) && request.operation == Operation::Status {
            if let Some(release) = &request.release_version {
                text = text.replace(
                    &format!("\"releaseVersion\":\"{release}\""),
                    &format!("\"releaseVersion\":\"{ANOTHER_RELEASE}\""),
                );
            }
        }
        let arn = if self.is(DoubleMutant::UnqualifiedArn) {
            GATEWAY_FUNCTION.to_owned()
        } else {
            gateway_version_arn()
        };
        let answer = host.invoke(&arn, &text)?;
        ActionResponse::read(&answer)
            .map_err(|e| InvokeError::Function(tpf_wire::gateway::FunctionError::from(&e)))
    }

    fn step(&mut self, i: usize, host: &mut dyn GatewayHost) {
        let now = self.now;
        let mut changes = std::mem::take(&mut self.changes);
        let phase = self.execs[i].phase.clone();
        match phase {
            Phase::Done => {}
            Phase::Submit => self.submit(i, host, now, &mut changes),
            Phase::Poll { rung } => self.poll(i, rung, host, now, &mut changes),
            Phase::Register { callback } => self.register(i, callback, host, now, &mut changes),
            Phase::Refused => {
                if let Some(checkpoint) = self.execs[i].checkpoint.clone() {
                    self.hand_over(i, &checkpoint, host, now, &mut changes);
                }
            }
            Phase::Parked { .. } => {
                // The park's timeout: the callback closes, the driver asks TPF again.
                let e = &mut self.execs[i];
                e.history
                    .push((ev::CALLBACK_TIMED_OUT, operation_id(e.parks - 1), None));
                e.phase = Phase::Poll { rung: 0 };
                e.due = Some(now);
            }
        }
        self.changes = changes;
    }

    fn submit(
        &mut self,
        i: usize,
        host: &mut dyn GatewayHost,
        now: i64,
        changes: &mut Vec<String>,
    ) {
        let Some(input) = self.execs[i].input.clone() else {
            self.execs[i].fail("IllegalArgumentException", "unreadable input", now, changes);
            return;
        };
        if let Some(resume) = &input.resume_execution_id {
            let checkpoint = ExecutionCheckpoint::new(
                Some(&input.tenant_id),
                Some(resume),
                Some(&input.pipeline_id),
                Some(&input.contract_version),
                Some(&input.release_version),
            )
            .and_then(|c| DriverCheckpoint::new(c, input.generation));
            let e = &mut self.execs[i];
            match checkpoint {
                Ok(c) => {
                    e.checkpoint = Some(c);
                    e.phase = Phase::Poll { rung: 0 };
                    e.due = Some(now);
                }
                Err(err) => e.fail(err.class, &err.message, now, changes),
            }
            return;
        }
        let mut sent = input.clone();
        if self.is(DoubleMutant::NewKeyPerSubmitAttempt) {
            sent.idempotency_key = format!("{}#{}", input.idempotency_key, self.execs[i].attempt);
        }
        let answer = ActionRequest::submit(&sent)
            .map_err(|e| InvokeError::Function((&e).into()))
            .and_then(|r| self.call(host, &r));
        let e = &mut self.execs[i];
        match answer {
            Ok(ActionResponse {
                checkpoint: Some(c),
                ..
            }) => {
                e.attempt = 0;
                match DriverCheckpoint::new(c, input.generation) {
                    Ok(c) => {
                        e.checkpoint = Some(c);
                        e.phase = Phase::Poll { rung: 0 };
                        e.due = Some(now);
                    }
                    Err(err) => e.fail(err.class, &err.message, now, changes),
                }
            }
            Ok(_) => e.fail(
                "java.lang.IllegalStateException",
                "SUBMIT answered no checkpoint",
                now,
                changes,
            ),
            Err(err) => e.retry(&err, now, changes),
        }
    }

    fn poll(
        &mut self,
        i: usize,
        rung: usize,
        host: &mut dyn GatewayHost,
        now: i64,
        changes: &mut Vec<String>,
    ) {
        let Some(checkpoint) = self.execs[i].checkpoint.clone() else {
            return;
        };
        let request = |op| ActionRequest::for_execution(op, &checkpoint);
        let status = request(Operation::Sweep)
            .map_err(|e| InvokeError::Function((&e).into()))
            .and_then(|r| self.call(host, &r))
            .and_then(|_| {
                request(Operation::Status)
                    .map_err(|e| InvokeError::Function((&e).into()))
                    .and_then(|r| self.call(host, &r))
            });
        let status = match status {
            Ok(r) => r.execution_status.unwrap_or_default(),
            Err(err) => return self.execs[i].retry(&err, now, changes),
        };
        self.execs[i].attempt = 0;
        let e = &checkpoint.execution;
        match status.as_str() {
            "SUCCEEDED" => {
                let result = request(Operation::Result)
                    .map_err(|e| InvokeError::Function((&e).into()))
                    .and_then(|r| self.call(host, &r));
                let x = &mut self.execs[i];
                match result {
                    Ok(r) => {
                        x.output = Some(
                            json!({
                                "tenantId": e.tenant_id,
                                "executionId": e.execution_id,
                                "pipelineId": e.pipeline_id,
                                "contractVersion": e.contract_version,
                                "releaseVersion": e.release_version,
                                "generation": checkpoint.generation,
                                "resultJson": r.result_json,
                            })
                            .to_string(),
                        );
                        x.end(DriverStatus::Succeeded, now, changes);
                    }
                    Err(err) => x.retry(&err, now, changes),
                }
            }
            "FAILED" | "DLQ" | "REMOTE_OUTCOME_UNKNOWN" => {
                if self.is(DoubleMutant::RedriveOnFailure) {
                    // Whatever TPF answers, the request was sent.
                    let _ = ActionRequest::redrive(&checkpoint, 0, Some("driver"))
                        .map_err(|e| InvokeError::Function((&e).into()))
                        .and_then(|r| self.call(host, &r));
                }
                let succeed = self.is(DoubleMutant::SucceedOnFailure);
                let x = &mut self.execs[i];
                if succeed {
                    x.output = Some(
                        json!({ "executionId": e.execution_id, "resultJson": "null" }).to_string(),
                    );
                    x.end(DriverStatus::Succeeded, now, changes);
                } else {
                    x.fail(
                        "TPF.ExecutionEnded",
                        &format!("TPF execution ended with status {status}"),
                        now,
                        changes,
                    );
                }
            }
            "WAITING_EXTERNAL" => {
                let parked_before = self.execs[i].parks > 0;
                if parked_before && !self.is(DoubleMutant::ParkTwice) {
                    self.hand_over(i, &checkpoint, host, now, changes);
                } else {
                    let x = &mut self.execs[i];
                    let callback = format!("{}#callback-{}", x.arn, x.parks);
                    x.history.push((
                        ev::CALLBACK_STARTED,
                        operation_id(x.parks),
                        Some(callback.clone()),
                    ));
                    x.parks += 1;
                    x.phase = Phase::Register { callback };
                    x.due = Some(now);
                }
            }
            _ => {
                let wait_s = if self.is(DoubleMutant::HourlyPolls) {
                    3_600
                } else if self.is(DoubleMutant::TightPolls) && rung < 3 {
                    0
                } else {
                    LADDER_S[rung.min(LADDER_S.len() - 1)]
                };
                let x = &mut self.execs[i];
                x.phase = Phase::Poll { rung: rung + 1 };
                x.due = Some(now + wait_s * 1_000);
            }
        }
    }

    fn hand_over(
        &mut self,
        i: usize,
        checkpoint: &DriverCheckpoint,
        host: &mut dyn GatewayHost,
        now: i64,
        changes: &mut Vec<String>,
    ) {
        let e = &checkpoint.execution;
        let next = ExecutionInput::resume_execution(
            &e.tenant_id,
            &e.execution_id,
            checkpoint.generation,
            ReleaseIdentity {
                pipeline_id: Some(&e.pipeline_id),
                contract_version: Some(&e.contract_version),
                release_version: Some(&e.release_version),
            },
        );
        let run_on = self.is(DoubleMutant::RunOnAfterHandOver);
        let x = &mut self.execs[i];
        match next.map(|n| host.start(&n)) {
            Ok(Ok(_)) if run_on => {
                x.phase = Phase::Poll { rung: 0 };
                x.due = Some(now + LADDER_S[0] * 1_000);
            }
            Ok(Ok(started)) => {
                x.output = Some(
                    json!({ "handedOverTo": started.durable_execution_name, "generation": checkpoint.generation + 1 })
                        .to_string(),
                );
                x.end(DriverStatus::Succeeded, now, changes);
            }
            Ok(Err(err)) => x.retry(&InvokeError::Function(err), now, changes),
            Err(err) => x.fail(err.class, &err.message, now, changes),
        }
    }

    fn register(
        &mut self,
        i: usize,
        callback: String,
        host: &mut dyn GatewayHost,
        now: i64,
        changes: &mut Vec<String>,
    ) {
        let Some(checkpoint) = self.execs[i].checkpoint.clone() else {
            return;
        };
        let (name, arn) = (self.execs[i].name.clone(), self.execs[i].arn.clone());
        let answer = ActionRequest::register(
            &checkpoint,
            ProviderCallback {
                execution_name: Some(&name),
                execution_arn: Some(&arn),
                callback_id: Some(&callback),
            },
        )
        .map_err(|e| InvokeError::Function((&e).into()))
        .and_then(|r| self.call(host, &r));
        let timeout = if self.is(DoubleMutant::ShortParkTimeout) {
            Some(5_000)
        } else {
            (!self.is(DoubleMutant::NoParkTimeout)).then_some(self.park_timeout_ms)
        };
        let at_once = self.is(DoubleMutant::HandOverAtOnceOnRefusal);
        let x = &mut self.execs[i];
        match answer {
            Ok(_) => {
                x.attempt = 0;
                x.phase = Phase::Parked { callback };
                x.due = timeout.map(|t| now + t);
                if let Some(signal) = x.pending_signal.take() {
                    x.accept_signal(&signal, now, changes);
                }
            }
            Err(_) if at_once => {
                x.history
                    .push((ev::CALLBACK_FAILED, operation_id(x.parks - 1), None));
                x.phase = Phase::Refused;
                x.due = Some(now + 1_000);
            }
            Err(_) if x.attempt + 1 >= ATTEMPTS => {
                x.attempt = 0;
                x.history
                    .push((ev::CALLBACK_FAILED, operation_id(x.parks - 1), None));
                let wait = refused_registration_wait_seconds(checkpoint.generation);
                x.phase = Phase::Refused;
                x.due = Some(now + i64::try_from(wait).unwrap_or(i64::MAX / 2_000) * 1_000);
            }
            Err(err) => x.retry(&err, now, changes),
        }
    }

    fn parked_on(&mut self, callback_id: &str) -> Option<usize> {
        self.execs.iter().position(|e| {
            e.status == DriverStatus::Running
                && match &e.phase {
                    Phase::Parked { callback } => callback == callback_id,
                    Phase::Register { callback } => {
                        callback == callback_id && e.pending_signal.is_none()
                    }
                    _ => false,
                }
        })
    }

    /// Ends the callback a driver waits on with `event`, then `then`; a callback nobody waits
    /// on is refused as gone.
    fn close_callback(
        &mut self,
        callback_id: &str,
        event: &'static str,
        then: impl FnOnce(&mut Exec, &mut Vec<String>),
    ) -> Result<(), ProviderRefusal> {
        let i = self.parked_on(callback_id).ok_or_else(Self::gone)?;
        let mut changes = std::mem::take(&mut self.changes);
        let e = &mut self.execs[i];
        e.history.push((event, operation_id(e.parks - 1), None));
        then(e, &mut changes);
        self.changes = changes;
        Ok(())
    }

    fn gone() -> ProviderRefusal {
        ProviderRefusal {
            code: "ResourceNotFoundException".to_owned(),
            message: "the callback does not wait".to_owned(),
        }
    }
}

impl GatewayEngine for TestDoubleEngine {
    fn kind(&self) -> WakeEngine {
        WakeEngine::Durable
    }

    fn start(&mut self, name: &str, input_json: &str, now_ms: i64) -> Result<Started, EngineError> {
        if let Some(e) = self.execs.iter().find(|e| e.name == name) {
            return Ok(Started::Existing(e.arn.clone()));
        }
        let arn = format!(
            "arn:aws:lambda:us-east-1:000000000000:function:test-double-driver:1/durable-execution/{name}/{}",
            self.execs.len()
        );
        self.execs.push(Exec {
            arn: arn.clone(),
            name: name.to_owned(),
            input_text: input_json.to_owned(),
            input: ExecutionInput::read(input_json).ok(),
            status: DriverStatus::Running,
            output: None,
            error: None,
            started_at: now_ms,
            ended_at: None,
            checkpoint: None,
            phase: Phase::Submit,
            due: Some(now_ms),
            attempt: 0,
            parks: 0,
            pending_signal: None,
            history: Vec::new(),
        });
        Ok(Started::New(arn))
    }

    fn send_callback_success(
        &mut self,
        callback_id: &str,
        result_json: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        self.close_callback(callback_id, ev::CALLBACK_SUCCEEDED, |e, changes| {
            if matches!(e.phase, Phase::Register { .. }) {
                e.pending_signal = Some(result_json.to_owned());
            } else {
                e.accept_signal(result_json, now_ms, changes);
            }
        })
    }

    fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
        cause: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        self.close_callback(callback_id, ev::CALLBACK_FAILED, |e, changes| {
            e.fail(error, cause, now_ms, changes)
        })
    }

    fn stop(&mut self, execution_arn: &str, now_ms: i64) -> Result<(), ProviderRefusal> {
        let mut changes = std::mem::take(&mut self.changes);
        let found = self
            .execs
            .iter_mut()
            .find(|e| e.arn == execution_arn && e.status == DriverStatus::Running);
        let result = match found {
            Some(e) => {
                e.end(DriverStatus::Stopped, now_ms, &mut changes);
                Ok(())
            }
            None => Err(ProviderRefusal {
                code: "ResourceNotFoundException".to_owned(),
                message: "no running execution".to_owned(),
            }),
        };
        self.changes = changes;
        result
    }

    fn driver(&self, execution_arn: &str) -> Option<DriverView> {
        self.drivers().into_iter().find(|d| d.arn == execution_arn)
    }

    fn drivers(&self) -> Vec<DriverView> {
        self.execs
            .iter()
            .map(|e| DriverView {
                arn: e.arn.clone(),
                name: e.name.clone(),
                input: e.input_text.clone(),
                status: e.status,
                provider_status: match e.status {
                    DriverStatus::Running => "RUNNING",
                    DriverStatus::Succeeded => "SUCCEEDED",
                    DriverStatus::Failed => "FAILED",
                    DriverStatus::TimedOut => "TIMED_OUT",
                    DriverStatus::Stopped => "STOPPED",
                }
                .to_owned(),
                output: e.output.clone(),
                error: e.error.clone(),
                started_at_ms: e.started_at,
                ended_at_ms: e.ended_at,
                // The double keeps a Lambda durable functions history: the service's cap.
                history: HistorySize {
                    written: e.history.len() as u64,
                    limit: durable_interp::OPERATION_CAP,
                    unit: "events",
                    capped: false,
                },
            })
            .collect()
    }

    fn callback_state(&self, callback_id: &str) -> ProviderState {
        let Some(e) = self.execs.iter().find(|e| {
            e.history
                .iter()
                .any(|(_, _, cb)| cb.as_deref() == Some(callback_id))
        }) else {
            return durable_callback_state(None, callback_id);
        };
        let events: Vec<DurableEvent<'_>> = e
            .history
            .iter()
            .map(|(t, id, cb)| DurableEvent {
                event_type: t,
                id,
                callback_id: cb.as_deref(),
            })
            .collect();
        durable_callback_state(Some(&events), callback_id)
    }

    fn take_status_changes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.changes)
    }

    fn run_until_idle(&mut self, host: &mut dyn GatewayHost) -> Result<(), EngineError> {
        for _ in 0..100_000 {
            let now = self.now;
            let Some(i) = self
                .execs
                .iter()
                .position(|e| e.status == DriverStatus::Running && e.due.is_some_and(|d| d <= now))
            else {
                return Ok(());
            };
            self.execs[i].due = None;
            self.step(i, host);
        }
        Err(EngineError(
            "the test double ran 100,000 steps at one instant".to_owned(),
        ))
    }

    fn next_timer(&self) -> Option<i64> {
        self.execs
            .iter()
            .filter(|e| e.status == DriverStatus::Running)
            .filter_map(|e| e.due)
            .min()
    }

    fn advance_to(&mut self, now_ms: i64) {
        self.now = self.now.max(now_ms);
    }
}
