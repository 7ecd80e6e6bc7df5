//! Everything that talks to AWS. Clients come from the standard AWS config chain (environment,
//! profiles, `AWS_ENDPOINT_URL*`), with explicit overrides from the command line.
//!
//! The logic takes SDK clients as parameters (tests hand in mocked ones); only the commands in
//! `cmd/` build clients from a [`client::Connection`].

pub mod client;
pub mod deploy;
pub mod durable_deploy;
pub mod dynamo_item;
pub mod dynamo_store;
pub mod plan;
pub mod release;
pub mod releases;
pub mod schedule;
pub mod status;

pub use tpf_sfn_wakepath::aws::{errors, tables};

/// Runs one command's AWS work on a single-threaded runtime: the CLI stays synchronous.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, crate::exit::Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            crate::error::Error::new("RUNTIME", "cannot start the async runtime").with_source(e)
        })?;
    Ok(rt.block_on(f))
}
