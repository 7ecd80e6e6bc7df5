//! The command line surface. One definition drives parsing, `--help` and shell completions.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use tpf_sfn_compiler::config::BindingKind;
pub use tpf_sfn_compiler::Backend;

use crate::aws::client::Connection;

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
    // Action API v1's, retired: still parsed, so that naming one gets the compiler's coded
    // refusal (`ACTION_API_V1_RETIRED`) rather than clap's "invalid value".
    #[value(hide = true)]
    Http,
    #[value(hide = true)]
    Lambda,
    #[value(hide = true)]
    Queue,
    // TPF's action gateway (its ARNs from `[binding.gateway]` in the config file); a plain
    // comment, so that the help keeps its one-line form.
    Gateway,
}

impl From<Binding> for BindingKind {
    fn from(b: Binding) -> Self {
        match b {
            Binding::Http => BindingKind::Http,
            Binding::Lambda => BindingKind::Lambda,
            Binding::Queue => BindingKind::Queue,
            Binding::Gateway => BindingKind::Gateway,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a contract into the driver definition, its IAM policy, graph and manifest.
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
    /// Manage TPF's DynamoDB tables and the adapter's wakeup table.
    Tables {
        #[command(subcommand)]
        command: TablesCommand,
    },
    /// Run the reference action host: Action API v1 plus TPF's control-plane and admin routes.
    Serve(ServeArgs),
    /// Run the queue relay: the gateway binding's queue transport → TPF's action gateway → SendTaskSuccess/Failure.
    Relay(RelayArgs),
    /// The whole loop in one command, against an endpoint (e.g. moto): create tables and the
    /// gateway queue, compile (gateway binding, queue transport) and deploy, then run the host
    /// (TPF's gateway), the gateway wake-up and the relay; with `--backend lambda-durable`, the
    /// durable driver function on AWS's durable execution emulator instead.
    Dev(DevArgs),
    /// Deploy a compiled release (--out DIR) as Step Functions machines; idempotent, never changes a deployed definition unless forced.
    Deploy(DeployArgs),
    /// Show one TPF execution next to its driver generations, with a divergence verdict.
    ///
    /// The release is a gateway release (its generations carry TPF's own names, `tpf-…`);
    /// TPF's execution table is named by --prefix and --table.
    Status(StatusArgs),
    /// List deployed release machines (found by their tpf-sfn:* tags) with identity, definition hash and open executions.
    Releases(ReleasesArgs),
    /// Delete release machines with no RUNNING executions that are not active in TPF's release registry (dry run unless --yes).
    ///
    /// The registry is TPF's release-table, named by --prefix and --table; releases active there
    /// are kept, and a missing registry protects nothing.
    Prune(PruneArgs),
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

impl Command {
    /// The command as typed after `tpf-sfn` (`tables create`, `deploy`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Compile(_) => "compile",
            Command::Validate(_) => "validate",
            Command::Graph(_) => "graph",
            Command::Init(_) => "init",
            Command::MappingTest(_) => "mapping-test",
            Command::Simulate(_) => "simulate",
            Command::Tables {
                command: TablesCommand::Create(_),
            } => "tables create",
            Command::Serve(_) => "serve",
            Command::Relay(_) => "relay",
            Command::Dev(_) => "dev",
            Command::Deploy(_) => "deploy",
            Command::Status(_) => "status",
            Command::Releases(_) => "releases",
            Command::Prune(_) => "prune",
            Command::Completions { .. } => "completions",
        }
    }

    /// The output format the command was asked for (its errors follow it).
    pub fn format(&self) -> Format {
        match self {
            Command::Compile(a) => a.format,
            Command::Validate(a) => a.format,
            Command::MappingTest(a) => a.format,
            Command::Simulate(a) => a.format,
            Command::Tables {
                command: TablesCommand::Create(a),
            } => a.format,
            Command::Dev(a) => a.format,
            Command::Deploy(a) => a.format,
            Command::Status(a) => a.format,
            Command::Releases(a) => a.format,
            Command::Prune(a) => a.format,
            Command::Graph(_)
            | Command::Init(_)
            | Command::Serve(_)
            | Command::Relay(_)
            | Command::Completions { .. } => Format::Text,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// TPF's META-INF/pipeline/pipeline-contract.json.
    pub contract: PathBuf,
    /// pipeline-release.json; without it the release version is the contract version, as in TPF.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Driver configuration (TOML). Without it ./tpf-sfn.toml if there is one (the file `init`
    /// writes), else the embedded defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output directory for this release's files.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Action binding; overrides the config file. Without either, `gateway` (TPF's action
    /// gateway); Action API v1's `http`, `lambda` and `queue` are retired
    /// (ACTION_API_V1_RETIRED).
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// The engine the driver runs on: Step Functions state machines, or a Lambda durable
    /// function (its spec, manifest and CloudFormation stack).
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// Accept a contract whose contractHash does not match (recorded as unverified in the manifest).
    #[arg(long)]
    pub allow_unverified_hash: bool,
    /// Compare with the files already in --out and fail on any difference; writes nothing.
    #[arg(long)]
    pub check: bool,
    /// Also write an infrastructure-as-code export: cloudformation.json or main.tf.json (the
    /// driver, its role and alarms; the wake-path stack under wake-path/). Repeat for both.
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

impl From<Emit> for tpf_sfn_compiler::lowering::export::Kind {
    fn from(e: Emit) -> Self {
        match e {
            Emit::Cloudformation => tpf_sfn_compiler::lowering::export::Kind::CloudFormation,
            Emit::Terraform => tpf_sfn_compiler::lowering::export::Kind::Terraform,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// Output directory of `tpf-sfn compile` (manifest.json and the definitions).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// IAM role the machines run as (the compiled policies attach to it). Required unless
    /// --dry-run.
    #[arg(long, required_unless_present = "dry_run")]
    pub role_arn: Option<String>,
    /// Print the plan (create / unchanged / update / refuse) and the diff; make no write calls.
    #[arg(long)]
    pub dry_run: bool,
    /// A `--backend lambda-durable` release: the tpf-sfn-lambda zip its driver function runs
    /// (scripts/lambda-package.sh). Needed to create the function.
    #[arg(long)]
    pub code_zip: Option<PathBuf>,
    /// Replace the definition of an existing release machine. Running executions keep the old
    /// definition; new generations get the new one.
    #[arg(long)]
    pub force_replace: bool,
    /// On an AWS error, also print everything the SDK said (the full service message, which
    /// may echo a whole definition, and the error chain).
    #[arg(long)]
    pub verbose: bool,
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
    /// TPF execution id (its driver generations are named from TPF's record: `tpf-…`).
    #[arg(long)]
    pub execution: String,
    // TPF's execution table.
    #[command(flatten)]
    pub tables: TableArgs,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct ReleasesArgs {
    /// The engine whose releases are listed: Step Functions state machines, or Lambda durable
    /// functions driver functions.
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// Only releases whose machine or function names start with this (e.g. the configured
    /// name-prefix).
    #[arg(long)]
    pub name_prefix: Option<String>,
    #[command(flatten)]
    pub connection: crate::aws::client::Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// The engine whose releases are listed: Step Functions state machines, or Lambda durable
    /// functions driver functions.
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// Only releases whose machine or function names start with this (e.g. the configured
    /// name-prefix).
    #[arg(long)]
    pub name_prefix: Option<String>,
    // TPF's release registry (`release-table`).
    #[command(flatten)]
    pub tables: TableArgs,
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
    /// Definitions this tool compiled are recognised and treated so without the flag.
    #[arg(long)]
    pub driver_profile: bool,
    /// Most items the named Map state iterates over (`STATE=N`, repeatable): the bound the
    /// history proof needs for a Map whose input size it cannot see.
    #[arg(long, value_name = "STATE=N", value_parser = parse_map_bound)]
    pub map_item_bound: Vec<(String, u64)>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// A `--map-item-bound` value that is not `STATE=N`.
#[derive(Debug, thiserror::Error)]
pub enum MapBoundError {
    #[error("`{0}` is not STATE=N")]
    NotStateEqualsN(String),
    #[error("`{count}` in `{text}` is not a number of items: {source}")]
    NotACount {
        count: String,
        text: String,
        source: std::num::ParseIntError,
    },
}

fn parse_map_bound(text: &str) -> Result<(String, u64), MapBoundError> {
    let (state, n) = text
        .rsplit_once('=')
        .ok_or_else(|| MapBoundError::NotStateEqualsN(text.to_owned()))?;
    let n = n
        .trim()
        .parse::<u64>()
        .map_err(|source| MapBoundError::NotACount {
            count: n.to_owned(),
            text: text.to_owned(),
            source,
        })?;
    Ok((state.trim_matches('"').to_string(), n))
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
    /// pipeline-release.json the driver is pinned to; without it the release version is the
    /// contract version, as in TPF.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Driver configuration (TOML) to compile with. Without it ./tpf-sfn.toml if there is one,
    /// else the embedded defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Action binding to compile with; overrides the config file. Without either, `gateway`.
    /// Only the gateway is proven: `http`, `lambda` and `queue` are Action API v1's, retired
    /// (ACTION_API_V1_RETIRED).
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// The engine whose gateway driver is proven: the compiled state machine, or the durable
    /// driver program on a replay engine.
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// Prove this driver definition (compiled earlier, or post-processed, e.g. by CDK) instead of compiling one (step-functions only).
    #[arg(long)]
    pub driver: Option<PathBuf>,
    /// Accept a contract whose contractHash does not match its content (a warning instead of
    /// the CONTRACT_HASH_MISMATCH error).
    #[arg(long)]
    pub allow_unverified_hash: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The pipeline contract; the bundled restaurant-approval sample when omitted.
    pub contract: Option<PathBuf>,
    /// pipeline-release.json the driver is pinned to; without it the release version is the
    /// contract version, as in TPF.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Driver configuration (TOML) to compile with. Without it ./tpf-sfn.toml if there is one,
    /// else the embedded defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Action binding to compile with; overrides the config file. Without either, `gateway`,
    /// TPF's protocol: `http`, `lambda` and `queue` are Action API v1's, retired
    /// (ACTION_API_V1_RETIRED).
    #[arg(long, value_enum)]
    pub binding: Option<Binding>,
    /// The engine whose driver runs the scenario.
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// Scenario name (see `--list`) from the gateway world's catalogue; default
    /// `tpf-11-completion-after-binding`, TPF's await path.
    #[arg(long)]
    pub scenario: Option<String>,
    /// List the scenario names and exit.
    #[arg(long)]
    pub list: bool,
    /// Accept a contract whose contractHash does not match its content (a warning instead of
    /// the CONTRACT_HASH_MISMATCH error).
    #[arg(long)]
    pub allow_unverified_hash: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum TablesCommand {
    /// Create every table that does not exist yet; compare the existing ones with what the loop needs (exit 1 if one lacks something).
    Create(TablesCreateArgs),
}

/// Which tables: TPF's default names, a prefix, and per-table overrides.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TableArgs {
    /// Prefix for every table name (e.g. `stage_` gives `stage_tpf_execution`).
    #[arg(long, default_value = "")]
    pub prefix: String,
    // The help lists the keys from the one table of them, so it cannot drift from what `set` takes.
    #[arg(long = "table", value_name = "KEY=NAME", help = table_help())]
    pub tables: Vec<String>,
}

/// `--table`'s help: every key `TableNames::set` takes.
fn table_help() -> String {
    format!(
        "Override one table by TPF's config key, e.g. `execution-table=my_exec` (keys: {}). Wins over --prefix",
        tpf_sfn_wakepath::aws::table_names::TableKey::listing()
    )
}

#[derive(Debug, clap::Args)]
pub struct TablesCreateArgs {
    #[command(flatten)]
    pub tables: TableArgs,
    /// Add what an existing table lacks where that changes nothing else: a stream, TTL, an
    /// index. Keys, a stream's view type and a TTL on another attribute are only reported.
    #[arg(long)]
    pub fix: bool,
    #[command(flatten)]
    pub connection: Connection,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RelayProtocol {
    // `{gatewayRequest, taskToken, park}`: TPF's action gateway. (Plain comments: a documented
    // value would switch the command's help to its long form.)
    Gateway,
    // Action API v1, retired: still parsed, so that asking for it gets a coded error
    // (`ACTION_API_V1_RETIRED`) rather than clap's "invalid value".
    #[value(hide = true)]
    ActionApi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StoreKind {
    /// Process memory; lost on exit.
    Memory,
    /// TPF's DynamoDB tables (create them with `tpf-sfn tables create`).
    Dynamodb,
}

/// The longest `--await-timeout-seconds`: a year.
pub const MAX_AWAIT_TIMEOUT_SECONDS: u64 = 365 * 24 * 3600;

/// The longest `--retry-delay-ms`: TPF's 30-minute cap on a retry delay.
pub const MAX_RETRY_DELAY_MS: i64 = 30 * 60 * 1000;

/// `--retry-multiplier`: finite, 1 to 1000 (NaN or infinity would make every delay the cap or
/// nonsense, and TPF's delays never shrink).
fn retry_multiplier(text: &str) -> Result<f64, OutOfRange> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && (1.0..=1000.0).contains(&value) => Ok(value),
        _ => Err(OutOfRange(text.to_owned())),
    }
}

/// A `--retry-multiplier` that is not a number from 1 to 1000.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a finite number from 1 to 1000")]
pub struct OutOfRange(String);

/// The reference coordinator's settings, named after TPF's `pipeline.orchestrator.*` keys.
#[derive(Debug, Clone, clap::Args)]
pub struct CoordinatorArgs {
    /// Await interaction timeout (TPF requires a positive one on every await step), at most a
    /// year (31536000 s), the longest a Standard execution that awaits it can run.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=MAX_AWAIT_TIMEOUT_SECONDS))]
    pub await_timeout_seconds: u64,
    /// Retries after a retryable step failure before TPF fails the execution
    /// (`pipeline.orchestrator.max-retries`).
    #[arg(long, default_value_t = 3)]
    pub max_retries: u32,
    /// First retry delay (`pipeline.orchestrator.retry-delay`); later ones grow by the multiplier
    /// (0 to 1800000: TPF caps every retry delay at 30 minutes).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(0..=MAX_RETRY_DELAY_MS))]
    pub retry_delay_ms: i64,
    /// Growth of the retry delay per attempt (`pipeline.orchestrator.retry-multiplier`): a finite
    /// number from 1 to 1000.
    #[arg(long, default_value_t = 2.0, value_parser = retry_multiplier)]
    pub retry_multiplier: f64,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The contract whose steps the scripted worker runs (await steps park, others complete).
    #[arg(long)]
    pub pipeline_contract: PathBuf,
    /// Failure script (TOML): per step, outcomes by attempt.
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// A pipeline-release.json this host runs (repeatable). TPF keeps an old release's workers
    /// until its pinned executions drain, so one host may run several; the first is the one
    /// `--activate-tenant` activates. Without it the release is the contract version, as in TPF.
    #[arg(long = "release", value_name = "FILE")]
    pub releases: Vec<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Bearer token every request must carry; otherwise the TPF_SFN_TOKEN environment variable.
    #[arg(long)]
    pub token: Option<String>,
    #[arg(long, value_enum, default_value = "memory")]
    pub store: StoreKind,
    #[command(flatten)]
    pub coordinator: CoordinatorArgs,
    /// Register and activate the contract's release for this tenant at startup (repeatable),
    /// as TPF's local release activation does for tenant `default`.
    #[arg(long = "activate-tenant", value_name = "TENANT")]
    pub activate_tenants: Vec<String>,
    #[command(flatten)]
    pub tables: TableArgs,
    #[command(flatten)]
    pub connection: Connection,
}

#[derive(Debug, clap::Args)]
pub struct RelayArgs {
    /// The queue the drivers send their gateway requests to (the gateway binding's queue
    /// transport).
    #[arg(long)]
    pub queue_url: String,
    /// What the drivers' messages ask for: an invoke of TPF's action gateway. (Action API v1,
    /// which TPF does not serve, is retired.)
    #[arg(long, value_enum, default_value_t = RelayProtocol::Gateway)]
    pub protocol: RelayProtocol,
    /// Base URL of `tpf-sfn serve`, plain http, whose gateway route answers as Lambda's Invoke.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub action_url: String,
    /// Invoke the gateway as this Lambda function (the ARN of its numbered version) instead of
    /// over `--action-url`.
    #[arg(long)]
    pub gateway_function_arn: Option<String>,
    /// Bearer token for the action host; otherwise the TPF_SFN_TOKEN environment variable.
    #[arg(long)]
    pub token: Option<String>,
    /// One receive pass, then exit (non-zero if receiving failed).
    #[arg(long)]
    pub once: bool,
    /// SQS long-poll wait per receive (0 to 20 seconds).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(0..=20))]
    pub wait_seconds: i32,
    /// Timeout for one action call.
    #[arg(long, default_value_t = 30)]
    pub action_timeout_seconds: u64,
    /// Messages of one received batch handled at once (1 = one after another).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=10))]
    pub concurrency: u16,
    /// Longest pause while idle: after a receive that returned nothing, the relay waits before
    /// the next one, doubling from 100 ms up to this (0, the default: long-poll only).
    #[arg(long, default_value_t = 0)]
    pub idle_interval_ms: u64,
    #[command(flatten)]
    pub connection: Connection,
}

#[derive(Debug, clap::Args)]
pub struct DevArgs {
    /// The pipeline contract; the bundled restaurant-approval sample when omitted.
    pub contract: Option<PathBuf>,
    /// pipeline-release.json; without it the release version is the contract version.
    #[arg(long)]
    pub release: Option<PathBuf>,
    /// Driver configuration (TOML). Without it ./tpf-sfn.toml if there is one (the file `init`
    /// writes), else the embedded defaults. dev sets its binding to the gateway with the queue
    /// transport (the relay carries the driver's gateway requests to the host) and its queue URL,
    /// or on `lambda-durable` the `lambda` transport (the driver invokes the gateway function,
    /// answered by the host), and the name prefix; the rest of `[binding.gateway]` and of the
    /// file is kept.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where the compiled release is written.
    #[arg(long, default_value = "tpf-sfn-dev")]
    pub out: PathBuf,
    /// The engine the driver runs on: Step Functions machines on the endpoint, or
    /// `lambda-durable`: the durable driver function on AWS's durable execution emulator
    /// (installed by `scripts/dex.sh install`), TPF's tables on the endpoint.
    #[arg(long, value_enum, default_value_t = Backend::StepFunctions)]
    pub backend: Backend,
    /// `--backend lambda-durable`: address of the local Lambda endpoint in front of the
    /// emulator (the printed start invokes the driver function there).
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub lambda_listen: String,
    /// Prefix of the machine names and of the gateway queue's name.
    #[arg(long, default_value = "tpf-dev")]
    pub name_prefix: String,
    /// Address the action host listens on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Bearer token for the host; otherwise TPF_SFN_TOKEN; otherwise the one generated for --out
    /// before (kept in it), or a new one, printed.
    #[arg(long)]
    pub token: Option<String>,
    /// Generate a new token even if --out keeps one.
    #[arg(long)]
    pub new_token: bool,
    /// Longest pause of the wake-up and the relay while idle (they back off from their busy
    /// intervals up to this when nothing happens).
    #[arg(long, default_value_t = 2000)]
    pub idle_interval_ms: u64,
    /// The tenant whose release is activated at start.
    #[arg(long, default_value = "default")]
    pub tenant: String,
    /// Failure script for the host's worker (see `serve --script`).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// IAM role the machines run as. Required against AWS; against `--endpoint-url` a
    /// placeholder is used when omitted (emulators do not check roles).
    #[arg(long)]
    pub role_arn: Option<String>,
    #[command(flatten)]
    pub coordinator: CoordinatorArgs,
    #[command(flatten)]
    pub tables: TableArgs,
    #[command(flatten)]
    pub connection: Connection,
    /// `json` prints one line describing what runs where (for scripts), then the processes' logs.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}
