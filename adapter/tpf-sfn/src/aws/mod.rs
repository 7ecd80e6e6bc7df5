//! Everything that talks to AWS. Clients come from the standard AWS config chain (environment,
//! profiles, `AWS_ENDPOINT_URL*`), with explicit overrides from the command line.
//!
//! The logic takes SDK clients as parameters (tests hand in mocked ones); only the commands in
//! `cmd/` build clients from a [`client::Connection`].
//!
//! All of it is behind the `aws` feature but the connection flags, which every build's command
//! line takes (the surface is the same with or without the SDK).

pub mod client;
#[cfg(feature = "aws")]
pub mod deploy;
#[cfg(feature = "aws")]
pub mod durable_deploy;
#[cfg(feature = "aws")]
pub mod dynamo_item;
#[cfg(feature = "aws")]
pub mod dynamo_store;
#[cfg(feature = "aws")]
pub mod plan;
#[cfg(feature = "aws")]
pub mod release;
#[cfg(feature = "aws")]
pub mod releases;
#[cfg(feature = "aws")]
#[cfg(feature = "aws")]
pub mod status;

#[cfg(feature = "aws")]
pub use tpf_sfn_wakepath::aws::{errors, tables};

#[cfg(feature = "aws")]
/// Runs one command's AWS work on a single-threaded runtime: the CLI stays synchronous.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, crate::exit::Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            crate::error::Error::new("RUNTIME", "cannot start the async runtime")
                .with_source(e)
                .with_hint("the machine is out of threads or memory; free some and run again")
        })?;
    Ok(rt.block_on(f))
}
