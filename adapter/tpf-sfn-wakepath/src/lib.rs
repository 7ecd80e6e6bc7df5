//! The wake path on AWS, shared by the command line (`tpf-sfn bridge`, `relay`, `status`, …)
//! and the Lambda functions' bootstrap (`tpf-sfn-lambda`): the bridge (TPF record changes to
//! driver starts and wakeups), the relay (the queue binding's Action API calls and their task
//! tokens' answers), the durable sweeper, the Action API token read from SSM at run time, and what they stand on — the adapter's error type,
//! the classification of AWS failures and TPF's table layout.
//!
//! Its own crate so that the functions' zip links neither the command line nor the proof.
//! Everything that links the AWS SDK is behind the `aws` feature (on by default): without it the
//! crate is the error type and TPF's table names, all the command line's offline build needs.

#[cfg(feature = "aws")]
pub mod action_token;
pub mod aws;
#[cfg(feature = "aws")]
pub mod bridge;
pub mod error;
#[cfg(feature = "aws")]
pub mod gateway;
#[cfg(feature = "aws")]
pub mod relay;
#[cfg(feature = "aws")]
pub mod sweep;
