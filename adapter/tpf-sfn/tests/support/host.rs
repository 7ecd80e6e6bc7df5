//! The action host's fixtures for the in-process server tests.

use tpf_sfn::host::pipeline::{self, HostedPipeline};

/// The bundled restaurant contract as `serve` hosts it (30-minute await deadline).
pub fn restaurant() -> HostedPipeline {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/contracts/restaurant-approval.pipeline-contract.json"
    );
    let bytes = std::fs::read(path).expect("contract");
    pipeline::load(path, &bytes, &[], None, 30 * 60 * 1000).expect("pipeline")
}
