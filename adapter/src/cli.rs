//! The command line surface. One definition drives parsing, `--help` and shell completions.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use tpf_sfn_compiler::config::BindingKind;

#[derive(Debug, Parser)]
#[command(
    name = "tpf-sfn",
    version,
    about = "Compile TPF pipeline contracts into AWS Step Functions wakeup drivers, validate them, and prove the mapping",
    long_about = "tpf-sfn turns TPF's generated pipeline-contract.json into Step Functions state machines that act as durable wakeup drivers: they call TPF's single-shot actions and never decide an outcome. TPF's records stay authoritative.\n\nExit codes: 0 success, 1 findings or drift, 2 usage or input errors."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Binding {
    Http,
    Lambda,
    Queue,
}

impl From<Binding> for BindingKind {
    fn from(b: Binding) -> Self {
        match b {
            Binding::Http => BindingKind::Http,
            Binding::Lambda => BindingKind::Lambda,
            Binding::Queue => BindingKind::Queue,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a contract into the driver and sweeper definitions, IAM policies, graph and manifest.
    Compile(CompileArgs),
    /// Validate Step Functions definitions (any ASL file, not only ours) with coded diagnostics.
    Validate(ValidateArgs),
    /// Print a Mermaid graph of a contract's driver, or of any ASL definition.
    Graph(GraphArgs),
    /// Write an annotated default driver configuration (tpf-sfn.toml).
    Init(InitArgs),
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// TPF's META-INF/pipeline/pipeline-contract.json.
    pub contract: PathBuf,
    /// pipeline-release.json; without it the release version is the contract version, as in TPF.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Driver configuration (TOML). Without it the embedded defaults apply.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output directory for this release's files.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Action binding; overrides the config file.
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// Accept a contract whose contractHash does not match (recorded as unverified in the manifest).
    #[arg(long)]
    pub allow_unverified_hash: bool,
    /// Compare with the files already in --out and fail on any difference; writes nothing.
    #[arg(long)]
    pub check: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// ASL files, or directories searched for *.asl.json files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Most history events one execution may emit.
    #[arg(long, default_value_t = 25_000)]
    pub event_limit: u64,
    /// Treat the files as tpf-sfn drivers (JSONPath without variables is then an error).
    #[arg(long)]
    pub driver_profile: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// A pipeline contract (its compiled driver is drawn) or an ASL definition.
    pub input: PathBuf,
    /// Binding to compile with when the input is a contract.
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// Accept a contract whose contractHash does not match.
    #[arg(long)]
    pub allow_unverified_hash: bool,
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Where to write the file.
    #[arg(default_value = "tpf-sfn.toml")]
    pub path: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}
