//! The Lambda durable functions backend's part of the commands.

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::diagnostic::Diagnostics;
use tpf_sfn_compiler::durable::Compiled;
use tpf_sfn_mapping::sfn::gateway_proof::{self, GatewaySubject};
use tpf_sfn_mapping::sfn::DriverFile;

use super::step_functions::unverified;
use super::CliBackend;
use crate::cli::Backend;
use crate::error::Error;
use crate::exit::Failure;

pub(super) fn compile_summary(out: &Compiled) -> Vec<String> {
    let m = &out.manifest;
    let mut lines = vec![
        format!(
            "compiled {} (release {}) for Lambda durable functions{}",
            m.identity.pipeline_id,
            m.identity.release_version,
            unverified(m.contract.verified)
        ),
        format!("  binding   {}", m.binding.kind),
        format!("  function  {}", m.function.name),
    ];
    for a in &m.contract.await_steps {
        lines.push(format!(
            "  await     step {} \"{}\"",
            a.step_index, a.authored_name
        ));
    }
    lines
}

/// The durable gateway driver program on the replay engine.
pub(super) struct LambdaDurable;

impl CliBackend for LambdaDurable {
    const NAME: Backend = Backend::LambdaDurable;

    fn check_usage(driver: Option<&std::path::Path>) -> Result<(), Failure> {
        match driver {
            Some(_) => Err(no_driver()),
            None => Ok(()),
        }
    }

    fn gateway_subject(
        input: &Input,
        driver: Option<DriverFile>,
    ) -> Result<Result<GatewaySubject, Diagnostics>, Failure> {
        if driver.is_some() {
            return Err(no_driver());
        }
        Ok(gateway_proof::durable_subject(input))
    }
}

/// `--driver` with the durable backend: a usage error.
fn no_driver() -> Failure {
    let hint =
        "drop --driver: the durable driver is the program the function runs, proven as compiled";
    Error::new(
        "USAGE",
        "--driver brings a Step Functions definition; the Lambda durable functions gateway driver has none",
    )
    .with_hint(hint)
    .into()
}
