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
    /// Prove the mapping: run the contract's scenario matrix against its driver and check every invariant (a CI gate).
    MappingTest(MappingTestArgs),
    /// Run one scenario in virtual time and print its trace and metrics.
    Simulate(SimulateArgs),
    /// Deploy a compiled release (--out DIR) as Step Functions machines; idempotent, never changes a deployed definition unless forced.
    Deploy(DeployArgs),
    /// Show one TPF execution next to its driver generations, with a divergence verdict.
    Status(StatusArgs),
    /// List deployed release machines (found by their tpf-sfn:* tags) with identity, definition hash and open executions.
    Releases(ReleasesArgs),
    /// Delete release machines with no RUNNING executions that are not active in TPF's release registry (dry run unless --yes).
    Prune(PruneArgs),
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
    /// Also write an infrastructure-as-code export: cloudformation.json or main.tf.json (role,
    /// both machines, the sweeper's schedule). Repeat for both.
    #[arg(long, value_enum)]
    pub emit: Vec<Emit>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    Cloudformation,
    Terraform,
}

impl From<Emit> for tpf_sfn_compiler::export::Kind {
    fn from(e: Emit) -> Self {
        match e {
            Emit::Cloudformation => tpf_sfn_compiler::export::Kind::CloudFormation,
            Emit::Terraform => tpf_sfn_compiler::export::Kind::Terraform,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// Output directory of `tpf-sfn compile` (manifest.json and the definitions).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// IAM role the machines run as (the compiled policies attach to it).
    #[arg(long, required_unless_present = "dry_run")]
    pub role_arn: Option<String>,
    /// Role EventBridge Scheduler assumes to start the sweeper (states:StartExecution on it).
    /// With it, deploy also creates or updates the sweeper's schedule; without it the schedule
    /// is left to `compile --emit cloudformation|terraform`.
    #[arg(long)]
    pub schedule_role_arn: Option<String>,
    /// Print the plan (create / unchanged / update / refuse) and the diff; make no write calls.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace the definition of an existing release machine. Running executions keep the old
    /// definition; new generations get the new one.
    #[arg(long)]
    pub force_replace: bool,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Output directory of the release the execution is pinned to.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// TPF tenant id.
    #[arg(long)]
    pub tenant: String,
    /// TPF execution id (also the driver's execution name).
    #[arg(long)]
    pub execution: String,
    /// TPF's execution table.
    #[arg(long, default_value = "tpf_execution")]
    pub execution_table: String,
    /// The adapter's wakeup table; the manifest's when omitted.
    #[arg(long)]
    pub wakeup_table: Option<String>,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct ReleasesArgs {
    /// Only machines whose names start with this (e.g. the configured name-prefix).
    #[arg(long)]
    pub name_prefix: Option<String>,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// Only machines whose names start with this (e.g. the configured name-prefix).
    #[arg(long)]
    pub name_prefix: Option<String>,
    /// TPF's release registry table; releases active there are kept. A missing table protects nothing.
    #[arg(long, default_value = "tpf_release_registry")]
    pub registry_table: String,
    /// Delete; without it prune only prints what it would delete.
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
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

#[derive(Debug, clap::Args)]
pub struct MappingTestArgs {
    /// The pipeline contract whose driver is proven.
    pub contract: PathBuf,
    #[arg(long)]
    pub release: Option<PathBuf>,
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Action binding; overrides the config file.
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// Prove this driver definition (compiled earlier, or post-processed, e.g. by CDK) instead of compiling one.
    #[arg(long)]
    pub driver: Option<PathBuf>,
    /// Directory of hand-written scenarios (*.toml), run next to the derived matrix.
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Directory of trace snapshots: written, or compared with --check.
    #[arg(long)]
    pub snapshots: Option<PathBuf>,
    /// Fail when a trace differs from its snapshot (needs --snapshots); writes nothing.
    #[arg(long)]
    pub check: bool,
    /// Accept a contract whose contractHash does not match.
    #[arg(long)]
    pub allow_unverified_hash: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The pipeline contract; the bundled restaurant-approval sample when omitted.
    pub contract: Option<PathBuf>,
    #[arg(long)]
    pub release: Option<PathBuf>,
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// Scenario name from the derived matrix (see `--list`).
    #[arg(long, default_value = "happy-path")]
    pub scenario: String,
    /// List the scenario names and exit.
    #[arg(long)]
    pub list: bool,
    #[arg(long)]
    pub allow_unverified_hash: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}
