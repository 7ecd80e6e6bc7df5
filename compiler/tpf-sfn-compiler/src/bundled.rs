//! The samples compiled into the binary, so the main job needs no files. The tools run today's
//! restaurant-approval (as today's split-repository TPF generates it: 3 steps, the await a
//! `deferredCompletion` on step 1) when given no contract; August 2026's restaurant-approval
//! (TPF `a7f169b`: 4 steps, a `kind: "await"` step at index 2) stays as the second example the
//! proof's own tests pin.

use crate::compile::Input;

pub const RESTAURANT_CONTRACT_FILE: &str = "restaurant-approval-current.pipeline-contract.json";
pub const RESTAURANT_RELEASE_FILE: &str = "restaurant-approval-current.pipeline-release.json";
pub const RESTAURANT_CONTRACT: &[u8] = include_bytes!(
    "../../../examples/contracts/restaurant-approval-current.pipeline-contract.json"
);
pub const RESTAURANT_RELEASE: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval-current.pipeline-release.json");

pub const AUGUST_RESTAURANT_CONTRACT_FILE: &str = "restaurant-approval.pipeline-contract.json";
pub const AUGUST_RESTAURANT_RELEASE_FILE: &str = "restaurant-approval.pipeline-release.json";
pub const AUGUST_RESTAURANT_CONTRACT: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");
pub const AUGUST_RESTAURANT_RELEASE: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-release.json");

/// Compiler input for the bundled sample (today's restaurant-approval) with the default
/// configuration.
pub fn restaurant_input() -> Input<'static> {
    with_release(
        (RESTAURANT_CONTRACT_FILE, RESTAURANT_CONTRACT),
        (RESTAURANT_RELEASE_FILE, RESTAURANT_RELEASE),
    )
}

/// Compiler input for August 2026's restaurant-approval with the default configuration.
pub fn august_restaurant_input() -> Input<'static> {
    with_release(
        (AUGUST_RESTAURANT_CONTRACT_FILE, AUGUST_RESTAURANT_CONTRACT),
        (AUGUST_RESTAURANT_RELEASE_FILE, AUGUST_RESTAURANT_RELEASE),
    )
}

fn with_release(
    (contract_file, contract): (&'static str, &'static [u8]),
    release: (&'static str, &'static [u8]),
) -> Input<'static> {
    Input {
        contract_file,
        contract,
        release: Some(release),
        ..Input::default()
    }
}
