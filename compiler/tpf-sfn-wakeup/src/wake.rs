//! TPF's await wake-up (`AwsDurableAwaitStreamProcessor`, `AwsDurableWakeupService`) as
//! decisions both backends run: one function on two streams, TPF's await-interaction table and
//! the callback-binding table.
//!
//! The protocol, in TPF's order:
//!
//! 1. [`on_stream_record`]: a record's new image. A REGISTRATION binds its execution's awaits
//!    to its generation (our deviation from TPF, which binds only the first one listed: see
//!    [`on_registration`]); any other row is read as an await row and binds to the
//!    execution's newest registration. Either way the BINDINGs are written first
//!    ([`StreamStep::Bind`]), and only a `COMPLETED` interaction goes on to wake.
//! 2. [`wake`]: TPF's checkpoint must be `COMPLETED` and the identity's; the generation's
//!    BINDING must exist; a newer BINDING generation fences this one off; `DELIVERED#<gen>`
//!    means it was delivered. Otherwise deliver the callback signal.
//! 3. [`settle`]: the provider's answer to the send.
//!
//! The decisions read through a [`HostView`] and return the effect to perform; the caller
//! performs it and, for [`StreamStep::Bind`] with [`AfterBind::Wake`], calls [`wake`] next.

use tpf_wire::gateway::binding::attr as binding_attr;
use tpf_wire::gateway::binding::{CallbackBinding, CallbackRegistration, DeliveryOutcome, RowType};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{AwaitIdentity, CallbackSignal};
use tpf_wire::records::{interaction_attr, AttrValue, AwaitInteractionStatus, Item};

use crate::provider::ProviderState;
use crate::replacement::{replacement, Unresolved};
use crate::view::HostView;

/// TPF's `AwsDurableWakeupDisposition`: what becomes of the stream record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Disposition {
    /// Done with it (processed, or nothing to do).
    Acknowledge,
    /// Report it as a batch item failure so the stream delivers it again.
    Retry(RetryReason),
}

/// Why a record is retried: a piece TPF's protocol needs is not visible yet, or the provider
/// has not settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryReason {
    /// An await row with no registration of its execution yet.
    RegistrationMissing,
    /// A registration whose execution lists no await yet.
    NoAwait,
    /// TPF has no semantic checkpoint of the interaction.
    CheckpointMissing,
    /// The generation's BINDING is not there.
    BindingMissing,
    /// The send failed for another reason than a gone callback (throttling, a network error).
    SendFailed,
    /// The callback is gone, and the provider's history shows it open or does not show it.
    ProviderUnsettled,
    /// The callback is closed and the replacement cannot start yet.
    Replacement(Unresolved),
    /// The await does not belong to the registration (TPF's `bind` throws, and the record
    /// fails).
    NotBindable,
}

/// What to do with one stream record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamStep {
    Done(Disposition),
    /// Put each BINDING, in order (each conditioned on its key being free). An identical row
    /// there counts as written; another authority's row is TPF's conflict, and the record is
    /// retried. Then `then`. Never empty.
    Bind {
        bindings: Vec<CallbackBinding>,
        then: AfterBind,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterBind {
    /// The interaction is not `COMPLETED`: nothing to wake.
    Acknowledge,
    /// Call [`wake`] with this identity.
    Wake(AwaitIdentity),
}

/// A non-blank text attribute, as TPF's processor reads an image.
fn text<'a>(image: &'a Item, name: &str) -> Option<&'a str> {
    match image.get(name) {
        Some(AttrValue::S(v)) if !tpf_wire::java_text::is_java_blank(v) => Some(v),
        _ => None,
    }
}

/// Decides one stream record from its new image (`None`: a record without one, a removal).
pub fn on_stream_record<V: HostView>(
    image: Option<&Item>,
    view: &V,
) -> Result<StreamStep, V::Error> {
    let Some(image) = image.filter(|i| !i.is_empty()) else {
        return Ok(StreamStep::Done(Disposition::Acknowledge));
    };
    if text(image, binding_attr::RECORD_TYPE) == Some(RowType::Registration.as_str()) {
        on_registration(image, view)
    } else {
        on_await_row(image, view)
    }
}

/// A REGISTRATION insert: the driver parked before (or after) TPF's await changed, so the
/// registration repairs the window in which the await's own record found no registration.
///
/// **Our deviation from TPF's rule.** TPF binds only the first await `READ_EXECUTION_AWAITS`
/// lists. With concurrent awaits (an itemized await) that first one can be an item already
/// delivered to an older generation: the new generation is woken at once, finds TPF still
/// `WAITING_EXTERNAL` and hands over again, without bound. Here the registration binds every
/// await of the execution that is not terminal (so its completion wakes this generation), and
/// a `COMPLETED` one only while no generation holds its `DELIVERED` row (the completion that
/// came before the registration, TPF's scenario 10, still wakes at once); it wakes for the
/// first such undelivered `COMPLETED` await only. Other terminal awaits are not bound.
fn on_registration<V: HostView>(image: &Item, view: &V) -> Result<StreamStep, V::Error> {
    // TPF's stream decoder fails on exactly what the repository's reader fails on; a
    // malformed registration is acknowledged, never retried.
    let Ok(registration) = CallbackRegistration::from_item(image) else {
        return Ok(StreamStep::Done(Disposition::Acknowledge));
    };
    let execution = &registration.checkpoint.execution;
    let awaits = view.execution_awaits(
        &execution.tenant_id,
        &execution.execution_id,
        registration.checkpoint.generation,
    )?;
    if awaits.is_empty() {
        return Ok(StreamStep::Done(Disposition::Retry(RetryReason::NoAwait)));
    }
    let mut bindings = Vec::new();
    let mut then = AfterBind::Acknowledge;
    for listed in &awaits {
        let completed = listed.status == AwaitInteractionStatus::Completed.as_str();
        let open = AwaitInteractionStatus::parse(&listed.status).is_some_and(|s| !s.terminal());
        let wakes =
            completed && !delivered_to_any(view, &listed.tenant_id, &listed.interaction_id)?;
        if !open && !wakes {
            continue;
        }
        let ids = [
            listed.tenant_id.as_str(),
            &listed.execution_id,
            &listed.interaction_id,
            &listed.correlation_id,
        ];
        let Some(binding) = bind(&registration, ids) else {
            return Ok(StreamStep::Done(Disposition::Retry(
                RetryReason::NotBindable,
            )));
        };
        if wakes && then == AfterBind::Acknowledge {
            then = AfterBind::Wake(binding.await_identity.clone());
        }
        bindings.push(binding);
    }
    Ok(if bindings.is_empty() {
        // Every await is settled: nothing for this generation to wait on or to be woken by.
        StreamStep::Done(Disposition::Acknowledge)
    } else {
        StreamStep::Bind { bindings, then }
    })
}

/// Whether any generation bound to the interaction holds its `DELIVERED#<generation>` row.
fn delivered_to_any<V: HostView>(
    view: &V,
    tenant_id: &str,
    interaction_id: &str,
) -> Result<bool, V::Error> {
    let Some(latest) = view.latest_binding_generation(tenant_id, interaction_id)? else {
        return Ok(false);
    };
    for generation in (1..=latest).rev() {
        if let Some(binding) = view.binding(tenant_id, interaction_id, generation)? {
            if view.delivered(&binding)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Any other row, read as an await-interaction row. BINDING and DELIVERY rows lack an await
/// row's attributes and are acknowledged here.
fn on_await_row<V: HostView>(image: &Item, view: &V) -> Result<StreamStep, V::Error> {
    use interaction_attr as a;
    let fields = [
        a::TENANT_ID,
        a::EXECUTION_ID,
        a::INTERACTION_ID,
        a::CORRELATION_ID,
        a::STATUS,
    ]
    .map(|name| text(image, name));
    let [Some(tenant), Some(execution), Some(interaction), Some(correlation), Some(status)] =
        fields
    else {
        return Ok(StreamStep::Done(Disposition::Acknowledge));
    };
    let Some(registration) = view.latest_registration(tenant, execution)? else {
        return Ok(StreamStep::Done(Disposition::Retry(
            RetryReason::RegistrationMissing,
        )));
    };
    // TPF builds the identity and binds it outside its decoder's `try`, so a refusal (an
    // await of another execution than the registration's) fails the record.
    let Some(binding) = bind(&registration, [tenant, execution, interaction, correlation]) else {
        return Ok(StreamStep::Done(Disposition::Retry(
            RetryReason::NotBindable,
        )));
    };
    let then = if status == AwaitInteractionStatus::Completed.as_str() {
        AfterBind::Wake(binding.await_identity.clone())
    } else {
        AfterBind::Acknowledge
    };
    Ok(StreamStep::Bind {
        bindings: vec![binding],
        then,
    })
}

/// The BINDING of the interaction to the registration's generation; `None` when TPF's `bind`
/// refuses it (a blank id, an await of another execution than the registration's).
fn bind(
    registration: &CallbackRegistration,
    [tenant, execution, interaction, correlation]: [&str; 4],
) -> Option<CallbackBinding> {
    let identity = AwaitIdentity::new(
        Some(tenant),
        Some(execution),
        Some(interaction),
        Some(correlation),
        registration.checkpoint.generation,
    );
    identity.ok().and_then(|id| registration.bind(&id).ok())
}

/// A callback success to send: the binding's callback id, and the signal as the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub binding: CallbackBinding,
    pub signal: CallbackSignal,
}

impl Delivery {
    /// The provider's callback id: the durable callback id, or the Step Functions task token.
    pub fn callback_id(&self) -> &str {
        &self.binding.provider.callback_id
    }

    /// The result sent: `AwsDurableCallbackSignal`'s JSON, as TPF's mapper writes it.
    pub fn result_json(&self) -> String {
        serde_json::to_string(&self.signal).unwrap_or_default()
    }
}

/// What [`wake`] decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WakeStep {
    Done(Disposition),
    /// Send the callback success (Lambda durable functions:
    /// `SendDurableExecutionCallbackSuccess`; Step Functions: `SendTaskSuccess`), then
    /// [`settle`] with the provider's answer.
    Deliver(Box<Delivery>),
}

/// TPF's wake, in its order.
pub fn wake<V: HostView>(identity: &AwaitIdentity, view: &V) -> Result<WakeStep, V::Error> {
    use Disposition::{Acknowledge, Retry};
    let done = |d| Ok(WakeStep::Done(d));
    let Some(semantic) = view.await_checkpoint(identity)? else {
        return done(Retry(RetryReason::CheckpointMissing));
    };
    let same = semantic.tenant_id == identity.tenant_id
        && semantic.execution_id == identity.execution_id
        && semantic.interaction_id == identity.interaction_id
        && semantic.correlation_id == identity.correlation_id;
    if !same || semantic.status != AwaitInteractionStatus::Completed.as_str() {
        return done(Acknowledge);
    }
    let Some(binding) = view.binding(
        &identity.tenant_id,
        &identity.interaction_id,
        identity.generation,
    )?
    else {
        return done(Retry(RetryReason::BindingMissing));
    };
    // The generation fence: a newer generation bound this interaction, so this one's callback
    // belongs to a driver that was replaced.
    let latest = view.latest_binding_generation(&identity.tenant_id, &identity.interaction_id)?;
    if latest.is_some_and(|g| g != identity.generation) {
        return done(Acknowledge);
    }
    // Delivery evidence: this generation's callback was already answered.
    if view.delivered(&binding)? {
        return done(Acknowledge);
    }
    match CallbackSignal::new(identity, Some(&semantic.status)) {
        Ok(signal) => Ok(WakeStep::Deliver(Box::new(Delivery { binding, signal }))),
        // The status is `COMPLETED`, never blank; kept total rather than trusted.
        Err(_) => done(Acknowledge),
    }
}

/// The provider's answer to the send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendOutcome {
    Accepted,
    /// Refused as gone ([`crate::provider::callback_gone`]); the adapter then classified the
    /// provider's execution.
    Gone(ProviderState),
    /// Any other failure.
    Failed,
}

/// What to do after the send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// Write the DELIVERY row with this outcome (a row already there is no error), then
    /// acknowledge.
    Record(DeliveryOutcome),
    /// Start the next generation with this input; a start the provider accepted, or a name
    /// that already started, acknowledges, any other answer retries.
    Replace(ExecutionInput),
    Retry(RetryReason),
}

/// TPF's handling of the send's answer.
pub fn settle<V: HostView>(
    delivery: &Delivery,
    outcome: SendOutcome,
    view: &V,
) -> Result<Settle, V::Error> {
    Ok(match outcome {
        SendOutcome::Accepted => Settle::Record(DeliveryOutcome::CallbackAccepted),
        SendOutcome::Failed => Settle::Retry(RetryReason::SendFailed),
        SendOutcome::Gone(ProviderState::Succeeded) => {
            Settle::Record(DeliveryOutcome::ProviderStateSucceeded)
        }
        SendOutcome::Gone(ProviderState::Open | ProviderState::Unknown) => {
            Settle::Retry(RetryReason::ProviderUnsettled)
        }
        SendOutcome::Gone(ProviderState::Closed) => match replacement(&delivery.binding, view)? {
            Ok(input) => Settle::Replace(input),
            Err(why) => Settle::Retry(RetryReason::Replacement(why)),
        },
    })
}
