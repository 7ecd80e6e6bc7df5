//! `dev --backend lambda-durable`: the local loop with the release's durable driver function on
//! AWS's durable execution emulator. Besides `serve` and the gateway wake-up (threads, as on
//! Step Functions) it runs three processes, each stopped when `dev` stops: the emulator
//! (`dex-local-runner`), the Lambda runtime API it invokes (`cargo lambda watch`) and the
//! driver function polling it (our `tpf-sfn-lambda` bootstrap), with the local Lambda endpoint
//! (`crate::emulator::lambda`) in front of the emulator: TPF's ingress, the wake-up and the
//! driver call Lambda there, and its invokes of TPF's gateway are answered by `serve`.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};

use super::provision::provision_durable;
use super::{gateway, keep_token, serve_args, start, wait_ended, wait_listening, Ended};
use crate::aws::tables::TableNames;
use crate::cli::DevArgs;
use crate::cmd::serve::listen_error;
use crate::cmd::tables::runtime;
use crate::emulator::function::{self, DriverFunction};
use crate::emulator::lambda::{Deployed, GatewayRoute, Shim, INVOKED_FUNCTION_ARN};
use crate::emulator::tools::{write_runtime_manifest, Tools};
use crate::emulator::Reaped;
use crate::error::Error;
use crate::exit::{CmdResult, Failure};

/// Where the loop's processes write their logs, under `--out`.
pub(super) const LOGS: &str = "logs";

/// What the summary prints of the durable loop.
pub(super) struct Running {
    pub(super) provisioned: super::provision::DurableProvisioned,
    /// The local Lambda endpoint's URL.
    pub(super) lambda_url: String,
    pub(super) dex: SocketAddr,
    pub(super) region: String,
}

pub(super) fn run(
    args: &DevArgs,
    names: &TableNames,
    token: &str,
    token_origin: &'static str,
) -> CmdResult {
    // What the loop needs and cannot create, before anything is created.
    let tools = Tools::find()?;
    let bootstrap = function::bootstrap()?;
    let Some(endpoint) = args.connection.emulator_endpoint() else {
        return Err(Error::new(
            "DEV_DURABLE_ENDPOINT",
            "the durable loop runs on a local emulator and needs TPF's tables on one too",
        )
        .with_location("--endpoint-url")
        .with_hint(
            "pass --endpoint-url of a local DynamoDB emulator (`scripts/moto.sh start` prints one)",
        )
        .into());
    };
    let lambda_listen = resolve(&args.lambda_listen)?;
    std::net::TcpListener::bind(lambda_listen)
        .map_err(|e| listen_error(&args.lambda_listen, e).with_location("--lambda-listen"))?;
    let serve_addr = resolve(&args.listen)?;

    let provisioned = provision_durable(args, names)?;
    if token_origin == "generated" {
        keep_token(&args.out, token);
    }
    let logs = args.out.join(LOGS);
    let manifest = args.out.join("function");
    std::fs::create_dir_all(&logs).map_err(|e| Error::write("create the logs folder", &logs, e))?;
    write_runtime_manifest(&manifest)?;

    // Children are started from this thread, which lives as long as `dev` (see `Reaped`).
    let dex: SocketAddr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let runtime_port = free_port()?;
    let mut children = vec![
        spawn(&logs, "dex-local-runner", "dex", tools.emulator(dex.port()))?,
        spawn(
            &logs,
            "cargo lambda watch",
            "watch",
            tools.runtime_api(runtime_port, &manifest),
        )?,
    ];

    let (tx, rx) = mpsc::channel::<Ended>();
    let serve = serve_args(
        args,
        &provisioned.contract,
        provisioned.release.as_deref(),
        token,
    );
    start("serve", &tx, move || crate::cmd::serve::run(&serve))?;
    wait_listening(&args.listen, "the action host", &rx, &mut children)?;
    wait_listening(
        &dex.to_string(),
        "the durable execution emulator",
        &rx,
        &mut children,
    )?;
    let runtime_api = format!("127.0.0.1:{runtime_port}");
    wait_listening(&runtime_api, "cargo lambda watch", &rx, &mut children)?;

    let function = provisioned.function.clone();
    let runtime_url = format!("http://{runtime_api}");
    // The driver function by its name, and by the invoked ARN `cargo lambda watch` hands it (a
    // hand-over starts the next generation on the version that runs it).
    let functions = BTreeMap::from([
        (
            function.clone(),
            Deployed {
                lambda_endpoint: runtime_url.clone(),
            },
        ),
        (
            INVOKED_FUNCTION_ARN.to_owned(),
            Deployed {
                lambda_endpoint: runtime_url,
            },
        ),
    ]);
    let route = GatewayRoute {
        function_arn: provisioned.gateway_arn.clone(),
        serve: serve_addr,
        token: token.to_owned(),
    };
    start("the Lambda endpoint", &tx, move || {
        runtime()?.block_on(async move {
            let _shim = Shim::start(lambda_listen, dex, functions, Some(route)).await?;
            std::future::pending::<CmdResult>().await
        })
    })?;
    wait_listening(
        &args.lambda_listen,
        "the Lambda endpoint",
        &rx,
        &mut children,
    )?;
    let lambda_url = format!("http://{}", args.lambda_listen);
    let region = region(args);
    children.push(spawn(
        &logs,
        "the durable driver function",
        "function",
        DriverFunction {
            name: &function,
            spec: &provisioned.spec,
            runtime_port,
            lambda_endpoint: &lambda_url,
            dynamodb_endpoint: &endpoint,
            region: &region,
        }
        .command(&bootstrap),
    )?);

    let mut durable = DurableFunctions::default();
    durable.insert(
        &provisioned.identity.pipeline_id,
        &provisioned.identity.release_version,
        &function,
    );
    let wake = gateway::GatewayWake {
        connection: args.connection.clone(),
        names: names.clone(),
        host: format!("http://{}", args.listen),
        token: token.to_owned(),
        // No release runs as a machine here; the starter finds each in `durable`.
        machines: Machines {
            arn_prefix: String::new(),
            name_prefix: args.name_prefix.clone(),
        },
        durable,
        lambda_endpoint: Some(lambda_url.clone()),
        driver_machines: Vec::new(),
        driver_functions: vec![function.clone()],
        idle_interval_ms: args.idle_interval_ms,
    };
    start("wake-up", &tx, move || gateway::run(&wake))?;
    super::summary::durable_summary(
        args,
        names,
        &Running {
            provisioned,
            lambda_url,
            dex,
            region,
        },
        token,
        token_origin,
    );
    let result = wait_ended(&rx, &mut children);
    drop(children);
    result
}

/// One process of the loop, its output in `logs/<log>.log`.
fn spawn(logs: &Path, name: &str, log: &str, mut command: Command) -> Result<Reaped, Failure> {
    let path = logs.join(format!("{log}.log"));
    let file =
        std::fs::File::create(&path).map_err(|e| Error::write("create the log", &path, e))?;
    let err = file
        .try_clone()
        .map_err(|e| Error::write("open the log", &path, e))?;
    command.stdin(Stdio::null()).stdout(file).stderr(err);
    Ok(Reaped::spawn(name, command)?)
}

/// An address to listen on or call, as a socket address.
fn resolve(listen: &str) -> Result<SocketAddr, Failure> {
    listen
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            Error::new("LISTEN", format!("`{listen}` is no address to listen on"))
                .with_location(listen.to_owned())
                .with_hint("give a host and port, such as 127.0.0.1:8081")
                .into()
        })
}

/// A port free now on the loopback interface, for a process that takes its port as a number.
fn free_port() -> Result<u16, Failure> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| listen_error("127.0.0.1:0", e).into())
}

/// The region the loop's clients use: the flag, then the environment, then us-east-1 (any
/// region will do for local emulators).
pub(super) fn region(args: &DevArgs) -> String {
    args.connection
        .region
        .clone()
        .or_else(|| {
            ["AWS_REGION", "AWS_DEFAULT_REGION"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|r| !r.is_empty()))
        })
        .unwrap_or_else(|| "us-east-1".to_owned())
}
