//! The wake path's decisions, one copy each, run by the real bridge and relay (processes and
//! Lambda handlers) and by the mapping proof:
//!
//! - [`bridge`]: a change to a TPF execution record or a wakeup-table row in, the driver starts
//!   and wakeups to perform out;
//! - [`relay`]: an Action API reply in, the answer to the driver's task token out;
//! - [`gateway_relay`]: the gateway's answer to a relayed invoke in (the queue transport), the
//!   answer to the driver's task token out, or nothing for a parking call that succeeded;
//! - [`sweeper`]: a due execution TPF's sweep listed in, whether to wake its parked driver or
//!   start a recovery lineage out (the sweeper state machine's choices, for a sweeper function).
//!
//! TPF's own host protocol on TPF's tables, for both backends (`docs/gateway.md`):
//!
//! - [`wake`]: a record of TPF's await-interaction stream or of the callback-binding table's
//!   stream in, TPF's disposition out (bind, deliver the callback signal, acknowledge, retry),
//!   and what to do with the provider's answer to the send;
//! - [`reconcile`]: a driver execution's status change in, nothing or the next generation out;
//! - [`replacement`]: the next generation's start input, from TPF's semantic checkpoint;
//! - [`provider`]: what each backend's adapter derives from its provider (a gone callback, the
//!   callback's state from the execution's history, the driver's state);
//! - [`view`]: the reads those decisions make, as one trait.
//!
//! Pure functions: no I/O, no clock.

pub mod bridge;
pub mod gateway_relay;
pub mod provider;
pub mod reconcile;
pub mod relay;
pub mod replacement;
pub mod sweeper;
pub mod view;
pub mod wake;
