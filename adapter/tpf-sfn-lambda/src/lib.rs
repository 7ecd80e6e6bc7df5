//! The wake path as Lambda functions, for an AWS deployment with no always-on process:
//!
//! - [`bridge`]: DynamoDB Streams records of TPF's execution table and of the wakeup table, as
//!   two event source mappings deliver them, through the same per-record work as
//!   `tpf-sfn bridge` (`tpf_sfn_wakepath::bridge::RecordHandler`, whose decisions are
//!   `tpf_sfn_wakeup::bridge::decide`);
//! - [`relay`]: the queue binding's SQS messages through the same per-message work as
//!   `tpf-sfn relay` (`tpf_sfn_wakepath::relay::TaskRelay`, answering with
//!   `tpf_sfn_wakeup::relay::answer`).
//!
//! Both report partial batch failures (`ReportBatchItemFailures`): a record that failed comes
//! back, the others are not redelivered. [`config`] reads the functions' environment.
//!
//! - [`durable`]: a release's durable driver function, the driver loop of
//!   `tpf_durable_driver` on AWS's durable execution SDK;
//! - [`sweeper`]: a release's scheduled durable sweeper (`tpf_sfn_wakepath::sweep`);
//! - [`gateway`]: the gateway host's wake-up, reconciler and starter
//!   (`tpf_sfn_wakepath::gateway`).

pub mod bridge;
pub mod config;
pub mod durable;
pub mod gateway;
pub mod relay;
pub mod sweeper;
