//! The action host's fixtures for the in-process server tests.

use tpf_sfn::host::pipeline::{self, HostedPipeline};

/// The bundled restaurant contract as `serve` hosts it (30-minute await deadline).
pub fn restaurant() -> HostedPipeline {
    hosted("restaurant-approval.pipeline-contract.json")
}

/// Today's Restaurant Approval contract as `serve` hosts it.
#[allow(dead_code)] // not every test binary that includes `support` uses it
pub fn restaurant_current() -> HostedPipeline {
    hosted("restaurant-approval-current.pipeline-contract.json")
}

fn hosted(file: &str) -> HostedPipeline {
    let path = format!(
        "{}/../../examples/contracts/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("contract");
    pipeline::load(&path, &bytes, &[], None, 30 * 60 * 1000).expect("pipeline")
}
