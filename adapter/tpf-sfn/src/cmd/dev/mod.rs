//! `tpf-sfn dev`: the whole local loop in one command, on TPF's action gateway. It provisions
//! what the loop needs (tables, the gateway queue, the compiled and deployed release: the
//! gateway driver with the queue transport), then runs `serve` (TPF's gateway route and control
//! plane), the gateway wake-up with the reconciler (`gateway.rs`) and `relay --protocol gateway`
//! (the queue to the gateway route: moto cannot run a Lambda function) in this process, each on
//! its own thread with its own runtime, exactly as the separate commands would run them. The
//! first of the three to stop ends the command.

use crate::stdio::errln;
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
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use provision::provision;
use summary::summary;

pub fn run(args: &DevArgs) -> CmdResult {
    refuse_durable(args.backend)?;
    let (token, token_origin) = token(args)?;
    let names = table_names(&args.tables)?;
    // Whether the endpoint is an emulator decides what else is needed: a malformed one first.
    args.connection.check()?;
    // Checked first: readiness is "the address accepts connections", which another process
    // already listening there would fake.
    std::net::TcpListener::bind(&args.listen).map_err(|e| listen_error(&args.listen, e))?;
    let provisioned = provision(args, &names)?;
    if token_origin == "generated" {
        keep_token(&args.out, &token);
    }

    let (tx, rx) = mpsc::channel::<(&'static str, CmdResult)>();
    let serve = ServeArgs {
        pipeline_contract: provisioned.contract.clone(),
        script: args.script.clone(),
        releases: provisioned.release.iter().cloned().collect(),
        listen: args.listen.clone(),
        token: Some(token.clone()),
        store: StoreKind::Dynamodb,
        coordinator: args.coordinator.clone(),
        activate_tenants: vec![args.tenant.clone()],
        tables: args.tables.clone(),
        connection: args.connection.clone(),
    };
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
        driver_arn: provisioned.driver_arn(),
        idle_interval_ms: args.idle_interval_ms,
    };
    start("serve", &tx, move || super::serve::run(&serve))?;
    wait_listening(&args.listen, &rx)?;
    start("wake-up", &tx, move || gateway::run(&wake))?;
    start("relay", &tx, move || super::relay::run(&relay))?;
    summary(args, &names, &provisioned, &token, token_origin);

    match rx.recv() {
        Ok((who, Err(e))) => Err(stopped(who, e)),
        Ok((who, Ok(()))) => Err(Error::new(
            "DEV_STOPPED",
            format!("{who} stopped; the loop is incomplete without it"),
        )
        .with_hint("run dev again; its lines above say why it stopped")
        .into()),
        Err(_) => Ok(()),
    }
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
    tx: &mpsc::Sender<(&'static str, CmdResult)>,
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

/// Waits until the host accepts connections, or reports why it stopped.
fn wait_listening(
    listen: &str,
    rx: &mpsc::Receiver<(&'static str, CmdResult)>,
) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok((who, result)) = rx.try_recv() {
            return Err(match result {
                Err(e) => stopped(who, e),
                Ok(()) => Error::new("DEV_STOPPED", format!("{who} stopped"))
                    .with_hint("run dev again; its lines above say why it stopped")
                    .into(),
            });
        }
        if TcpStream::connect(listen).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::new(
        "DEV_HOST",
        format!("the action host did not listen on {listen} within 30 s"),
    )
    .with_hint("pick another --listen, or check that the store answers")
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

/// The local loop runs the driver as Step Functions machines. On the durable backend it would
/// run the driver function on AWS's durable execution emulator, with the wake-up starting and
/// waking it through the emulator's Lambda endpoint: neither is built into `dev` yet, so the
/// flag is refused before anything is read or created rather than quietly running the other
/// backend.
fn refuse_durable(backend: Backend) -> Result<(), Error> {
    match backend {
        Backend::StepFunctions => Ok(()),
        Backend::LambdaDurable => Err(Error::new(
            "DEV_BACKEND_UNSUPPORTED",
            "`dev --backend lambda-durable` is not built: the local loop cannot yet run the durable \
             driver function on the durable execution emulator or point the wake-up at the \
             emulator's Lambda endpoint",
        )
        .with_location("--backend")
        .with_hint(
            "run `dev` without --backend for the local loop on Step Functions, and deploy the \
             durable release with `compile --backend lambda-durable` and `deploy`",
        )),
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
