//! The sample the tools run when given no contract: TPF's restaurant-approval reference
//! pipeline and its release descriptor, compiled into the binary so the main job needs no files.

use crate::compile::Input;

pub const RESTAURANT_CONTRACT_FILE: &str = "restaurant-approval.pipeline-contract.json";
pub const RESTAURANT_RELEASE_FILE: &str = "restaurant-approval.pipeline-release.json";
pub const RESTAURANT_CONTRACT: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");
pub const RESTAURANT_RELEASE: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-release.json");

/// Compiler input for the bundled sample with the default configuration.
pub fn restaurant_input() -> Input<'static> {
    Input {
        contract_file: RESTAURANT_CONTRACT_FILE,
        contract: RESTAURANT_CONTRACT,
        release: Some((RESTAURANT_RELEASE_FILE, RESTAURANT_RELEASE)),
        ..Input::default()
    }
}
