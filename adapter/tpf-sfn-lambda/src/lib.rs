//! The wake path as Lambda functions, for an AWS deployment with no always-on process:
//!
//! - [`relay`]: the gateway binding's queue transport, SQS messages through the same
//!   per-message work as `tpf-sfn relay` (`tpf_sfn_wakepath::relay::gateway::GatewayRelay`),
//!   reporting partial batch failures (`ReportBatchItemFailures`): a message that failed comes
//!   back, the others are not redelivered;
//! - [`durable`]: a release's durable driver function, the driver loop of
//!   `tpf_durable_driver` on AWS's durable execution SDK;
//! - [`gateway`]: the gateway host's wake-up, reconciler and starter
//!   (`tpf_sfn_wakepath::gateway`).
//!
//! [`config`] reads the functions' environment.

pub mod config;
pub mod durable;
pub mod gateway;
pub mod relay;
