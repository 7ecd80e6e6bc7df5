//! The wake path on AWS, shared by the command line (`tpf-sfn relay`, `dev`, `status`, …) and
//! the Lambda functions' bootstrap (`tpf-sfn-lambda`): the gateway host (wake-up, reconciler,
//! starter), the relay (the gateway binding's queue transport and its task tokens' answers),
//! where drivers run, and what they stand on — the adapter's error type, the classification of
//! AWS failures and TPF's table layout.
//!
//! Its own crate so that the functions' zip links neither the command line nor the proof.
//! Everything that links the AWS SDK is behind the `aws` feature (on by default): without it the
//! crate is the error type and TPF's table names, all the command line's offline build needs.

pub mod aws;
#[cfg(feature = "aws")]
pub mod drivers;
pub mod error;
#[cfg(feature = "aws")]
pub mod gateway;
#[cfg(feature = "aws")]
pub mod relay;
