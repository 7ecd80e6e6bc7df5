//! The Step Functions backend's part of the commands.

use tpf_sfn_compiler::sfn::Compiled;
use tpf_sfn_mapping::scenario::Metrics;
use tpf_sfn_mapping::sfn::{DriverFile, Machines, Subject};

use super::CliBackend;
use crate::cli::MappingTestArgs;
use crate::error::Error;
use crate::exit::Failure;
use crate::input::read;

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
        match (&m.machines.sweeper, m.machines.without_sweeper) {
            (Some(s), _) => format!(
                "  sweeper   {}  (schedule {})",
                s.name,
                s.schedule.as_deref().unwrap_or("-")
            ),
            (None, why) => format!("  sweeper   none: {}", why.unwrap_or("-")),
        },
    ];
    for a in &m.contract.await_steps {
        lines.push(format!(
            "  await     step {} \"{}\" → state \"{}\"",
            a.step_index, a.authored_name, a.state_name
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

/// The compiled state machines on the ASL interpreter.
pub(super) struct StepFunctions;

impl CliBackend for StepFunctions {
    type Proof = Machines;

    fn check_usage(args: &MappingTestArgs) -> Result<(), Failure> {
        if args.spec.is_some() {
            return Err(Error::new(
                "USAGE",
                "--spec takes a durable driver spec; the step-functions backend proves a state machine",
            )
            .with_hint("pass --backend lambda-durable, or --driver driver.asl.json")
            .into());
        }
        Ok(())
    }

    fn replacement(args: &MappingTestArgs) -> Result<Option<DriverFile>, Failure> {
        match &args.driver {
            Some(p) => Ok(Some(DriverFile {
                file: p.display().to_string(),
                bytes: read(p)?,
            })),
            None => Ok(None),
        }
    }

    fn program_label(args: &MappingTestArgs) -> String {
        format!(
            "driver {}",
            args.driver
                .as_ref()
                .map_or("compiled".to_string(), |p| p.display().to_string())
        )
    }

    const JSON_NAMES_BACKEND: bool = false;
    const STATICALLY_JUDGED: &'static str = "the driver";

    fn report_figures(m: &Metrics) -> String {
        format!(
            "{:>5} transitions {:>6} events",
            m.state_transitions, m.history_events
        )
    }

    fn runs_on(subject: &Subject) -> String {
        format!("driver {}", subject.program.sfn.machines.driver)
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
        Ok(tpf_sfn_mapping::sfn::gateway_proof::subject(input, driver))
    }

    fn totals(m: &Metrics, simulated: &str) -> String {
        format!(
            "{} state transitions, {} history events, {} action calls, {} generation(s), {simulated} simulated",
            m.state_transitions, m.history_events, m.action_calls, m.generations,
        )
    }
}
