//! `tpf-sfn dev`: the whole local loop in one command, on TPF's action gateway. It provisions
//! what the loop needs (tables, the gateway queue, the compiled and deployed release: the
//! gateway driver with the queue transport), then runs `serve` (TPF's gateway route and control
//! plane), the gateway wake-up with the reconciler (`gateway.rs`) and `relay --protocol gateway`
//! (the queue to the gateway route: moto cannot run a Lambda function) in this process, each on
//! its own thread with its own runtime, exactly as the separate commands would run them. The
//! first of the three to stop ends the command.
//!
//! On the Lambda durable functions backend (`durable.rs`) the driver function runs on AWS's
//! durable execution emulator instead, and no queue, relay or machine is needed.

use crate::stdio::errln;
mod durable;
mod gateway;
mod provision;
mod summary;

use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::cli::{Backend, DevArgs, RelayArgs, RelayProtocol, ServeArgs, StoreKind};
use crate::cmd::serve::listen_error;
use crate::cmd::tables::table_names;
use crate::emulator::Reaped;
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use provision::provision;
use summary::summary;

/// What one of the loop's threads reports when it ends.
type Ended = (&'static str, CmdResult);

pub fn run(args: &DevArgs) -> CmdResult {
    let (token, token_origin) = token(args)?;
    let names = table_names(&args.tables)?;
    // Whether the endpoint is an emulator decides what else is needed: a malformed one first.
    args.connection.check()?;
    // Checked first: readiness is "the address accepts connections", which another process
    // already listening there would fake.
    std::net::TcpListener::bind(&args.listen).map_err(|e| listen_error(&args.listen, e))?;
    match args.backend {
        Backend::StepFunctions => step_functions(args, &names, &token, token_origin),
        Backend::LambdaDurable => durable::run(args, &names, &token, token_origin),
    }
}

/// `serve` as the loop runs it: TPF's gateway and control plane on the tables, the release
/// active for the tenant.
fn serve_args(args: &DevArgs, contract: &Path, release: Option<&Path>, token: &str) -> ServeArgs {
    ServeArgs {
        pipeline_contract: contract.to_path_buf(),
        script: args.script.clone(),
        releases: release.iter().map(|r| r.to_path_buf()).collect(),
        listen: args.listen.clone(),
        token: Some(token.to_owned()),
        store: StoreKind::Dynamodb,
        coordinator: args.coordinator.clone(),
        activate_tenants: vec![args.tenant.clone()],
        tables: args.tables.clone(),
        connection: args.connection.clone(),
    }
}

fn step_functions(
    args: &DevArgs,
    names: &crate::aws::tables::TableNames,
    token: &str,
    token_origin: &'static str,
) -> CmdResult {
    let token = token.to_owned();
    let provisioned = provision(args, names)?;
    if token_origin == "generated" {
        keep_token(&args.out, &token);
    }

    let (tx, rx) = mpsc::channel::<Ended>();
    let serve = serve_args(
        args,
        &provisioned.contract,
        provisioned.release.as_deref(),
        &token,
    );
    let relay = RelayArgs {
        queue_url: provisioned.queue_url.clone(),
        protocol: RelayProtocol::Gateway,
        gateway_function_arn: None,
        action_url: format!("http://{}", args.listen),
        token: Some(token.clone()),
        once: false,
        wait_seconds: 5,
        action_timeout_seconds: 30,
        concurrency: 10,
        idle_interval_ms: args.idle_interval_ms,
        connection: args.connection.clone(),
    };
    let wake = gateway::GatewayWake {
        connection: args.connection.clone(),
        names: names.clone(),
        host: format!("http://{}", args.listen),
        token: token.clone(),
        machines: tpf_sfn_wakepath::drivers::Machines {
            arn_prefix: provisioned.driver_arn_prefix.clone(),
            name_prefix: args.name_prefix.clone(),
        },
        durable: Default::default(),
        lambda_endpoint: None,
        driver_machines: vec![provisioned.driver_arn()],
        driver_functions: Vec::new(),
        idle_interval_ms: args.idle_interval_ms,
    };
    start("serve", &tx, move || super::serve::run(&serve))?;
    wait_listening(&args.listen, "the action host", &rx, &mut [])?;
    start("wake-up", &tx, move || gateway::run(&wake))?;
    start("relay", &tx, move || super::relay::run(&relay))?;
    summary(args, names, &provisioned, &token, token_origin);
    wait_ended(&rx, &mut [])
}

/// Runs until one of the loop's threads or processes ends; that ends the command, saying which.
/// The processes are stopped when the caller drops them.
fn wait_ended(rx: &mpsc::Receiver<Ended>, children: &mut [Reaped]) -> CmdResult {
    loop {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok((who, Err(e))) => return Err(stopped(who, e)),
            Ok((who, Ok(()))) => return Err(ended(who)),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            Err(mpsc::RecvTimeoutError::Timeout) => child_ended(children)?,
        }
    }
}

fn ended(who: &str) -> Failure {
    Error::new(
        "DEV_STOPPED",
        format!("{who} stopped; the loop is incomplete without it"),
    )
    .with_hint("run dev again; its lines above say why it stopped")
    .into()
}

/// `DEV_STOPPED` for the first of `children` that exited.
fn child_ended(children: &mut [Reaped]) -> Result<(), Failure> {
    for child in children.iter_mut() {
        if let Some(status) = child.exited() {
            return Err(Error::new(
                "DEV_STOPPED",
                format!(
                    "{} exited ({status}); the loop is incomplete without it",
                    child.name()
                ),
            )
            .with_hint("its log under --out's logs/ says why; run dev again")
            .into());
        }
    }
    Ok(())
}

/// The failure of one of the three, saying which.
fn stopped(who: &str, e: Failure) -> Failure {
    match e {
        Failure::Error(e) => e.within(who).into(),
        other => other,
    }
}

fn start(
    who: &'static str,
    tx: &mpsc::Sender<Ended>,
    body: impl FnOnce() -> CmdResult + Send + 'static,
) -> Result<(), Failure> {
    let tx = tx.clone();
    std::thread::Builder::new()
        .name(who.to_owned())
        .spawn(move || {
            let _ = tx.send((who, body()));
        })
        .map(|_| ())
        .map_err(|e| {
            Error::new("DEV_THREAD", format!("cannot start {who}"))
                .with_source(e)
                .with_hint("the machine is out of threads or memory; free some and run dev again")
                .into()
        })
}

/// Waits until `what` accepts connections on `listen`, or reports why a thread or a process of
/// the loop stopped first.
fn wait_listening(
    listen: &str,
    what: &str,
    rx: &mpsc::Receiver<Ended>,
    children: &mut [Reaped],
) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok((who, result)) = rx.try_recv() {
            return Err(match result {
                Err(e) => stopped(who, e),
                Ok(()) => ended(who),
            });
        }
        child_ended(children)?;
        if TcpStream::connect(listen).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::new(
        "DEV_HOST",
        format!("{what} did not listen on {listen} within 60 s"),
    )
    .with_hint("pick another address, or check that the store answers (its log under --out's logs/ for an emulator process)")
    .into())
}

/// Where a generated token is kept, so restarting `dev` on the same `--out` keeps the token
/// scripts and shells already hold.
const TOKEN_FILE: &str = ".dev-token";

/// The host's bearer token: the flag, then TPF_SFN_TOKEN, then the one kept in `--out` (unless
/// `--new-token`), then a fresh random one.
fn token(args: &DevArgs) -> Result<(String, &'static str), Failure> {
    if let Some(t) = args.token.clone().filter(|t| !t.is_empty()) {
        return Ok((t, "--token"));
    }
    if let Some(t) = std::env::var("TPF_SFN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        return Ok((t, "TPF_SFN_TOKEN"));
    }
    if !args.new_token {
        if let Some(t) = kept_token(&args.out) {
            return Ok((t, "kept"));
        }
    }
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::new(
            "NO_TOKEN",
            format!("no --token or TPF_SFN_TOKEN, and no randomness to generate one: {e}"),
        )
        .with_hint("pass --token or set TPF_SFN_TOKEN")
    })?;
    Ok((hex::encode(bytes), "generated"))
}

/// The token an earlier run generated for `out`, if it is still there and looks like one.
fn kept_token(out: &Path) -> Option<String> {
    let bytes = crate::input::read(&out.join(TOKEN_FILE)).ok()?;
    let token = String::from_utf8(bytes).ok()?.trim().to_owned();
    (token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit())).then_some(token)
}

/// Keeps a generated token in `out`, readable by its owner only. Failing to keep it costs a new
/// token on the next start, so it is a warning, not an error.
fn keep_token(out: &Path, token: &str) {
    let path = out.join(TOKEN_FILE);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{token}\n").as_bytes()));
    if let Err(e) = written {
        errln!(
            "tpf-sfn dev: warning: cannot keep the token in {}: {e}; the next start generates another",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(out: &Path, extra: &[&str]) -> DevArgs {
        let mut argv = vec!["tpf-sfn", "dev", "--out", out.to_str().unwrap()];
        argv.extend(extra);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Dev(a) => a,
            _ => unreachable!("dev parses as dev"),
        }
    }

    #[test]
    fn a_generated_token_is_kept_per_out_dir_until_new_token() {
        // The environment's token would win over the kept one.
        if std::env::var("TPF_SFN_TOKEN").is_ok_and(|t| !t.is_empty()) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let a = args(dir.path(), &[]);
        let (first, origin) = token(&a).unwrap();
        assert_eq!(origin, "generated");
        keep_token(&a.out, &first);
        assert_eq!(token(&a).unwrap(), (first.clone(), "kept"));
        let (fresh, origin) = token(&args(dir.path(), &["--new-token"])).unwrap();
        assert_eq!(origin, "generated");
        assert_ne!(fresh, first);
        let other = tempfile::tempdir().unwrap();
        assert_eq!(token(&args(other.path(), &[])).unwrap().1, "generated");
        assert_eq!(
            token(&args(dir.path(), &["--token", "mine"])).unwrap(),
            ("mine".to_owned(), "--token")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the token file is its owner's only");
        }
    }
}
