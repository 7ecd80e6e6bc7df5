//! The gateway world: TPF's action gateway over the model (`Gateway` over
//! `LocalControlPlane<InMemoryStore>` and `InMemoryBindings`), TPF's SQS work function on the
//! virtual clock (and, where a setup asks for it, TPF's SQS transition worker with its request
//! and response queues), the two streams derived from the model's writes, the wake-up and the
//! reconciler (`tpf_sfn_wakeup`), the starter, TPF's fault points, and one backend's engine
//! behind [`GatewayEngine`].
//!
//! One clock: the world runs everything due at `now` (the engine's drivers, starts, work
//! items, stream records, status-change events) until nothing is left, then moves to the next
//! instant anything is due. Nothing here knows which backend runs the drivers.
//!
//! Where the world is simpler than AWS: a stream record that is retried does not hold back the
//! records behind it (DynamoDB Streams retries a failed batch in shard order; the wake-up's
//! decisions do not depend on that order, since each record re-reads TPF); an await completion
//! is admitted in process (TPF's await-completion queue adds only its delivery); the work
//! queue's dead-letter redrive (5 receives) is counted, not consumed by anything.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::json;
use tpf_model::coordinator::admission::{Admission, WorkerLoad};
use tpf_model::coordinator::remote::{
    PendingTransition, RemoteStart, TransitionRequest, TransitionResponse, TransitionWorkerInstance,
};
use tpf_model::coordinator::{local_release, CoordinatorError, LocalControlPlane, WorkItem};
use tpf_model::gateway::{BindingStore, Delivery as DeliveryRow, Gateway, InMemoryBindings};
use tpf_model::worker::StepKind;
use tpf_model::{
    AwaitCompletion, Coordinator, CoordinatorConfig, ExecutionStore, InMemoryStore, PipelineDef,
    ScriptedWorker, StepOutcome,
};
use tpf_sfn_wakeup::provider::{callback_gone, driver_state, DriverState, ProviderState};
use tpf_sfn_wakeup::reconcile::{self, Reconcile};
use tpf_sfn_wakeup::wake::{
    self, AfterBind, Disposition, SendOutcome, Settle, StreamStep, WakeStep,
};
use tpf_wire::gateway::binding::CallbackBinding;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity, StartResponse, STARTED_STATUS};
use tpf_wire::gateway::{ActionRequest, ActionResponse, AwaitIdentity, FunctionError, Operation};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{AwaitInteractionRecord, DynamoItem, ExecutionRecord, Item};
use tpf_wire::Identity;

use super::engine::{
    EngineError, GatewayEngine, GatewayHost, InvokeError, ProviderRefusal, Started,
};
use super::faults::{FaultPoint, Faults};
use super::trace::{
    Decline, Dispatch, Invocation, ReconcileEvent, ScheduledSweepEvent, SendEvent, SendResult,
    StartEvent, StartVia, Stream, StreamEvent, Trace, TransitionEvent,
};
use super::view::ModelView;

pub type ModelGateway = Gateway<LocalControlPlane<InMemoryStore>, InMemoryBindings>;

pub const TENANT: &str = "restaurant-demo";
pub const PIPELINE: &str = "org.pipelineframework.restaurantapproval";
/// 2026-11-30T06:40:00Z.
pub const T0: i64 = 1_796_020_800_000;
pub const SECOND: i64 = 1_000;
pub const MINUTE: i64 = 60 * SECOND;
pub const HOUR: i64 = 60 * MINUTE;
/// The gateway's function and the numbered version the world publishes.
pub const GATEWAY_FUNCTION: &str = "arn:aws:lambda:us-east-1:000000000000:function:tpf-gateway";
pub const GATEWAY_VERSION: &str = "7";

/// The gateway's numbered version ARN, what every driver must invoke.
pub fn gateway_version_arn() -> String {
    format!("{GATEWAY_FUNCTION}:{GATEWAY_VERSION}")
}

/// A release of the world's pipeline: `sha256:<name>` as contract and release version.
pub fn release(name: &str) -> Identity {
    Identity {
        pipeline_id: PIPELINE.to_owned(),
        contract_version: format!("sha256:{name}"),
        release_version: format!("sha256:{name}"),
    }
}

/// How a scenario sets the world up.
#[derive(Debug, Clone)]
pub struct Setup {
    pub pipeline: PipelineDef,
    /// The delay between a work item's enqueue and its claim (TPF's SQS work function).
    pub work_delay_ms: i64,
    /// The queue's visibility timeout: a failed delivery is received again after it (TPF's
    /// template sets 5,400 s; the default here is 90 s, which keeps the scenarios short and
    /// changes no decision: nothing else waits on a work item).
    pub work_redelivery_ms: i64,
    /// A stream record reaches the wake-up this long after the write.
    pub stream_delay_ms: i64,
    /// A retried stream record is delivered again after this long.
    pub stream_retry_ms: i64,
    /// Deliveries of a stream record before it goes to the failure destination (TPF: 1 + 5
    /// retries).
    pub stream_max_attempts: u32,
    /// A failed status-change event is delivered again after this long (an async invoke's
    /// retry).
    pub reconcile_retry_ms: i64,
    pub reconcile_max_attempts: u32,
    /// How long a REGISTRATION stays invisible to the provider-ARN index.
    pub index_lag_ms: i64,
    /// How long after an await's deadline TPF may still be applying it (the check's slack).
    pub deadline_grace_ms: i64,
    /// The pipeline's steps run on TPF's SQS transition worker (`tpf_model::coordinator::remote`):
    /// the work function sends each segment's request and waits for its response (a request
    /// reaches the worker `work_delay_ms` after it is sent). Off, the work function runs them
    /// itself.
    pub remote_transitions: bool,
    /// The transition-request queue's visibility timeout: a failed delivery is received again
    /// after it (TPF's template sets 5,400 s; 90 s here keeps a redelivered request within
    /// TPF's 2-minute signature tolerance, so it runs again, the harder case).
    pub transition_redelivery_ms: i64,
    /// `quotas.max-in-flight-transitions-per-tenant` (0: unlimited, TPF's default).
    pub tenant_quota: u32,
}

impl Setup {
    /// Restaurant approval: two steps, an await of 30 minutes, a last step.
    pub fn restaurant() -> Self {
        Self::with_pipeline(PipelineDef::restaurant())
    }

    pub fn with_pipeline(pipeline: PipelineDef) -> Self {
        Self {
            pipeline,
            work_delay_ms: SECOND,
            work_redelivery_ms: 90 * SECOND,
            stream_delay_ms: 500,
            stream_retry_ms: SECOND,
            stream_max_attempts: 6,
            reconcile_retry_ms: MINUTE,
            reconcile_max_attempts: 3,
            index_lag_ms: 0,
            deadline_grace_ms: 15 * MINUTE,
            remote_transitions: false,
            transition_redelivery_ms: 90 * SECOND,
            tenant_quota: 0,
        }
    }

    /// The longest await timeout of the pipeline: a gateway driver parks for it plus 1 s.
    pub fn longest_await_timeout_ms(&self) -> i64 {
        (0..self.pipeline.len())
            .filter_map(|i| self.pipeline.step(i)?.await_step().map(|a| a.timeout_ms))
            .max()
            .unwrap_or(0)
    }

    /// The same setup with every await's deadline `timeout_ms`: a user's contract's, so that
    /// the deadline scenarios meet the user's driver as compiled.
    pub fn with_await_timeout_ms(mut self, timeout_ms: i64) -> Self {
        for step in &mut self.pipeline.steps {
            if let StepKind::Await(a) = &mut step.kind {
                a.timeout_ms = timeout_ms;
            }
        }
        self
    }
}

/// A deliberate break of the world's own host, for the test that shows a check catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutation {
    /// The wake-up does not read the newest binding generation (no generation fence).
    NoGenerationFence,
    /// The wake-up writes no DELIVERY row.
    NoDeliveryEvidence,
    /// The wake-up and the reconciler start a replacement on the active release instead of the
    /// execution's own.
    ReplacementOnActiveRelease,
    /// The work function takes the first response on the transition response queue, whatever
    /// request it answers (TPF's caller takes only its own request id's).
    AnyTransitionResponse,
    /// The work function claims and runs an item before its admission declines it.
    ClaimBeforeAdmission,
}

/// Load a scenario puts on TPF's work function for its next deliveries (the model runs one item
/// at a time, so in-flight transitions are injected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Saturation {
    /// The transition executor's `max-in-flight` slots are taken.
    Worker,
    /// The tenant's in-flight transition quota is taken.
    TenantQuota,
}

/// What the wake-up did with one stream record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordOutcome {
    /// The decisions' own disposition.
    Decided(Disposition),
    /// A read or a write the wake-up made failed (TPF's handler throws, and the stream delivers
    /// the record again).
    Failed(String),
}

impl RecordOutcome {
    pub fn acknowledged(&self) -> bool {
        *self == Self::Decided(Disposition::Acknowledge)
    }

    /// The word the trace records: `ack`, `retry:<reason>` or `failed:<what>`.
    fn word(&self) -> String {
        match self {
            Self::Decided(Disposition::Acknowledge) => "ack".to_owned(),
            Self::Decided(Disposition::Retry(r)) => format!("retry:{r:?}"),
            Self::Failed(what) => format!("failed:{what}"),
        }
    }
}

/// Why the world stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    /// The engine failed (a budget it stopped at, a driver it cannot run).
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// The world ran out of steps at one instant (something loops without time passing).
    #[error("budget: more than {steps} steps at {at_ms}")]
    Budget { steps: usize, at_ms: i64 },
}

/// Why TPF's await-completion function did not admit a completion the world made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompletionError {
    /// TPF refused to list the execution's awaits or to complete the await.
    #[error("TPF refused the completion: {0}")]
    Refused(#[from] CoordinatorError),
    #[error("execution {0} has no open await")]
    NoOpenAwait(String),
}

#[derive(Debug, Clone)]
struct WorkDelivery {
    item: WorkItem,
    visible_at: i64,
    receives: u32,
}

/// A request on TPF's transition-request queue.
#[derive(Debug, Clone)]
struct TransitionDelivery {
    request: TransitionRequest,
    visible_at: i64,
    receives: u32,
}

/// A work function's call waiting for its transition response, with the work message it holds.
#[derive(Debug, Clone)]
struct Waiting {
    delivery: WorkDelivery,
    pending: PendingTransition,
}

/// TPF's transition queues and the work function calls waiting on them.
#[derive(Debug, Clone, Default)]
struct Transitions {
    requests: Vec<TransitionDelivery>,
    /// The response queue: what the transition worker published and no caller took.
    responses: Vec<TransitionResponse>,
    waiting: Vec<Waiting>,
    /// The transition worker's event-source mapping is off: requests wait in the queue.
    off: bool,
    /// Every request the transition worker ran (one per response published).
    ran: usize,
    /// Deliveries the worker dropped unrun (stale or replayed).
    dropped: usize,
}

#[derive(Debug, Clone)]
pub struct StreamRecord {
    pub stream: Stream,
    pub image: Item,
    visible_at: i64,
    attempts: u32,
}

#[derive(Debug, Clone)]
struct StatusEvent {
    arn: String,
    visible_at: i64,
    attempts: u32,
}

/// Everything but the engine: what the engine's drivers reach through [`GatewayHost`].
struct Host {
    now: i64,
    setup: Setup,
    gateway: ModelGateway,
    faults: Faults,
    trace: Trace,
    /// Starts the drivers asked for, performed when the engine hands control back.
    pending_starts: Vec<(StartVia, ExecutionInput)>,
    /// Completes the first open await of this execution just before the next REGISTER_CALLBACK
    /// is applied (TPF's scenario 10: a completion racing the registration).
    complete_before_register: Option<String>,
    streams: Streams,
}

/// The two streams, derived from the model's writes.
#[derive(Default)]
struct Streams {
    interaction_versions: BTreeMap<(String, String), i64>,
    rows: BTreeSet<(String, String)>,
    queue: Vec<StreamRecord>,
    off: BTreeSet<StreamKey>,
    failed: Vec<StreamRecord>,
}

/// A stream, as a set key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum StreamKey {
    Interactions,
    Bindings,
}

fn key_of(s: Stream) -> StreamKey {
    match s {
        Stream::Interactions => StreamKey::Interactions,
        Stream::Bindings => StreamKey::Bindings,
    }
}

impl Host {
    fn trace_transition(&mut self, request_id: &str, what: &'static str) {
        self.trace.transitions.push(TransitionEvent {
            at_ms: self.now,
            request_id: request_id.to_owned(),
            what,
        });
    }

    /// Appends the records of every write since the last call to the streams.
    fn derive_streams(&mut self) {
        let visible_at = self.now + self.setup.stream_delay_ms;
        let interactions = self.gateway.plane.coordinator.store().scan_interactions();
        for record in interactions {
            let key = (record.tenant_id.clone(), record.interaction_id.clone());
            if self.streams.interaction_versions.get(&key) != Some(&record.version) {
                self.streams
                    .interaction_versions
                    .insert(key, record.version);
                self.streams.queue.push(StreamRecord {
                    stream: Stream::Interactions,
                    image: record.to_item(),
                    visible_at,
                    attempts: 0,
                });
            }
        }
        let keys = self.gateway.bindings.keys();
        let items: Vec<Item> = self.gateway.bindings.items().cloned().collect();
        for ((pk, sk, _), item) in keys.into_iter().zip(items) {
            if self.streams.rows.insert((pk, sk)) {
                self.streams.queue.push(StreamRecord {
                    stream: Stream::Bindings,
                    image: item,
                    visible_at,
                    attempts: 0,
                });
            }
        }
    }

    /// The execution's first open await, completed as TPF's await-completion function admits
    /// it.
    fn complete_first_open(&mut self, execution_id: &str) -> Result<(), CompletionError> {
        let now = self.now;
        let coordinator = &mut self.gateway.plane.coordinator;
        let open = coordinator
            .await_interactions(TENANT, execution_id, now)?
            .into_iter()
            .find(|i| !i.status.terminal())
            .ok_or_else(|| CompletionError::NoOpenAwait(execution_id.to_owned()))?;
        coordinator.complete_await(
            &AwaitCompletion {
                tenant_id: TENANT.to_owned(),
                interaction_id: Some(open.interaction_id),
                correlation_id: None,
                response_payload: json!({ "decision": "approved" }),
                actor: Some("restaurant".to_owned()),
            },
            now,
        )?;
        self.derive_streams();
        Ok(())
    }

    fn serve(&mut self, request_json: &str) -> Result<String, FunctionError> {
        let now = self.now;
        self.gateway.serve(request_json, now)
    }
}

impl GatewayHost for Host {
    fn now_ms(&self) -> i64 {
        self.now
    }

    fn invoke(&mut self, function_arn: &str, request_json: &str) -> Result<String, InvokeError> {
        let read = ActionRequest::read(request_json);
        let operation = read.as_ref().ok().map(|r| r.operation);
        let read_error = read
            .as_ref()
            .err()
            .map(|e| format!("{}: {}", e.class, e.message));
        let answer = self.invoke_read(function_arn, request_json, operation);
        self.derive_streams();
        self.trace.invocations.push(Invocation {
            at_ms: self.now,
            function_arn: function_arn.to_owned(),
            request: request_json.to_owned(),
            operation,
            read_error,
            answer: answer.clone(),
        });
        answer
    }

    fn start(&mut self, input: &ExecutionInput) -> Result<StartResponse, FunctionError> {
        self.pending_starts.push((StartVia::Driver, input.clone()));
        Ok(StartResponse {
            durable_execution_name: input.durable_execution_name(),
            status_code: STARTED_STATUS,
        })
    }
}

impl Host {
    fn invoke_read(
        &mut self,
        function_arn: &str,
        request_json: &str,
        operation: Option<Operation>,
    ) -> Result<String, InvokeError> {
        // The function exists under its name, whatever the qualifier: an unqualified or alias
        // invoke runs too (the numbered-version check reports it).
        let function = function_arn
            .strip_prefix(GATEWAY_FUNCTION)
            .filter(|rest| rest.is_empty() || rest.starts_with(':'));
        if function.is_none() {
            return Err(InvokeError::Transport(
                "Lambda.ResourceNotFoundException".to_owned(),
            ));
        }
        let now = self.now;
        let fault = |faults: &mut Faults, p: FaultPoint| faults.fire(p, now).then(|| p.error());
        let (before, after) = match operation {
            Some(Operation::Submit) => (
                FaultPoint::SubmitBeforeTpfCommit,
                FaultPoint::SubmitAfterTpfCommit,
            ),
            Some(Operation::RegisterCallback | Operation::BindCallback) => (
                FaultPoint::BindBeforeProviderBinding,
                FaultPoint::BindAfterProviderBinding,
            ),
            _ => return self.serve(request_json).map_err(InvokeError::Function),
        };
        if let Some(e) = fault(&mut self.faults, before) {
            return Err(InvokeError::Function(e));
        }
        if operation == Some(Operation::RegisterCallback) {
            if let Some(execution) = self.complete_before_register.take() {
                // The completion is admitted (and its stream record written) first.
                let _ = self.complete_first_open(&execution);
            }
        }
        let answer = self.serve(request_json).map_err(InvokeError::Function)?;
        match fault(&mut self.faults, after) {
            Some(e) => Err(InvokeError::Function(e)),
            None => Ok(answer),
        }
    }
}

/// The world: one engine and TPF's host around it.
pub struct GatewayWorld<E> {
    pub engine: E,
    host: Host,
    work: Vec<WorkDelivery>,
    /// Work deliveries past the queue's 5 receives (its dead-letter queue).
    work_dead_letters: Vec<WorkItem>,
    transitions: Transitions,
    status_events: Vec<StatusEvent>,
    mutations: BTreeSet<Mutation>,
    /// Saturations for the next deliveries, oldest first.
    saturations: VecDeque<Saturation>,
    /// The deployment's scheduled sweep (the engine's release says it): its period and when it
    /// fires next, the first a period after the world starts.
    scheduled_sweep: Option<(i64, i64)>,
}

/// Steps at one instant before the world calls it a loop.
const STEPS_PER_INSTANT: usize = 10_000;
/// TPF's work queue: a message is received this often before its dead-letter queue.
const WORK_MAX_RECEIVES: u32 = 5;

impl<E: GatewayEngine> GatewayWorld<E> {
    /// TPF in tenant `restaurant-demo` with release `v1` active (and `v2` registered, hosted by
    /// the same worker), TPF as it runs today (item continuations in process, no deadline rule
    /// in the work function: only the sweep applies an await's timeout).
    pub fn new(engine: E, setup: Setup) -> Self {
        let worker = ScriptedWorker::new(release("v1")).hosting(release("v2"));
        let mut config = CoordinatorConfig {
            item_continuations: tpf_model::coordinator::ItemContinuations::InProcess,
            process_applies_await_deadline: false,
            ..CoordinatorConfig::default()
        };
        config.admission.tenant_max_in_flight = setup.tenant_quota;
        let mut coordinator =
            Coordinator::with_config(InMemoryStore::new(), setup.pipeline.clone(), worker, config);
        for name in ["v1", "v2"] {
            coordinator
                .register_release(&local_release(TENANT, &release(name), T0 - HOUR))
                .expect("a new release registers");
        }
        coordinator
            .activate_release(TENANT, PIPELINE, "sha256:v1", T0 - HOUR)
            .expect("a registered release activates");
        let gateway = Gateway::new(LocalControlPlane::new(coordinator), InMemoryBindings::new());
        let scheduled_sweep = engine
            .scheduled_sweep_ms()
            .map(|period| (period.max(1), T0 + period.max(1)));
        let mut engine = engine;
        engine.advance_to(T0);
        Self {
            engine,
            host: Host {
                now: T0,
                setup,
                gateway,
                faults: Faults::default(),
                trace: Trace::default(),
                pending_starts: Vec::new(),
                complete_before_register: None,
                streams: Streams::default(),
            },
            work: Vec::new(),
            work_dead_letters: Vec::new(),
            transitions: Transitions::default(),
            status_events: Vec::new(),
            mutations: BTreeSet::new(),
            saturations: VecDeque::new(),
            scheduled_sweep,
        }
    }

    // --- reads -------------------------------------------------------------------------------

    pub fn now(&self) -> i64 {
        self.host.now
    }
    pub fn setup(&self) -> &Setup {
        &self.host.setup
    }
    pub fn trace(&self) -> &Trace {
        &self.host.trace
    }
    pub fn faults(&self) -> &Faults {
        &self.host.faults
    }
    pub fn gateway(&self) -> &ModelGateway {
        &self.host.gateway
    }
    pub fn coordinator(&self) -> &Coordinator<InMemoryStore> {
        &self.host.gateway.plane.coordinator
    }
    pub fn bindings(&self) -> &InMemoryBindings {
        &self.host.gateway.bindings
    }
    pub fn mutations(&self) -> &BTreeSet<Mutation> {
        &self.mutations
    }
    /// Stream records past their last retry (the stream's on-failure destination).
    pub fn stream_failures(&self) -> &[StreamRecord] {
        &self.host.streams.failed
    }
    pub fn work_dead_letters(&self) -> &[WorkItem] {
        &self.work_dead_letters
    }

    /// TPF's root executions (item-continuation children left out), in key order.
    pub fn executions(&self) -> Vec<ExecutionRecord> {
        self.coordinator()
            .store()
            .scan_executions()
            .into_iter()
            .filter(|r| tpf_wire::ids::parse_child_execution_key(&r.execution_key).is_none())
            .collect()
    }

    /// The TPF execution the application's key created.
    pub fn execution_of(&self, key: &str) -> Option<ExecutionRecord> {
        let scoped = |r: &ExecutionRecord| {
            tpf_wire::ids::scoped_root_execution_key(&r.pipeline_id, &r.release_version, key)
                .is_ok_and(|k| k == r.execution_key)
        };
        self.executions().into_iter().find(scoped)
    }

    pub fn interactions(&self) -> Vec<AwaitInteractionRecord> {
        self.coordinator().store().scan_interactions()
    }

    // --- acts of a scenario ------------------------------------------------------------------

    /// The next delivery of TPF's work function meets `saturation` (one delivery per call).
    pub fn saturate(&mut self, saturation: Saturation) {
        self.saturations.push_back(saturation);
    }

    pub fn mutate(&mut self, mutation: Mutation) {
        self.mutations.insert(mutation);
    }

    pub fn arm(&mut self, point: FaultPoint) {
        self.host.faults.arm(point);
    }

    /// Makes `point` fire every time. `pipeline-transition` fails the pipeline's first step on
    /// every attempt (TPF's worker retries, then fails the execution).
    pub fn persist(&mut self, point: FaultPoint) {
        self.host.faults.persist(point);
        if point == FaultPoint::PipelineTransition {
            let fail = StepOutcome::FailRetryable(super::faults::INJECTED_FAULT_TYPE.to_owned());
            self.host
                .gateway
                .plane
                .coordinator
                .worker_mut()
                .set_script(0, vec![fail; 64]);
        }
    }

    pub fn clear(&mut self, point: FaultPoint) {
        self.host.faults.clear(point);
        if point == FaultPoint::PipelineTransition {
            self.host
                .gateway
                .plane
                .coordinator
                .worker_mut()
                .set_script(0, Vec::new());
        }
    }

    /// Turns the transition worker's event-source mapping off or on (requests wait in the
    /// queue meanwhile).
    pub fn set_transition_mapping(&mut self, on: bool) {
        self.transitions.off = !on;
    }

    /// Sends every request waiting on the transition-request queue `copies` times more, body
    /// for body (TPF's proof re-sends a received request); answers how many it sent.
    pub fn copy_transition_requests(&mut self, copies: usize) -> usize {
        let now = self.host.now;
        let sent: Vec<TransitionDelivery> = self
            .transitions
            .requests
            .iter()
            .flat_map(|d| std::iter::repeat_n(d.request.clone(), copies))
            .map(|request| TransitionDelivery {
                request,
                visible_at: now,
                receives: 0,
            })
            .collect();
        let n = sent.len();
        self.transitions.requests.extend(sent);
        n
    }

    /// Requests waiting on the transition-request queue.
    pub fn transition_requests(&self) -> usize {
        self.transitions.requests.len()
    }

    /// Responses on the response queue no caller took (answers to requests already answered).
    pub fn untaken_transition_responses(&self) -> &[TransitionResponse] {
        &self.transitions.responses
    }

    /// Requests the transition worker ran, and those it dropped unrun.
    pub fn transition_runs(&self) -> (usize, usize) {
        (self.transitions.ran, self.transitions.dropped)
    }

    /// Turns a stream's event-source mapping off or on (records wait in the stream meanwhile).
    pub fn set_stream_mapping(&mut self, stream: Stream, on: bool) {
        if on {
            self.host.streams.off.remove(&key_of(stream));
        } else {
            self.host.streams.off.insert(key_of(stream));
        }
    }

    /// The application's ingress call: generation 1 of `key`, started under TPF's name.
    pub fn ingress(&mut self, key: &str) -> Result<StartResponse, FunctionError> {
        self.host.trace.submissions.push(key.to_owned());
        let active = release("v1");
        let active = self.active_release().unwrap_or(active);
        let input = ExecutionInput::new(
            Some(TENANT),
            Some(key),
            ReleaseIdentity {
                pipeline_id: Some(&active.pipeline_id),
                contract_version: Some(&active.contract_version),
                release_version: Some(&active.release_version),
            },
            Some(&json!({ "orderId": key, "total": 12.5 }).to_string()),
            None,
            1,
        )
        .map_err(|e| FunctionError::from(&e))?;
        let now = self.host.now;
        if self
            .host
            .faults
            .fire(FaultPoint::IngressBeforeProviderStart, now)
        {
            return Err(FaultPoint::IngressBeforeProviderStart.error());
        }
        let response = self.start_driver(StartVia::Ingress, input)?;
        if self
            .host
            .faults
            .fire(FaultPoint::IngressAfterProviderStart, now)
        {
            return Err(FaultPoint::IngressAfterProviderStart.error());
        }
        Ok(response)
    }

    /// Starts a generation as TPF's operator or proof does (through the starter).
    pub fn operator_start(
        &mut self,
        input: ExecutionInput,
    ) -> Result<StartResponse, FunctionError> {
        self.start_driver(StartVia::Operator, input)
    }

    /// TPF's await-completion function admits a completion of the execution's first open
    /// await.
    pub fn complete(&mut self, execution_id: &str) -> Result<(), CompletionError> {
        self.host.complete_first_open(execution_id)
    }

    /// The completion is admitted just before the execution's next REGISTER_CALLBACK.
    pub fn complete_before_next_register(&mut self, execution_id: &str) {
        self.host.complete_before_register = Some(execution_id.to_owned());
    }

    /// `REDRIVE` through the gateway, as TPF's operator sends it (the record's version).
    pub fn redrive(&mut self, execution_id: &str) -> Result<ActionResponse, FunctionError> {
        let now = self.host.now;
        let record = self
            .coordinator()
            .status(TENANT, execution_id, now)
            .map_err(|e| FunctionError {
                error_message: e.to_string(),
                error_type: tpf_wire::java_error::class::NOT_FOUND.to_owned(),
            })?;
        let checkpoint = tpf_wire::gateway::DriverCheckpoint::new(
            tpf_wire::gateway::ExecutionCheckpoint::new(
                Some(TENANT),
                Some(execution_id),
                Some(&record.pipeline_id),
                Some(&record.contract_version),
                Some(&record.release_version),
            )
            .map_err(|e| FunctionError::from(&e))?,
            1,
        )
        .map_err(|e| FunctionError::from(&e))?;
        let request = ActionRequest::redrive(&checkpoint, record.version, Some("operator"))
            .map_err(|e| FunctionError::from(&e))?;
        let text = self.host.serve(&request.to_json())?;
        self.host.derive_streams();
        ActionResponse::read(&text).map_err(|e| FunctionError::from(&e))
    }

    /// Registers nothing new: activates release `name` for new submissions.
    pub fn activate(&mut self, name: &str) {
        let now = self.host.now;
        self.host
            .gateway
            .plane
            .coordinator
            .activate_release(TENANT, PIPELINE, &format!("sha256:{name}"), now)
            .expect("v1 and v2 are registered");
    }

    pub fn stop_driver(&mut self, execution_arn: &str) -> Result<(), ProviderRefusal> {
        let now = self.host.now;
        self.engine.stop(execution_arn, now)
    }

    /// Closes a callback with a failure (the provider's close of a callback, e.g. a task
    /// timeout).
    pub fn fail_callback(&mut self, callback_id: &str, error: &str) -> Result<(), ProviderRefusal> {
        let now = self.host.now;
        self.engine
            .send_callback_failure(callback_id, error, "the callback was closed", now)?;
        self.host
            .trace
            .closed_callbacks
            .push((now, callback_id.to_owned()));
        Ok(())
    }

    /// Hands `image` to the wake-up now, as its stream would deliver it; answers the
    /// outcome.
    pub fn deliver_stream_record(&mut self, stream: Stream, image: Item) -> RecordOutcome {
        self.handle_stream_record(stream, &image)
    }

    /// Writes `image` onto a stream, as a row another writer put there would appear.
    pub fn push_stream_record(&mut self, stream: Stream, image: Item) {
        self.host.streams.queue.push(StreamRecord {
            stream,
            image,
            visible_at: self.host.now + self.host.setup.stream_delay_ms,
            attempts: 0,
        });
    }

    fn active_release(&self) -> Option<Identity> {
        self.coordinator()
            .active_release(TENANT, PIPELINE)
            .ok()
            .flatten()
            .map(|r| Identity {
                pipeline_id: r.pipeline_id,
                contract_version: r.contract_version,
                release_version: r.release_version,
            })
    }

    // --- the clock ---------------------------------------------------------------------------

    /// Runs everything due up to `until`, then sets the clock there.
    pub fn run_until(&mut self, until: i64) -> Result<(), WorldError> {
        self.run_while(until, |_| true).map(|_| ())
    }

    pub fn run_for(&mut self, ms: i64) -> Result<(), WorldError> {
        self.run_until(self.host.now + ms)
    }

    /// Runs until `done` holds (checked after every instant) or `until`; answers whether it
    /// held.
    pub fn run_until_cond(
        &mut self,
        until: i64,
        mut done: impl FnMut(&Self) -> bool,
    ) -> Result<bool, WorldError> {
        let stopped = self.run_while(until, |w| !done(w))?;
        Ok(stopped || done(self))
    }

    /// Answers `true` when `go` stopped the run before `until`.
    fn run_while(
        &mut self,
        until: i64,
        mut go: impl FnMut(&Self) -> bool,
    ) -> Result<bool, WorldError> {
        loop {
            self.settle_instant()?;
            if !go(self) {
                return Ok(true);
            }
            match self.next_event() {
                Some(t) if t <= until => self.host.now = t.max(self.host.now),
                _ => break,
            }
        }
        self.host.now = until.max(self.host.now);
        self.settle_instant()?;
        Ok(false)
    }

    /// The next instant anything is due.
    fn next_event(&self) -> Option<i64> {
        let off = &self.host.streams.off;
        [
            self.engine.next_timer(),
            self.work.iter().map(|w| w.visible_at).min(),
            self.transitions
                .requests
                .iter()
                .filter(|_| !self.transitions.off)
                .map(|d| d.visible_at)
                .min(),
            self.transitions
                .waiting
                .iter()
                .map(|w| w.pending.deadline_ms)
                .min(),
            self.host
                .streams
                .queue
                .iter()
                .filter(|r| !off.contains(&key_of(r.stream)))
                .map(|r| r.visible_at)
                .min(),
            self.status_events.iter().map(|e| e.visible_at).min(),
            self.scheduled_sweep.map(|(_, at)| at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs everything due at `now` until nothing is left.
    fn settle_instant(&mut self) -> Result<(), WorldError> {
        for _ in 0..STEPS_PER_INSTANT {
            let before = self.host.trace.invocations.len();
            let now = self.host.now;
            self.engine.advance_to(now);
            self.engine.run_until_idle(&mut self.host)?;
            self.host.derive_streams();
            let mut busy = self.host.trace.invocations.len() != before;
            for (via, input) in std::mem::take(&mut self.host.pending_starts) {
                let _ = self.start_driver(via, input);
                busy = true;
            }
            for arn in self.engine.take_status_changes() {
                self.status_events.push(StatusEvent {
                    arn,
                    visible_at: now,
                    attempts: 0,
                });
                busy = true;
            }
            let delay = self.host.setup.work_delay_ms;
            for item in self.host.gateway.plane.take_queued() {
                self.note_dispatch(&item, now);
                self.work.push(WorkDelivery {
                    item,
                    visible_at: now + delay,
                    receives: 0,
                });
            }
            busy |= self.run_due_work();
            busy |= self.run_due_transitions();
            busy |= self.finish_waiting_work();
            busy |= self.run_due_stream_records();
            busy |= self.run_due_status_events();
            busy |= self.run_due_scheduled_sweep();
            if !busy {
                return Ok(());
            }
        }
        Err(WorldError::Budget {
            steps: STEPS_PER_INSTANT,
            at_ms: self.host.now,
        })
    }

    /// Records what TPF's record said when its work item was queued (the trace's dispatches).
    fn note_dispatch(&mut self, item: &WorkItem, now: i64) {
        let record =
            self.coordinator()
                .store()
                .get_execution(&item.tenant_id, &item.execution_id, now);
        if let Ok(Some(r)) = record {
            self.host.trace.dispatches.push(Dispatch {
                at_ms: now,
                execution_id: r.execution_id,
                status: r.status,
                next_due_ms: r.next_due_epoch_ms,
            });
        }
    }

    fn run_due_work(&mut self) -> bool {
        let now = self.host.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.work)
            .into_iter()
            .partition(|w| w.visible_at <= now);
        self.work = later;
        let busy = !due.is_empty();
        for mut delivery in due {
            delivery.receives += 1;
            if self.host.faults.fire(FaultPoint::WorkBeforeAction, now) {
                self.settle_work(delivery, false);
                continue;
            }
            if !self.admitted(&delivery, now) {
                continue;
            }
            let ran = if self.host.setup.remote_transitions {
                match self
                    .host
                    .gateway
                    .plane
                    .begin_remote_work_item(&delivery.item, now)
                {
                    Ok(RemoteStart::Sent(sent)) => {
                        let (pending, request) = *sent;
                        self.host.trace_transition(&request.request_id, "sent");
                        self.transitions.requests.push(TransitionDelivery {
                            request,
                            visible_at: now + self.host.setup.work_delay_ms,
                            receives: 0,
                        });
                        self.transitions.waiting.push(Waiting { delivery, pending });
                        continue;
                    }
                    Ok(RemoteStart::Done(_)) => true,
                    Err(_) => false,
                }
            } else {
                self.host
                    .gateway
                    .plane
                    .run_work_item(&delivery.item, now)
                    .is_ok()
            };
            self.host.derive_streams();
            self.settle_work(delivery, ran);
        }
        busy
    }

    /// TPF's work function's admission before its claim, under the load a scenario injected. A
    /// declined item is acknowledged; a saturation sends it again after TPF's saturated delay
    /// as a new message (`enqueueDelayed`).
    fn admitted(&mut self, delivery: &WorkDelivery, now: i64) -> bool {
        let policy = self.coordinator().config().admission.clone();
        let mut load = WorkerLoad::default();
        match self.saturations.pop_front() {
            Some(Saturation::Worker) => load.in_flight = policy.worker_max_in_flight,
            Some(Saturation::TenantQuota) => {
                load.tenant_in_flight
                    .insert(delivery.item.tenant_id.clone(), policy.tenant_max_in_flight);
            }
            None => {}
        }
        let (denial, requeue_after) = match policy.admit(&delivery.item.tenant_id, &load) {
            Admission::Admitted => return true,
            Admission::Requeue { denial, delay_ms } => (denial, Some(delay_ms)),
            Admission::Drop { denial } => (denial, None),
        };
        let version = |w: &Self| {
            w.coordinator()
                .store()
                .get_execution(&delivery.item.tenant_id, &delivery.item.execution_id, now)
                .ok()
                .flatten()
                .map(|r| r.version)
        };
        let version_before = version(self);
        if self.mutations.contains(&Mutation::ClaimBeforeAdmission) {
            let _ = self.host.gateway.plane.run_work_item(&delivery.item, now);
            self.host.derive_streams();
        }
        let version_after = version(self);
        if let Some(delay_ms) = requeue_after {
            self.work.push(WorkDelivery {
                item: delivery.item.clone(),
                visible_at: now + delay_ms,
                receives: 0,
            });
        }
        self.host.trace.declines.push(Decline {
            at_ms: now,
            execution_id: delivery.item.execution_id.clone(),
            denial: denial.as_str(),
            requeued: requeue_after.is_some(),
            version_before,
            version_after,
        });
        false
    }

    /// The work function's call on `delivery` ended (`ran`: without an error): acknowledged,
    /// unless `work-after-action` fires, or received again after the visibility timeout.
    fn settle_work(&mut self, mut delivery: WorkDelivery, ran: bool) {
        let now = self.host.now;
        if ran && !self.host.faults.fire(FaultPoint::WorkAfterAction, now) {
            return;
        }
        if delivery.receives >= WORK_MAX_RECEIVES {
            self.work_dead_letters.push(delivery.item);
        } else {
            delivery.visible_at = now + self.host.setup.work_redelivery_ms;
            self.work.push(delivery);
        }
    }

    /// TPF's transition worker function on every request due (batch size 1, each delivery on
    /// an instance of its own: a Lambda's duplicates may land on cold instances, where the
    /// nonce guard knows nothing).
    fn run_due_transitions(&mut self) -> bool {
        if self.transitions.off {
            return false;
        }
        let now = self.host.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.transitions.requests)
            .into_iter()
            .partition(|d| d.visible_at <= now);
        self.transitions.requests = later;
        let busy = !due.is_empty();
        for mut delivery in due {
            delivery.receives += 1;
            let acknowledged = if self
                .host
                .faults
                .fire(FaultPoint::TransitionBeforeAction, now)
            {
                self.host
                    .trace_transition(&delivery.request.request_id, "failed before the action");
                false
            } else {
                let mut instance = TransitionWorkerInstance::default();
                let published = self.host.gateway.plane.coordinator.run_transition_request(
                    &mut instance,
                    &delivery.request,
                    now,
                );
                self.host.derive_streams();
                match published {
                    Some(response) => {
                        self.host.trace_transition(&response.request_id, "ran");
                        self.transitions.ran += 1;
                        self.transitions.responses.push(response);
                    }
                    None => {
                        self.host
                            .trace_transition(&delivery.request.request_id, "dropped");
                        self.transitions.dropped += 1;
                    }
                }
                !self
                    .host
                    .faults
                    .fire(FaultPoint::TransitionAfterAction, now)
            };
            // Past its 5 receives a request goes to the transition dead-letter queue.
            if !acknowledged && delivery.receives < WORK_MAX_RECEIVES {
                self.host
                    .trace_transition(&delivery.request.request_id, "redelivered");
                delivery.visible_at = now + self.host.setup.transition_redelivery_ms;
                self.transitions.requests.push(delivery);
            }
        }
        busy
    }

    /// Every waiting work function call whose response is on the response queue takes it and
    /// commits; one past its request timeout fails as TPF's caller does.
    fn finish_waiting_work(&mut self) -> bool {
        let now = self.host.now;
        let mut busy = false;
        for waiting in std::mem::take(&mut self.transitions.waiting) {
            let taken = self.transitions.responses.iter().position(|r| {
                waiting.pending.answered_by(r)
                    || self.mutations.contains(&Mutation::AnyTransitionResponse)
            });
            if taken.is_none() && waiting.pending.deadline_ms > now {
                self.transitions.waiting.push(waiting);
                continue;
            }
            busy = true;
            let response = taken.map(|i| self.transitions.responses.remove(i));
            let what = if response.is_some() {
                "committed"
            } else {
                "timed out"
            };
            self.host
                .trace_transition(&waiting.pending.request_id, what);
            let ran = self
                .host
                .gateway
                .plane
                .finish_remote_work_item(waiting.pending, response, now)
                .is_ok();
            self.host.derive_streams();
            self.settle_work(waiting.delivery, ran);
        }
        busy
    }

    fn run_due_stream_records(&mut self) -> bool {
        let now = self.host.now;
        let off = self.host.streams.off.clone();
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.host.streams.queue)
            .into_iter()
            .partition(|r| r.visible_at <= now && !off.contains(&key_of(r.stream)));
        self.host.streams.queue = later;
        let busy = !due.is_empty();
        for mut record in due {
            record.attempts += 1;
            let outcome = self.handle_stream_record(record.stream, &record.image);
            self.host.trace.stream.push(StreamEvent {
                at_ms: now,
                stream: record.stream,
                attempt: record.attempts,
                disposition: outcome.word(),
            });
            if !outcome.acknowledged() {
                if record.attempts >= self.host.setup.stream_max_attempts {
                    self.host.streams.failed.push(record);
                } else {
                    record.visible_at = now + self.host.setup.stream_retry_ms;
                    self.host.streams.queue.push(record);
                }
            }
        }
        busy
    }

    fn run_due_status_events(&mut self) -> bool {
        let now = self.host.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.status_events)
            .into_iter()
            .partition(|e| e.visible_at <= now);
        self.status_events = later;
        let busy = !due.is_empty();
        for mut event in due {
            event.attempts += 1;
            let decision = self.reconcile_one(&event.arn);
            let retry = decision.starts_with("retry");
            self.host.trace.reconciles.push(ReconcileEvent {
                at_ms: now,
                execution_arn: event.arn.clone(),
                decision,
            });
            if retry && event.attempts < self.host.setup.reconcile_max_attempts {
                event.visible_at = now + self.host.setup.reconcile_retry_ms;
                self.status_events.push(event);
            }
        }
        busy
    }

    /// The wake-path stack's schedule: EventBridge Scheduler invokes TPF's gateway with
    /// [`ActionRequest::scheduled_sweep`] once per period, whoever else sweeps.
    fn run_due_scheduled_sweep(&mut self) -> bool {
        let Some((period, at)) = self.scheduled_sweep else {
            return false;
        };
        let now = self.host.now;
        if at > now {
            return false;
        }
        let answer = self.host.serve(&ActionRequest::scheduled_sweep().to_json());
        self.host.derive_streams();
        self.host.trace.scheduled_sweeps.push(ScheduledSweepEvent {
            at_ms: now,
            answer: answer.map_err(|e| format!("{}: {}", e.error_type, e.error_message)),
        });
        self.scheduled_sweep = Some((period, at + period));
        true
    }

    fn view(&mut self) -> ModelView<'_, E> {
        ModelView {
            now_ms: self.host.now,
            index_lag_ms: self.host.setup.index_lag_ms,
            no_fence: self.mutations.contains(&Mutation::NoGenerationFence),
            gateway: std::cell::RefCell::new(&mut self.host.gateway),
            engine: &self.engine,
        }
    }

    // --- the starter -------------------------------------------------------------------------

    fn start_driver(
        &mut self,
        via: StartVia,
        mut input: ExecutionInput,
    ) -> Result<StartResponse, FunctionError> {
        if matches!(via, StartVia::WakeUp | StartVia::Reconciler)
            && self
                .mutations
                .contains(&Mutation::ReplacementOnActiveRelease)
        {
            if let Some(active) = self.active_release() {
                input.contract_version = active.contract_version;
                input.release_version = active.release_version;
            }
        }
        let name = input.durable_execution_name();
        let now = self.host.now;
        let outcome = self.engine.start(&name, &input.to_json(), now);
        self.host.trace.starts.push(StartEvent {
            at_ms: now,
            via,
            name: name.clone(),
            input,
            outcome: outcome.clone(),
        });
        match outcome {
            Ok(_) => Ok(StartResponse {
                durable_execution_name: name,
                status_code: STARTED_STATUS,
            }),
            Err(e) => Err(FunctionError {
                error_message: e.0,
                error_type: "java.lang.IllegalStateException".to_owned(),
            }),
        }
    }

    // --- the wake-up -------------------------------------------------------------------------

    fn handle_stream_record(&mut self, _stream: Stream, image: &Item) -> RecordOutcome {
        use RecordOutcome::{Decided, Failed};
        let step = match wake::on_stream_record(Some(image), &self.view()) {
            Ok(step) => step,
            Err(e) => return Failed(format!("read: {e}")),
        };
        let identity = match step {
            StreamStep::Done(d) => return Decided(d),
            StreamStep::Bind { bindings, then } => {
                for binding in &bindings {
                    if let Err(e) = self.host.gateway.bindings.bind(binding) {
                        return Failed(format!("bind: {e}"));
                    }
                }
                self.host.derive_streams();
                match then {
                    AfterBind::Acknowledge => return Decided(Disposition::Acknowledge),
                    AfterBind::Wake(identity) => identity,
                }
            }
        };
        self.wake(&identity)
    }

    fn wake(&mut self, identity: &AwaitIdentity) -> RecordOutcome {
        use RecordOutcome::{Decided, Failed};
        let delivery = match wake::wake(identity, &self.view()) {
            Ok(WakeStep::Done(d)) => return Decided(d),
            Ok(WakeStep::Deliver(delivery)) => delivery,
            Err(e) => return Failed(format!("read: {e}")),
        };
        // The table's truth, whatever the wake-up read (the fence check reads this).
        let newest = self
            .host
            .gateway
            .bindings
            .find_latest_binding(&identity.tenant_id, &identity.interaction_id)
            .ok()
            .flatten()
            .map(|b| b.await_identity.generation);
        let now = self.host.now;
        let callback_id = delivery.callback_id().to_owned();
        let (outcome, result) = self.send(&callback_id, &delivery.result_json());
        self.host.trace.sends.push(SendEvent {
            at_ms: now,
            tenant_id: identity.tenant_id.clone(),
            execution_id: identity.execution_id.clone(),
            interaction_id: identity.interaction_id.clone(),
            generation: identity.generation,
            callback_id,
            newest_bound_generation: newest,
            result,
        });
        let Some(outcome) = outcome else {
            return Failed("the wake-up threw around the send".to_owned());
        };
        let settled = wake::settle(&delivery, outcome, &self.view());
        match settled {
            Ok(Settle::Record(o)) => {
                if !self.mutations.contains(&Mutation::NoDeliveryEvidence) {
                    let row = DeliveryRow {
                        provider_outcome: o.as_str().to_owned(),
                        delivered_at_epoch_ms: now,
                        attempt_id: format!("attempt-{now}"),
                    };
                    let _ = self
                        .host
                        .gateway
                        .bindings
                        .record_delivered(&delivery.binding, row);
                    self.host.derive_streams();
                }
                Decided(Disposition::Acknowledge)
            }
            Ok(Settle::Replace(input)) => match self.start_driver(StartVia::WakeUp, input) {
                Ok(_) => Decided(Disposition::Acknowledge),
                Err(e) => Failed(format!("replacement start: {}", e.error_message)),
            },
            Ok(Settle::Retry(r)) => Decided(Disposition::Retry(r)),
            Err(e) => Failed(format!("read: {e}")),
        }
    }

    /// The send with TPF's callback faults around it: `None` is an exception in the wake-up
    /// (the record is retried with nothing settled).
    fn send(&mut self, callback_id: &str, result_json: &str) -> (Option<SendOutcome>, SendResult) {
        let now = self.host.now;
        let faults = &mut self.host.faults;
        if faults.fire(FaultPoint::WakeupBeforeProviderCallback, now) {
            return (None, SendResult::NotSent("wakeup-before-provider-callback"));
        }
        if faults.fire(FaultPoint::CallbackApiThrottled, now) {
            return (
                Some(SendOutcome::Failed),
                SendResult::NotSent("callback-api-throttled"),
            );
        }
        match self
            .engine
            .send_callback_success(callback_id, result_json, now)
        {
            Ok(()) => {
                if self
                    .host
                    .faults
                    .fire(FaultPoint::WakeupAfterProviderCallback, now)
                {
                    (None, SendResult::AcceptedAnswerLost)
                } else {
                    (Some(SendOutcome::Accepted), SendResult::Accepted)
                }
            }
            Err(refusal) if callback_gone(self.engine.kind(), &refusal.code) => {
                let state = if self
                    .host
                    .faults
                    .fire(FaultPoint::ProviderHistoryUnavailable, now)
                {
                    ProviderState::Closed
                } else {
                    self.engine.callback_state(callback_id)
                };
                (
                    Some(SendOutcome::Gone(state)),
                    SendResult::Refused(refusal.code),
                )
            }
            Err(refusal) => (Some(SendOutcome::Failed), SendResult::Refused(refusal.code)),
        }
    }

    // --- the reconciler ----------------------------------------------------------------------

    /// One status-change event; answers the decision as a word for the trace (`retry…` is
    /// delivered again).
    fn reconcile_one(&mut self, arn: &str) -> String {
        let kind = self.engine.kind();
        let status = self.engine.driver(arn).map(|d| d.provider_status);
        let state = match driver_state(kind, status.as_deref()) {
            Ok(s) => s,
            Err(e) => return format!("retry:{e}"),
        };
        if state == DriverState::Running {
            return "nothing:DriverRunning".to_owned();
        }
        let mut decision = match reconcile::reconcile(arn, state, &self.view()) {
            Ok(d) => d,
            Err(e) => return format!("retry:{e}"),
        };
        if let Reconcile::Resubmit(input) = &decision {
            let input = input.clone();
            let request = match ActionRequest::submit(&input) {
                Ok(r) => r,
                Err(e) => return format!("retry:{e}"),
            };
            let answer = self
                .host
                .serve(&request.to_json())
                .map_err(|e| e.error_message)
                .and_then(|t| ActionResponse::read(&t).map_err(|e| e.to_string()));
            self.host.derive_streams();
            let checkpoint = match answer.map(|r| r.checkpoint) {
                Ok(Some(c)) => c,
                Ok(None) => return "retry:no checkpoint".to_owned(),
                Err(e) => return format!("retry:{e}"),
            };
            decision = match reconcile::after_resubmit(&checkpoint, &input, &self.view()) {
                Ok(d) => d,
                Err(e) => return format!("retry:{e}"),
            };
        }
        match decision {
            Reconcile::Nothing(q) => format!("nothing:{q:?}"),
            Reconcile::Retry(m) => format!("retry:{m:?}"),
            Reconcile::Resubmit(_) => "retry:resubmitted twice".to_owned(),
            Reconcile::Replace { bind, start } => {
                if let Some(b) = bind {
                    if let Err(e) = self.bind(&b) {
                        return format!("retry:{e}");
                    }
                }
                let name = start.durable_execution_name();
                match self.start_driver(StartVia::Reconciler, start) {
                    Ok(_) => format!("replace:{name}"),
                    Err(e) => format!("retry:{}", e.error_message),
                }
            }
        }
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        let written = self.host.gateway.bindings.bind(binding);
        self.host.derive_streams();
        written
    }

    /// The execution's driver generations that started, in order, with their ARNs.
    pub fn generations_of(&self, execution_id: &str, key: &str) -> Vec<(i64, Started)> {
        self.host
            .trace
            .starts
            .iter()
            .filter(|s| {
                s.input.resume_execution_id.as_deref() == Some(execution_id)
                    || (s.input.resume_execution_id.is_none() && s.input.idempotency_key == key)
            })
            .filter_map(|s| Some((s.input.generation, s.outcome.clone().ok()?)))
            .collect()
    }
}
