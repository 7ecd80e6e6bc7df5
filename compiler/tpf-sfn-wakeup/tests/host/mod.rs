//! An in-memory host for the wake-up and reconciler decisions: TPF's await checkpoints and
//! statuses, the callback-binding table as TPF's items, a provider whose drivers keep a
//! Lambda durable functions history, and a runner that performs each decision's effect the way
//! an adapter does.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::convert::Infallible;

use tpf_sfn_wakeup::provider::{
    durable_callback_state, durable_event as ev, sfn, sfn_callback_state, DurableEvent,
    ProviderState,
};
use tpf_sfn_wakeup::reconcile::{self, Reconcile};
use tpf_sfn_wakeup::view::HostView;
use tpf_sfn_wakeup::wake::{
    self, AfterBind, Disposition, SendOutcome, Settle, StreamStep, WakeStep,
};
use tpf_wire::gateway::binding::{
    attr, CallbackBinding, CallbackRegistration, ProviderFields, RowType,
};
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, durable_execution_name, prefix,
    registration_partition_key,
};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{AwaitCheckpoint, AwaitIdentity, DriverCheckpoint, ExecutionCheckpoint};
use tpf_wire::records::{interaction_attr, AttrValue, ExecutionStatus, Item};

pub const T: &str = "tenant-a";
pub const E: &str = "execution-a";
pub const I: &str = "interaction-a";
pub const C: &str = "correlation-a";
pub const KEY: &str = "client-key";

/// What happened to one record or event, as the adapter reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ack,
    Retry(wake::RetryReason),
    /// A put found another authority's row: TPF's conflict fails the record.
    Conflict,
}

/// One driver execution on the provider.
#[derive(Debug, Clone, Default)]
pub struct Driver {
    pub callback_id: String,
    /// (event type, operation id, callback id)
    pub history: Vec<(&'static str, String, Option<String>)>,
    /// Results the provider accepted for this driver's callback.
    pub received: Vec<String>,
}

/// How the provider answers the next send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `TooManyRequestsException`: not a gone callback.
    Throttle,
    /// The provider accepts the send and the answer is lost on the way back.
    LoseAnswer,
}

#[derive(Default)]
pub struct World {
    pub checkpoints: Vec<AwaitCheckpoint>,
    pub statuses: BTreeMap<String, ExecutionStatus>,
    pub table: BTreeMap<(String, String), Item>,
    pub drivers: BTreeMap<String, Driver>,
    pub inputs: BTreeMap<String, ExecutionInput>,
    pub faults: Vec<Fault>,
    /// Durable execution names started, in order (a repeated name is one execution).
    pub started: Vec<ExecutionInput>,
    pub sends: usize,
    /// The provider the drivers run on; its adapter classifies a gone callback its own way.
    pub engine: Engine,
}

/// Which backend's classification the provider's adapter uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    #[default]
    Durable,
    StepFunctions,
}

pub const ENGINES: [Engine; 2] = [Engine::Durable, Engine::StepFunctions];

/// The callback's state as each backend's adapter derives it from one driver's history, kept
/// here as Lambda durable events and spelled as Step Functions would record the same run.
fn classify(
    engine: Engine,
    history: &[(&'static str, String, Option<String>)],
    callback_id: &str,
) -> ProviderState {
    match engine {
        Engine::Durable => {
            let events: Vec<DurableEvent<'_>> = history
                .iter()
                .map(|(t, id, cb)| DurableEvent {
                    event_type: t,
                    id,
                    callback_id: cb.as_deref(),
                })
                .collect();
            durable_callback_state(Some(&events), callback_id)
        }
        Engine::StepFunctions => {
            let mut status = sfn::status::RUNNING;
            let mut events = vec![];
            for (t, _, _) in history {
                match *t {
                    ev::CALLBACK_STARTED => {
                        events.extend(["TaskScheduled", "TaskStarted", "TaskSubmitted"])
                    }
                    ev::CALLBACK_SUCCEEDED => events.push(sfn::event::TASK_SUCCEEDED),
                    ev::CALLBACK_TIMED_OUT => events.push(sfn::event::TASK_TIMED_OUT),
                    ev::EXECUTION_STOPPED => {
                        events.push(sfn::event::EXECUTION_ABORTED);
                        status = sfn::status::ABORTED;
                    }
                    ev::EXECUTION_FAILED => {
                        events.push(sfn::event::EXECUTION_FAILED);
                        status = sfn::status::FAILED;
                    }
                    other => panic!("no Step Functions spelling for {other}"),
                }
            }
            sfn_callback_state(Some(status), Some(&events))
        }
    }
}

pub fn arn(generation: i64) -> String {
    format!("arn:aws:lambda:us-east-1:1:function:host-durable:1/durable-execution/g{generation}")
}

pub fn callback(generation: i64) -> String {
    format!("callback-g{generation}")
}

pub fn execution() -> ExecutionCheckpoint {
    ExecutionCheckpoint::new(Some(T), Some(E), Some("pipe"), Some("c1"), Some("r1")).unwrap()
}

pub fn checkpoint(status: &str) -> AwaitCheckpoint {
    AwaitCheckpoint::new([
        Some(T),
        Some(E),
        Some(I),
        Some(C),
        Some("unit-a"),
        Some("approve"),
        Some(status),
        Some("pipe"),
        Some("c1"),
        // The release of the semantic checkpoint, which a replacement starts under.
        Some("r-semantic"),
    ])
    .unwrap()
}

pub fn registration(generation: i64) -> CallbackRegistration {
    let key = if generation == 1 { KEY } else { E };
    CallbackRegistration::new(
        DriverCheckpoint::new(execution(), generation).unwrap(),
        ProviderFields::new(
            Some(&durable_execution_name(Some(T), Some(key), generation).unwrap()),
            Some(&arn(generation)),
            Some(&callback(generation)),
        )
        .unwrap(),
        1_000,
        2_000,
    )
    .unwrap()
}

/// The await-interaction row's stream image.
pub fn await_image(status: &str) -> Item {
    let mut item = Item::new();
    for (name, value) in [
        (interaction_attr::TENANT_ID, T),
        (interaction_attr::EXECUTION_ID, E),
        (interaction_attr::INTERACTION_ID, I),
        (interaction_attr::CORRELATION_ID, C),
        (interaction_attr::STATUS, status),
        ("step_id", "approve"),
    ] {
        item.insert(name.to_owned(), AttrValue::S(value.to_owned()));
    }
    item.insert("version".to_owned(), AttrValue::N("3".to_owned()));
    item
}

impl World {
    /// TPF's execution waits on one interaction in `status`.
    pub fn awaiting(status: &str) -> Self {
        let mut w = World::default();
        w.checkpoints.push(checkpoint(status));
        w.statuses
            .insert(E.to_owned(), ExecutionStatus::WaitingExternal);
        w
    }

    /// Generation 1 parked on a waiting interaction, its registration's record processed (the
    /// interaction is bound, nothing woke). Also answers that record's image.
    pub fn parked() -> (Self, Item) {
        let mut w = World::awaiting("WAITING");
        let registered = w.park(1);
        assert_eq!(w.on_record(Some(&registered)), Outcome::Ack);
        assert_eq!(w.bound_generations(), [1]);
        assert_eq!(w.sends, 0);
        (w, registered)
    }

    /// TPF completes the interaction while the provider's next answer is `fault`: the
    /// completion's record fails with nothing delivered. Answers the completion's image.
    pub fn complete_under(&mut self, fault: Fault) -> Item {
        self.faults.push(fault);
        let completed = self.complete();
        assert_eq!(
            self.on_record(Some(&completed)),
            Outcome::Retry(wake::RetryReason::SendFailed)
        );
        assert_eq!(self.delivered_outcome(1), None);
        completed
    }

    /// TPF completes the interaction: its checkpoint changes and the stream carries the row.
    pub fn complete(&mut self) -> Item {
        self.checkpoints = vec![checkpoint("COMPLETED")];
        await_image("COMPLETED")
    }

    /// A driver generation parks: its callback starts, and it registers (the row the binding
    /// table's stream then carries).
    pub fn park(&mut self, generation: i64) -> Item {
        let r = registration(generation);
        let op = format!("op-{generation}");
        self.drivers.insert(
            arn(generation),
            Driver {
                callback_id: callback(generation),
                history: vec![(ev::CALLBACK_STARTED, op, Some(callback(generation)))],
                received: vec![],
            },
        );
        let item = r.to_item();
        assert!(self.put(item.clone()).is_ok());
        item
    }

    /// Ends a driver the provider's way (`StopDurableExecution`, or its callback timing out).
    pub fn end_driver(&mut self, generation: i64, event: &'static str) {
        let d = self.drivers.get_mut(&arn(generation)).unwrap();
        let id = if event == ev::CALLBACK_TIMED_OUT {
            format!("op-{generation}")
        } else {
            "execution".to_owned()
        };
        d.history.push((event, id, None));
    }

    fn key(item: &Item) -> (String, String) {
        let s = |n: &str| match &item[n] {
            AttrValue::S(v) => v.clone(),
            other => panic!("{other:?}"),
        };
        (s(attr::PK), s(attr::SK))
    }

    /// A put conditioned on the key being free: `Err` holds the row that was there.
    pub fn put(&mut self, item: Item) -> Result<(), Item> {
        let key = Self::key(&item);
        match self.table.get(&key) {
            Some(existing) => Err(existing.clone()),
            None => {
                self.table.insert(key, item);
                Ok(())
            }
        }
    }

    /// TPF's `bind`: an identical authority is written already, another is the conflict.
    pub fn bind(&mut self, binding: &CallbackBinding) -> Result<(), Outcome> {
        match self.put(binding.to_item()) {
            Ok(()) => Ok(()),
            Err(existing) => match CallbackBinding::from_item(&existing) {
                Ok(b) if b.same_authority(binding) => Ok(()),
                _ => Err(Outcome::Conflict),
            },
        }
    }

    pub fn delivered_outcome(&self, generation: i64) -> Option<String> {
        let key = (binding_partition_key(T, I), delivered_sort_key(generation));
        self.table
            .get(&key)
            .map(|i| match &i[attr::PROVIDER_OUTCOME] {
                AttrValue::S(v) => v.clone(),
                other => panic!("{other:?}"),
            })
    }

    pub fn bound_generations(&self) -> Vec<i64> {
        self.rows(&binding_partition_key(T, I), prefix::GENERATION)
            .map(|i| {
                CallbackBinding::from_item(i)
                    .unwrap()
                    .await_identity
                    .generation
            })
            .collect()
    }

    fn rows<'a>(&'a self, pk: &'a str, sk_prefix: &'a str) -> impl Iterator<Item = &'a Item> + 'a {
        self.table
            .iter()
            .filter(move |((p, s), _)| p == pk && s.starts_with(sk_prefix))
            .map(|(_, i)| i)
    }

    /// The provider's answer to a callback success.
    fn send(&mut self, callback_id: &str, result: String) -> SendOutcome {
        self.sends += 1;
        let fault = (!self.faults.is_empty()).then(|| self.faults.remove(0));
        if fault == Some(Fault::Throttle) {
            return SendOutcome::Failed;
        }
        let Some(driver) = self
            .drivers
            .values_mut()
            .find(|d| d.callback_id == callback_id)
        else {
            // The history is gone with the execution.
            return SendOutcome::Gone(durable_callback_state(None, callback_id));
        };
        let state = classify(self.engine, &driver.history, callback_id);
        // A callback that ended (or whose execution did) refuses the send, whatever the
        // classification then says of it (open while its driver still runs).
        let ended = driver.history.iter().any(|(t, _, _)| {
            [
                ev::CALLBACK_SUCCEEDED,
                ev::CALLBACK_FAILED,
                ev::CALLBACK_TIMED_OUT,
                ev::EXECUTION_SUCCEEDED,
                ev::EXECUTION_FAILED,
                ev::EXECUTION_TIMED_OUT,
                ev::EXECUTION_STOPPED,
            ]
            .contains(t)
        });
        if state != ProviderState::Open || ended {
            return SendOutcome::Gone(state);
        }
        let op = driver.history[0].1.clone();
        driver.history.push((ev::CALLBACK_SUCCEEDED, op, None));
        driver.received.push(result);
        if fault == Some(Fault::LoseAnswer) {
            SendOutcome::Failed
        } else {
            SendOutcome::Accepted
        }
    }

    fn start(&mut self, input: ExecutionInput) {
        let name = input.durable_execution_name();
        if !self
            .started
            .iter()
            .any(|s| s.durable_execution_name() == name)
        {
            self.started.push(input);
        }
    }

    /// The wake-up function's handling of one stream record.
    pub fn on_record(&mut self, image: Option<&Item>) -> Outcome {
        let step = wake::on_stream_record(image, &*self).unwrap();
        let identity = match step {
            StreamStep::Done(d) => return d.into(),
            StreamStep::Bind { bindings, then } => {
                for binding in &bindings {
                    if let Err(conflict) = self.bind(binding) {
                        return conflict;
                    }
                }
                match then {
                    AfterBind::Acknowledge => return Outcome::Ack,
                    AfterBind::Wake(identity) => identity,
                }
            }
        };
        self.wake(&identity)
    }

    pub fn wake(&mut self, identity: &tpf_wire::gateway::AwaitIdentity) -> Outcome {
        let delivery = match wake::wake(identity, &*self).unwrap() {
            WakeStep::Done(d) => return d.into(),
            WakeStep::Deliver(delivery) => delivery,
        };
        let outcome = self.send(delivery.callback_id(), delivery.result_json());
        match wake::settle(&delivery, outcome, &*self).unwrap() {
            Settle::Record(o) => {
                let _ = self.put(delivery.binding.delivery_item(o.as_str(), 5, "attempt"));
                Outcome::Ack
            }
            Settle::Replace(input) => {
                self.start(input);
                Outcome::Ack
            }
            Settle::Retry(r) => Outcome::Retry(r),
        }
    }

    /// The reconciler's handling of one ended driver.
    pub fn on_status_change(
        &mut self,
        execution_arn: &str,
        state: tpf_sfn_wakeup::provider::DriverState,
    ) -> Reconcile {
        let mut decision = reconcile::reconcile(execution_arn, state, &*self).unwrap();
        if let Reconcile::Resubmit(input) = &decision {
            // TPF answers a key it admitted with that execution's checkpoint.
            assert_eq!(input.idempotency_key, KEY);
            decision = reconcile::after_resubmit(&execution(), input, &*self).unwrap();
        }
        if let Reconcile::Replace { bind, start } = &decision {
            if let Some(b) = bind {
                assert_eq!(self.bind(b), Ok(()));
            }
            self.start(start.clone());
        }
        decision
    }
}

impl From<Disposition> for Outcome {
    fn from(d: Disposition) -> Self {
        match d {
            Disposition::Acknowledge => Outcome::Ack,
            Disposition::Retry(r) => Outcome::Retry(r),
        }
    }
}

impl HostView for World {
    type Error = Infallible;

    fn await_checkpoint(&self, id: &AwaitIdentity) -> Result<Option<AwaitCheckpoint>, Infallible> {
        Ok(self
            .checkpoints
            .iter()
            .find(|c| c.tenant_id == id.tenant_id && c.interaction_id == id.interaction_id)
            .cloned())
    }

    fn execution_awaits(
        &self,
        t: &str,
        e: &str,
        _generation: i64,
    ) -> Result<Vec<AwaitCheckpoint>, Infallible> {
        Ok(self
            .checkpoints
            .iter()
            .filter(|c| c.tenant_id == t && c.execution_id == e)
            .cloned()
            .collect())
    }

    fn status(&self, _t: &str, e: &str, _generation: i64) -> Result<ExecutionStatus, Infallible> {
        Ok(self.statuses[e])
    }

    fn latest_registration(
        &self,
        t: &str,
        e: &str,
    ) -> Result<Option<CallbackRegistration>, Infallible> {
        let pk = registration_partition_key(t, e);
        Ok(self
            .rows(&pk, prefix::REGISTRATION)
            .last()
            .map(|i| CallbackRegistration::from_item(i).unwrap()))
    }

    fn registration_by_provider_arn(
        &self,
        arn: &str,
    ) -> Result<Option<CallbackRegistration>, Infallible> {
        Ok(self
            .table
            .values()
            .filter(|i| {
                i.get(attr::RECORD_TYPE)
                    == Some(&AttrValue::S(RowType::Registration.as_str().into()))
            })
            .filter(|i| i.get(attr::PROVIDER_EXECUTION_ARN) == Some(&AttrValue::S(arn.into())))
            .map(|i| CallbackRegistration::from_item(i).unwrap())
            .next())
    }

    fn binding(&self, t: &str, i: &str, g: i64) -> Result<Option<CallbackBinding>, Infallible> {
        let key = (
            binding_partition_key(t, i),
            tpf_wire::gateway::names::generation_sort_key(g).unwrap(),
        );
        Ok(self
            .table
            .get(&key)
            .map(|i| CallbackBinding::from_item(i).unwrap()))
    }

    fn latest_binding_generation(&self, t: &str, i: &str) -> Result<Option<i64>, Infallible> {
        let pk = binding_partition_key(t, i);
        Ok(self.rows(&pk, prefix::GENERATION).last().map(|i| {
            CallbackBinding::from_item(i)
                .unwrap()
                .await_identity
                .generation
        }))
    }

    fn delivered(&self, b: &CallbackBinding) -> Result<bool, Infallible> {
        let key = (
            b.partition_key(),
            delivered_sort_key(b.await_identity.generation),
        );
        Ok(self.table.contains_key(&key))
    }

    fn driver_input(&self, arn: &str) -> Result<Option<ExecutionInput>, Infallible> {
        Ok(self.inputs.get(arn).cloned())
    }
}
