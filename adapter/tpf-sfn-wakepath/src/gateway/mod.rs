//! TPF's gateway host on AWS: the deployed pieces that run `tpf_sfn_wakeup`'s decisions
//! (`wake`, `reconcile`, `replacement`) against TPF's action gateway, TPF's callback-binding
//! table and the drivers' providers (Step Functions, Lambda durable functions).
//!
//! - [`invoke`]: calling the gateway (Lambda `Invoke` on its numbered version; `serve`'s local
//!   route for the local loop);
//! - [`bindings`]: the callback-binding table (consistent reads, conditional puts, the
//!   provider-ARN index);
//! - [`reads`]: the decisions' [`HostView`](tpf_sfn_wakeup::view::HostView) over those, for
//!   asynchronous reads;
//! - [`provider`]: the callback send, the callback's and the driver's state, a driver's input;
//! - [`starter`]: starting a driver generation by TPF's recipe (TPF's ingress);
//! - [`wakeup`]: one stream record of TPF's await-interaction table or of the binding table;
//! - [`reconciler`]: one driver status-change event;
//! - [`local`]: the streams and the status changes polled by a process (the local loop).

pub mod bindings;
pub mod invoke;
pub mod local;
pub mod provider;
pub mod reads;
pub mod reconciler;
pub mod starter;
pub mod wakeup;

/// `GATEWAY_HOST_…`: the codes of the wake-up, reconciler and starter functions.
const SCOPE: &str = "GATEWAY_HOST";
