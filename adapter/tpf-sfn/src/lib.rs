//! The tpf-sfn command line and everything that touches files, processes or AWS.
//!
//! The compiler and the mapping proof are pure libraries; this crate reads and writes files,
//! prints reports and maps outcomes to exit codes (0 success, 1 findings or drift, 2 usage or
//! input errors).

pub mod aws;
pub mod backend;
pub mod cli;
pub mod cmd;
pub mod exit;
pub mod host;
pub mod input;
pub mod output;
pub mod report;

// The wake path and the error type it shares with the commands: their own crate, which the
// Lambda functions link without this one.
pub use tpf_sfn_wakepath::{bridge, error, relay, sweep};

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};

/// Runs the CLI with `args` (including the program name) and returns the exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap exits 0 for --help/--version and 2 for usage errors; keep its choice.
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    if !matches!(
        cli.command,
        Command::Serve(_) | Command::Bridge(_) | Command::Relay(_) | Command::Dev(_)
    ) {
        end_quietly_on_a_closed_pipe();
    }
    let result = match &cli.command {
        Command::Compile(a) => cmd::compile::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Graph(a) => cmd::graph::run(a),
        Command::Init(a) => cmd::init::run(a),
        Command::MappingTest(a) => cmd::mapping::mapping_test(a),
        Command::Simulate(a) => cmd::mapping::simulate(a),
        Command::Tables {
            command: cli::TablesCommand::Create(a),
        } => cmd::tables::create(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Bridge(a) => cmd::bridge::run(a),
        Command::Relay(a) => cmd::relay::run(a),
        Command::Dev(a) => cmd::dev::run(a),
        Command::Deploy(a) => cmd::deploy::run(a),
        Command::Status(a) => cmd::status::run(a),
        Command::Releases(a) => cmd::releases::releases(a),
        Command::Prune(a) => cmd::releases::prune(a),
        Command::Completions { shell } => {
            clap_complete::generate(
                *shell,
                &mut Cli::command(),
                "tpf-sfn",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Some(text) = failure.report() {
                eprintln!("{text}");
            }
            failure.exit_code()
        }
    }
}

/// `tpf-sfn simulate | head -1`: once the reader is gone the command ends without a word, as
/// Unix tools do, instead of panicking in `println!` (Rust ignores SIGPIPE by default). The
/// long-running commands keep ignoring it: they write to sockets and logs, not to a reader of
/// their output.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal before any thread of this
    // process exists besides the main one; no handler runs Rust code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
