//! The Lambda durable functions backend's part of the commands.

use std::path::Path;

use tpf_durable_driver::DurableSpec;
use tpf_sfn_compiler::durable::Compiled;
use tpf_sfn_mapping::durable::{Driver, Subject};
use tpf_sfn_mapping::proof::Backend;
use tpf_sfn_mapping::scenario::Metrics;

use super::step_functions::unverified;
use super::CliBackend;
use crate::cli::MappingTestArgs;
use crate::error::Error;
use crate::exit::Failure;
use crate::input::read;

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
        format!(
            "  function  {}  (≤{} operations per generation, hands over after {} calls)",
            m.function.name, m.function.operation_budget, m.function.max_iterations
        ),
    ];
    for a in &m.contract.await_steps {
        lines.push(format!(
            "  await     step {} \"{}\" → callback \"{}\"",
            a.step_index, a.authored_name, a.state_name
        ));
    }
    lines
}

/// The durable driver program on the replay engine.
pub(super) struct LambdaDurable;

impl CliBackend for LambdaDurable {
    type Proof = Driver;

    fn check_usage(args: &MappingTestArgs) -> Result<(), Failure> {
        if args.driver.is_some() {
            return Err(Error::new(
                "USAGE",
                "--driver takes a Step Functions definition; the lambda-durable backend proves a durable driver spec",
            )
            .with_hint("pass --spec driver.durable.json, or --backend step-functions")
            .into());
        }
        Ok(())
    }

    fn replacement(args: &MappingTestArgs) -> Result<Option<DurableSpec>, Failure> {
        args.spec.as_deref().map(read_spec).transpose()
    }

    fn program_label(args: &MappingTestArgs) -> String {
        format!(
            "backend {}, spec {}",
            Backend::LambdaDurable.as_str(),
            args.spec
                .as_ref()
                .map_or("compiled".to_string(), |p| p.display().to_string())
        )
    }

    const JSON_NAMES_BACKEND: bool = true;
    const STATICALLY_JUDGED: &'static str = "the durable driver's spec";

    fn report_figures(m: &Metrics) -> String {
        format!(
            "{:>5} operations {:>4} invocations",
            m.operations, m.invocations
        )
    }

    fn runs_on(subject: &Subject) -> String {
        format!("durable driver function {}", subject.program.function)
    }

    fn gateway_subject(
        input: &tpf_sfn_compiler::compile::Input,
        driver: Option<tpf_sfn_mapping::sfn::DriverFile>,
    ) -> Result<
        Result<
            Option<tpf_sfn_mapping::sfn::gateway_proof::GatewaySubject>,
            tpf_sfn_compiler::diagnostic::Diagnostics,
        >,
        Failure,
    > {
        if driver.is_some() {
            let hint = "drop --driver: the durable driver is the program the function runs, proven as compiled";
            return Err(Error::new(
                "USAGE",
                "--driver brings a Step Functions definition; the Lambda durable functions gateway driver has none",
            )
            .with_hint(hint)
            .into());
        }
        Ok(tpf_sfn_mapping::sfn::gateway_proof::durable_subject(input))
    }

    fn totals(m: &Metrics, simulated: &str) -> String {
        format!(
            "{} operations, {} invocations ({} replayed operations), {} history events, {} action calls, {} generation(s), {simulated} simulated",
            m.operations,
            m.invocations,
            m.replayed_operations,
            m.history_events,
            m.action_calls,
            m.generations,
        )
    }
}

/// A durable driver spec the user passes: the function's own format, every field known.
fn read_spec(path: &Path) -> Result<DurableSpec, Failure> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(
            "DURABLE_SPEC_INVALID",
            format!("{} is not a durable driver spec: {e}", path.display()),
        )
        .with_hint(
            "pass the driver.durable.json that `tpf-sfn compile --backend lambda-durable` writes",
        )
        .into()
    })
}
