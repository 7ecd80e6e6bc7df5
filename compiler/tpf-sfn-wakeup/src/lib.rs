//! The wake path's decisions, one copy each, run by the real relay, wake-up and reconciler
//! (processes and Lambda handlers) and by the mapping proof:
//!
//! - [`relay`]: a call's reply in, the answer to the driver's task token out;
//! - [`gateway_relay`]: the gateway's answer to a relayed invoke in (the queue transport), the
//!   answer to the driver's task token out, or nothing for a parking call that succeeded;
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

pub mod gateway_relay;
pub mod provider;
pub mod reconcile;
pub mod relay;
pub mod replacement;
pub mod view;
pub mod wake;
