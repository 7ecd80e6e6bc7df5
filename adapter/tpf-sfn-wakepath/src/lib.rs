//! The wake path on AWS, shared by the command line (`tpf-sfn bridge`, `relay`, `status`, …)
//! and the Lambda functions' bootstrap (`tpf-sfn-lambda`): the bridge (TPF record changes to
//! driver starts and wakeups), the relay (the queue binding's Action API calls and their task
//! tokens' answers), the durable sweeper, and what they stand on — the adapter's error type,
//! the classification of AWS failures and TPF's table layout.
//!
//! Its own crate so that the functions' zip links neither the command line nor the proof.

pub mod aws;
pub mod bridge;
pub mod error;
pub mod gateway;
pub mod relay;
pub mod sweep;
