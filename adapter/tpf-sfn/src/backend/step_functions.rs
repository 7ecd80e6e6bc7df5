//! The Step Functions backend's part of the commands.

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::diagnostic::Diagnostics;
use tpf_sfn_compiler::sfn::Compiled;
use tpf_sfn_mapping::sfn::gateway_proof::{self, GatewaySubject};
use tpf_sfn_mapping::sfn::DriverFile;

use super::CliBackend;
use crate::cli::Backend;
use crate::exit::Failure;

pub(super) fn compile_summary(out: &Compiled) -> Vec<String> {
    let m = &out.manifest;
    let mut lines = vec![
        format!(
            "compiled {} (release {}){}",
            m.identity.pipeline_id,
            m.identity.release_version,
            unverified(m.contract.verified)
        ),
        format!("  binding   {}", m.binding.kind),
        format!(
            "  driver    {}  ({} states, ≤{} history events, rolls over after {} loop iterations)",
            m.machines.driver.name,
            m.machines.driver.states,
            m.machines.driver.max_history_events.unwrap_or_default(),
            m.machines.driver.max_loop_iterations.unwrap_or_default()
        ),
        format!("  sweep     {}", m.machines.without_sweeper),
    ];
    for a in &m.contract.await_steps {
        lines.push(format!(
            "  await     step {} \"{}\" → state \"{}\"",
            a.step_index,
            a.authored_name,
            a.state_name.as_deref().unwrap_or_default()
        ));
    }
    lines
}

/// The mark a release compiled from an unverified contract carries.
pub(super) fn unverified(verified: bool) -> &'static str {
    if verified {
        ""
    } else {
        " — contract hash UNVERIFIED"
    }
}

/// The compiled state machine on the ASL interpreter.
pub(super) struct StepFunctions;

impl CliBackend for StepFunctions {
    const NAME: Backend = Backend::StepFunctions;

    fn check_usage(_: Option<&std::path::Path>) -> Result<(), Failure> {
        Ok(())
    }

    fn gateway_subject(
        input: &Input,
        driver: Option<DriverFile>,
    ) -> Result<Result<GatewaySubject, Diagnostics>, Failure> {
        Ok(gateway_proof::subject(input, driver))
    }
}
