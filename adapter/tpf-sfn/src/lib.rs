//! The tpf-sfn command line and everything that touches files, processes or AWS.
//!
//! The compiler and the mapping proof are pure libraries; this crate reads and writes files,
//! prints reports and maps outcomes to exit codes (0 success, 1 findings or drift, 2 usage or
//! input errors).

pub mod aws;
pub mod backend;
pub mod cli;
pub mod cmd;
#[cfg(feature = "aws")]
pub mod emulator;
pub mod exit;
pub mod features;
#[cfg(feature = "aws")]
pub mod host;
pub mod input;
pub mod output;
pub mod report;
pub mod stdio;
pub mod usage;

// The wake path and the error type it shares with the commands: their own crate, which the
// Lambda functions link without this one.
pub use tpf_sfn_wakepath::error;
#[cfg(feature = "aws")]
pub use tpf_sfn_wakepath::relay;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};

/// Runs the CLI with `args` (including the program name) and returns the exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => exit::end(cli.command.format(), dispatch(&cli.command)),
        Err(e) => exit::end(usage::format_asked(&args), usage::failure(&e)),
    }
}

fn dispatch(command: &Command) -> exit::CmdResult {
    match command {
        Command::Compile(a) => cmd::compile::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Graph(a) => cmd::graph::run(a),
        Command::Init(a) => cmd::init::run(a),
        Command::MappingTest(a) => cmd::mapping::mapping_test(a),
        Command::Simulate(a) => cmd::mapping::simulate(a),
        #[cfg(feature = "aws")]
        Command::Tables {
            command: cli::TablesCommand::Create(a),
        } => cmd::tables::create(a),
        #[cfg(feature = "aws")]
        Command::Serve(a) => cmd::serve::run(a),
        #[cfg(feature = "aws")]
        Command::Relay(a) => cmd::relay::run(a),
        #[cfg(feature = "aws")]
        Command::Dev(a) => cmd::dev::run(a),
        #[cfg(feature = "aws")]
        Command::Deploy(a) => cmd::deploy::run(a),
        #[cfg(feature = "aws")]
        Command::Status(a) => cmd::status::run(a),
        #[cfg(feature = "aws")]
        Command::Releases(a) => cmd::releases::releases(a),
        #[cfg(feature = "aws")]
        Command::Prune(a) => cmd::releases::prune(a),
        // Built without AWS: the commands still parse (the surface is the same in every build)
        // and say which feature they need.
        #[cfg(not(feature = "aws"))]
        Command::Tables { .. }
        | Command::Serve(_)
        | Command::Relay(_)
        | Command::Dev(_)
        | Command::Deploy(_)
        | Command::Status(_)
        | Command::Releases(_)
        | Command::Prune(_) => Err(features::aws_off(command.name()).into()),
        Command::Completions { shell } => {
            // Generated into memory first: the generator panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "tpf-sfn", &mut script);
            stdio::write_bytes(stdio::Stream::Out, &script);
            Ok(())
        }
    }
}
