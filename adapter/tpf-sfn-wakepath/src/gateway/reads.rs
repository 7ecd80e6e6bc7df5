//! The decisions' [`HostView`] over AWS.
//!
//! `tpf_sfn_wakeup`'s decisions are pure and read synchronously; AWS reads are asynchronous.
//! So a decision runs against the answers read so far ([`Answers`]): a read it has no answer
//! for stops it with [`Need`], [`AwsHost::decide`] performs that read and runs the decision
//! again, until it decides. A decision makes a handful of reads, each once, and reads the
//! same facts in the same order every time, so each run gets one step further. Nothing blocks
//! the runtime, and a failed read is the record's or event's error as TPF's handlers have it.

use std::collections::HashMap;

use tpf_sfn_wakeup::view::HostView;
use tpf_wire::gateway::binding::{CallbackBinding, CallbackRegistration};
use tpf_wire::gateway::request::RequestParts;
use tpf_wire::gateway::response::AWAIT_CHECKPOINT_UNAVAILABLE;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse, AwaitCheckpoint, AwaitIdentity, Operation};
use tpf_wire::java_error::{class, JavaError};
use tpf_wire::records::ExecutionStatus;

use super::bindings::BindingTable;
use super::invoke::{Invoked, Invoker};
use super::provider::Providers;
use crate::error::Error;

/// Reads one decision may make before it is stopped as looping (a decision makes at most
/// seven).
const MAX_READS: usize = 32;

/// One read a decision asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Read {
    AwaitCheckpoint(AwaitIdentity),
    ExecutionAwaits(String, String, i64),
    Status(String, String, i64),
    LatestRegistration(String, String),
    RegistrationByArn(String),
    Binding(String, String, i64),
    LatestBindingGeneration(String, String),
    Delivered(Box<CallbackBinding>),
    DriverInput(String),
}

/// What a read answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Checkpoint(Option<AwaitCheckpoint>),
    Checkpoints(Vec<AwaitCheckpoint>),
    Status(ExecutionStatus),
    Registration(Option<CallbackRegistration>),
    Binding(Option<CallbackBinding>),
    Generation(Option<i64>),
    Delivered(bool),
    Input(Option<ExecutionInput>),
}

/// The view's error: a read not made yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need(pub Read);

/// The answers read so far, as the decisions' view.
#[derive(Debug, Default)]
pub struct Answers(HashMap<Read, Answer>);

impl Answers {
    fn get(&self, read: Read) -> Result<&Answer, Need> {
        self.0.get(&read).ok_or(Need(read))
    }
}

/// The answer of the read's kind, or the read to make.
macro_rules! answer {
    ($self:ident, $read:expr, $variant:ident) => {
        match $self.get($read)? {
            Answer::$variant(v) => Ok(v.clone()),
            // A read is only ever answered with its own kind (`AwsHost::read`).
            _ => Err(Need($read)),
        }
    };
}

impl HostView for Answers {
    type Error = Need;

    fn await_checkpoint(&self, identity: &AwaitIdentity) -> Result<Option<AwaitCheckpoint>, Need> {
        answer!(self, Read::AwaitCheckpoint(identity.clone()), Checkpoint)
    }

    fn execution_awaits(&self, t: &str, e: &str, g: i64) -> Result<Vec<AwaitCheckpoint>, Need> {
        answer!(
            self,
            Read::ExecutionAwaits(t.into(), e.into(), g),
            Checkpoints
        )
    }

    fn status(&self, t: &str, e: &str, g: i64) -> Result<ExecutionStatus, Need> {
        answer!(self, Read::Status(t.into(), e.into(), g), Status)
    }

    fn latest_registration(&self, t: &str, e: &str) -> Result<Option<CallbackRegistration>, Need> {
        answer!(
            self,
            Read::LatestRegistration(t.into(), e.into()),
            Registration
        )
    }

    fn registration_by_provider_arn(
        &self,
        arn: &str,
    ) -> Result<Option<CallbackRegistration>, Need> {
        answer!(self, Read::RegistrationByArn(arn.into()), Registration)
    }

    fn binding(&self, t: &str, i: &str, g: i64) -> Result<Option<CallbackBinding>, Need> {
        answer!(self, Read::Binding(t.into(), i.into(), g), Binding)
    }

    fn latest_binding_generation(&self, t: &str, i: &str) -> Result<Option<i64>, Need> {
        answer!(
            self,
            Read::LatestBindingGeneration(t.into(), i.into()),
            Generation
        )
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, Need> {
        answer!(self, Read::Delivered(Box::new(binding.clone())), Delivered)
    }

    fn driver_input(&self, arn: &str) -> Result<Option<ExecutionInput>, Need> {
        answer!(self, Read::DriverInput(arn.into()), Input)
    }
}

/// The gateway, the binding table and the providers: everything the wake-up, the reconciler
/// and the replacement read.
#[derive(Debug, Clone)]
pub struct AwsHost<I> {
    pub gateway: I,
    pub bindings: BindingTable,
    pub providers: Providers,
}

/// A request the host builds from what it read; TPF's record rules refuse only what TPF's own
/// rows could not hold.
fn request(built: Result<ActionRequest, JavaError>) -> Result<ActionRequest, Error> {
    built.map_err(|e| {
        Error::new(
            "GATEWAY_HOST_REQUEST",
            "a gateway request from TPF's own rows breaks TPF's record rules",
        )
        .with_source(e)
        .with_hint(
            "the rows were written by something other than TPF's gateway: look at the record",
        )
    })
}

/// The gateway refused an operation the host relies on.
fn function_error(operation: Operation, f: &tpf_wire::gateway::FunctionError) -> Error {
    Error::new(
        "GATEWAY_HOST_FUNCTION_ERROR",
        format!(
            "the gateway failed {}: {}: {}",
            operation.as_str(),
            f.error_type,
            f.error_message
        ),
    )
    .with_hint("the record or event is retried; if it persists, look at the gateway's logs")
}

fn status_of(response: &ActionResponse) -> Result<ExecutionStatus, Error> {
    response
        .execution_status
        .as_deref()
        .and_then(ExecutionStatus::parse)
        .ok_or_else(|| {
            Error::new(
                "GATEWAY_HOST_RESPONSE",
                format!(
                    "STATUS answered {:?}, which is no execution status",
                    response.execution_status
                ),
            )
            .with_hint("check that the function is TPF's action gateway")
        })
}

impl<I: Invoker> AwsHost<I> {
    /// Runs `decision` until it decides, making the reads it asks for.
    pub async fn decide<T>(
        &self,
        decision: impl Fn(&Answers) -> Result<T, Need>,
    ) -> Result<T, Error> {
        let mut answers = Answers::default();
        for _ in 0..MAX_READS {
            match decision(&answers) {
                Ok(decided) => return Ok(decided),
                Err(Need(read)) => {
                    let answer = self.read(&read).await?;
                    answers.0.insert(read, answer);
                }
            }
        }
        Err(Error::new(
            "GATEWAY_HOST_READS",
            format!("a decision asked for more than {MAX_READS} reads"),
        )
        .with_hint("a defect of tpf-sfn: report it with the record or event"))
    }

    async fn call(&self, request: &ActionRequest) -> Result<Invoked, Error> {
        self.gateway.invoke(request).await
    }

    async fn ask(&self, request: &ActionRequest) -> Result<ActionResponse, Error> {
        match self.call(request).await? {
            Invoked::Response(r) => Ok(*r),
            Invoked::Failed(f) => Err(function_error(request.operation, &f)),
        }
    }

    fn for_execution(op: Operation, t: &str, e: &str, g: i64) -> Result<ActionRequest, Error> {
        request(
            RequestParts {
                operation: Some(op),
                tenant_id: Some(t.to_owned()),
                execution_id: Some(e.to_owned()),
                generation: g,
                ..RequestParts::default()
            }
            .build(),
        )
    }

    /// Makes one read.
    pub async fn read(&self, read: &Read) -> Result<Answer, Error> {
        let b = &self.bindings;
        Ok(match read {
            Read::AwaitCheckpoint(identity) => {
                let req = request(ActionRequest::await_checkpoint(identity))?;
                match self.call(&req).await? {
                    Invoked::Response(r) => Answer::Checkpoint(r.await_checkpoint),
                    // The gateway's way of saying TPF has none.
                    Invoked::Failed(f)
                        if f.error_type == class::ILLEGAL_STATE
                            && f.error_message == AWAIT_CHECKPOINT_UNAVAILABLE =>
                    {
                        Answer::Checkpoint(None)
                    }
                    Invoked::Failed(f) => return Err(function_error(req.operation, &f)),
                }
            }
            Read::ExecutionAwaits(t, e, g) => {
                let req = Self::for_execution(Operation::ReadExecutionAwaits, t, e, *g)?;
                Answer::Checkpoints(self.ask(&req).await?.await_checkpoints)
            }
            Read::Status(t, e, g) => {
                let req = Self::for_execution(Operation::Status, t, e, *g)?;
                Answer::Status(status_of(&self.ask(&req).await?)?)
            }
            Read::LatestRegistration(t, e) => {
                Answer::Registration(b.latest_registration(t, e).await?)
            }
            Read::RegistrationByArn(arn) => {
                Answer::Registration(b.registration_by_provider_arn(arn).await?)
            }
            Read::Binding(t, i, g) => Answer::Binding(b.binding(t, i, *g).await?),
            Read::LatestBindingGeneration(t, i) => {
                Answer::Generation(b.latest_binding_generation(t, i).await?)
            }
            Read::Delivered(binding) => Answer::Delivered(b.delivered(binding).await?),
            Read::DriverInput(arn) => Answer::Input(self.providers.driver_input(arn).await?),
        })
    }
}
