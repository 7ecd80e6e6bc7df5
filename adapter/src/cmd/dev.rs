//! `tpf-sfn dev`: the whole local loop in one command. It provisions what the loop needs (tables,
//! the action queue, the compiled and deployed release), then runs `serve`, `bridge` and `relay`
//! in this process, each on its own thread with its own runtime, exactly as the separate
//! commands would run them. The first of the three to stop ends the command.

use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use tpf_sfn_compiler::bundled::{RESTAURANT_CONTRACT, RESTAURANT_RELEASE};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;

use crate::aws::deploy::{self, Options};
use crate::aws::errors::{self, Kind};
use crate::aws::release::Release;
use crate::aws::tables::{create_all, TableNames};
use crate::cli::{BridgeArgs, DevArgs, Format, RelayArgs, ServeArgs, StoreKind};
use crate::cmd::inputs::read_config;
use crate::cmd::serve::listen_error;
use crate::cmd::tables::{runtime, table_names};
use crate::error::Error;
use crate::exit::{read, CmdResult, Failure};
use crate::{output, report};

/// Emulators do not check roles; AWS needs a real one (`--role-arn`).
const PLACEHOLDER_ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-dev";

/// What `dev` set up, for the summary.
struct Provisioned {
    identity: tpf_wire::Identity,
    tables: Vec<(String, bool)>,
    queue_url: String,
    machines: Vec<(&'static str, String, String)>,
    driver_arn_prefix: String,
    contract: PathBuf,
    release: Option<PathBuf>,
}

pub fn run(args: &DevArgs) -> CmdResult {
    let (token, token_origin) = token(args)?;
    let names = table_names(&args.tables)?;
    // Checked first: readiness is "the address accepts connections", which another process
    // already listening there would fake.
    std::net::TcpListener::bind(&args.listen).map_err(|e| listen_error(&args.listen, e))?;
    let provisioned = provision(args, &names)?;

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
    let bridge = BridgeArgs {
        machine_arn_prefix: provisioned.driver_arn_prefix.clone(),
        name_prefix: args.name_prefix.clone(),
        interval_ms: 250,
        once: false,
        tables: args.tables.clone(),
        connection: args.connection.clone(),
    };
    let relay = RelayArgs {
        queue_url: provisioned.queue_url.clone(),
        action_url: format!("http://{}", args.listen),
        token: Some(token.clone()),
        once: false,
        wait_seconds: 5,
        action_timeout_seconds: 30,
        concurrency: 10,
        connection: args.connection.clone(),
    };
    start("serve", &tx, move || super::serve::run(&serve))?;
    wait_listening(&args.listen, &rx)?;
    start("bridge", &tx, move || super::bridge::run(&bridge))?;
    start("relay", &tx, move || super::relay::run(&relay))?;
    summary(args, &names, &provisioned, &token, token_origin);

    match rx.recv() {
        Ok((who, Err(e))) => Err(stopped(who, e)),
        Ok((who, Ok(()))) => Err(Error::new(
            "DEV_STOPPED",
            format!("{who} stopped; the loop is incomplete without it"),
        )
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
                Ok(()) => Error::new("DEV_STOPPED", format!("{who} stopped")).into(),
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
    .into())
}

/// The host's bearer token: the flag, then TPF_SFN_TOKEN, then a fresh random one.
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

/// The user's config with what the loop needs set: the queue binding and its URL, the wakeup
/// table the bridge reads, and the name prefix the bridge derives machine names from.
fn dev_config(
    args: &DevArgs,
    queue_url: &str,
    names: &TableNames,
) -> Result<(String, String), Failure> {
    let (file, text) = match &args.config {
        Some(p) => read_config(p)?,
        None => ("tpf-sfn.toml (dev defaults)".to_owned(), String::new()),
    };
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        Error::new("CONFIG_SYNTAX", format!("{file}: {}", e.message()))
    })?;
    table.insert("name-prefix".into(), args.name_prefix.clone().into());
    let mut queue = toml::Table::new();
    queue.insert("queue-url".into(), queue_url.into());
    let mut binding = toml::Table::new();
    binding.insert("kind".into(), "queue".into());
    binding.insert("queue".into(), queue.into());
    table.insert("binding".into(), binding.into());
    let wakeup = table
        .entry("wakeup")
        .or_insert_with(|| toml::Table::new().into());
    if let Some(w) = wakeup.as_table_mut() {
        w.insert("table-name".into(), names.wakeup.clone().into());
    }
    Ok((format!("{file} (+ dev settings)"), table.to_string()))
}

fn provision(args: &DevArgs, names: &TableNames) -> Result<Provisioned, Failure> {
    let emulator = args.connection.endpoint_url.is_some()
        || std::env::var("AWS_ENDPOINT_URL").is_ok_and(|u| !u.is_empty());
    let role =
        match (&args.role_arn, emulator) {
            (Some(r), _) => r.clone(),
            (None, true) => PLACEHOLDER_ROLE.to_owned(),
            (None, false) => return Err(Error::new("DEV_ROLE", "no role for the machines")
                .with_hint(
                    "pass --role-arn (the machines' IAM role), or --endpoint-url for an emulator",
                )
                .into()),
        };
    let (contract_file, contract_bytes, release) = match &args.contract {
        Some(p) => (
            p.display().to_string(),
            read(p)?,
            match &args.release {
                Some(r) => Some((r.display().to_string(), read(r)?)),
                None => None,
            },
        ),
        None => (
            "restaurant-approval.pipeline-contract.json (bundled)".to_owned(),
            RESTAURANT_CONTRACT.to_vec(),
            Some((
                "restaurant-approval.pipeline-release.json (bundled)".to_owned(),
                RESTAURANT_RELEASE.to_vec(),
            )),
        ),
    };

    let compile_with = |config_file: &str, config_text: &str| {
        compile(&Input {
            contract_file: &contract_file,
            contract: &contract_bytes,
            release: release.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())),
            config: Some((config_file, config_text)),
            binding: Some(BindingKind::Queue),
            allow_unverified_hash: false,
        })
        .map_err(|d| {
            report::diagnostics(args.format, &d.0);
            Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new()))
        })
    };
    // The queue's URL is only known once it exists; a placeholder lets bad inputs fail before
    // anything is created.
    let (file, text) = dev_config(
        args,
        "https://sqs.us-east-1.amazonaws.com/123456789012/placeholder",
        names,
    )?;
    compile_with(&file, &text)?;

    let rt = runtime()?;
    let config = rt.block_on(args.connection.load());
    let tables = rt.block_on(create_all(&aws_sdk_dynamodb::Client::new(&config), names))?;
    let queue_name = format!("{}-actions", args.name_prefix);
    let queue_url = rt
        .block_on(
            aws_sdk_sqs::Client::new(&config)
                .create_queue()
                .queue_name(&queue_name)
                .send(),
        )
        .map_err(|e| errors::from_sdk("DEV", &format!("CreateQueue ({queue_name})"), e, |_| None))?
        .queue_url()
        .map(str::to_owned)
        .ok_or_else(|| {
            errors::failed(
                "DEV",
                "CreateQueue",
                Kind::Other,
                "no queue URL in the answer",
            )
        })?;

    let (config_file, config_text) = dev_config(args, &queue_url, names)?;
    let out = compile_with(&config_file, &config_text)?;
    let mut files = out.files.clone();
    // The host reads the contract (and release) from files; bundled inputs get written out.
    let (contract, release_path) = match &args.contract {
        Some(p) => (p.clone(), args.release.clone()),
        None => {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            files.push(("pipeline-contract.json".into(), text(RESTAURANT_CONTRACT)));
            files.push(("pipeline-release.json".into(), text(RESTAURANT_RELEASE)));
            (
                args.out.join("pipeline-contract.json"),
                Some(args.out.join("pipeline-release.json")),
            )
        }
    };
    output::write_all(&args.out, &files)?;

    let loaded = Release::load(&args.out)?;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let opts = Options {
        role_arn: Some(&role),
        dry_run: false,
        force_replace: false,
    };
    let deployed = rt.block_on(deploy::deploy(&sfn, &loaded, opts, &mut |_| {}))?;
    if deployed.refused() {
        return Err(Error::new(
            "DEV_DEPLOY",
            format!(
                "a machine of release {} is deployed with another definition",
                deployed.identity.release_version
            ),
        )
        .with_hint(format!(
            "run `tpf-sfn deploy --out {} --dry-run` to see the diff, or pick another --name-prefix",
            args.out.display()
        ))
        .into());
    }
    let machines: Vec<(&'static str, String, String)> = deployed
        .machines
        .iter()
        .map(|m| {
            (
                m.role,
                m.arn.clone().unwrap_or_else(|| m.name.clone()),
                action_word(&m.action).to_owned(),
            )
        })
        .collect();
    let driver_arn_prefix = deployed
        .machines
        .iter()
        .find(|m| m.role == "driver")
        .and_then(|m| {
            m.arn
                .as_deref()?
                .strip_suffix(m.name.as_str())
                .map(str::to_owned)
        })
        .ok_or_else(|| Error::new("DEV_DEPLOY", "the driver's ARN is unknown after deploy"))?;
    Ok(Provisioned {
        identity: out.plan.identity.clone(),
        tables: tables.into_iter().map(|t| (t.name, t.created)).collect(),
        queue_url,
        machines,
        driver_arn_prefix,
        contract,
        release: release_path,
    })
}

fn action_word(a: &crate::aws::plan::Action) -> &'static str {
    use crate::aws::plan::Action;
    match a {
        Action::Create => "created",
        Action::Unchanged => "unchanged",
        Action::Update { .. } => "updated",
        Action::Replace { .. } => "replaced",
        Action::Refuse { .. } => "refused",
    }
}

fn summary(args: &DevArgs, names: &TableNames, p: &Provisioned, token: &str, origin: &str) {
    let endpoint = args
        .connection
        .endpoint_url
        .clone()
        .unwrap_or_else(|| "AWS (default endpoints)".to_owned());
    let host = format!("http://{}", args.listen);
    let shown_token = if origin == "generated" { token } else { "" };
    match args.format {
        Format::Json => println!(
            "{}",
            json!({
                "endpoint": endpoint,
                "pipelineId": p.identity.pipeline_id,
                "releaseVersion": p.identity.release_version,
                "tables": p.tables.iter().map(|(n, c)| json!({"table": n, "created": c})).collect::<Vec<_>>(),
                "queueUrl": p.queue_url,
                "machines": p.machines.iter().map(|(r, a, w)| json!({"role": r, "arn": a, "action": w})).collect::<Vec<_>>(),
                "host": host,
                "tenant": args.tenant,
                "token": {"from": origin, "value": if shown_token.is_empty() { None } else { Some(shown_token) }},
                "out": args.out.display().to_string(),
            })
        ),
        Format::Text => {
            println!(
                "tpf-sfn dev: {} release {} on {endpoint}",
                p.identity.pipeline_id, p.identity.release_version
            );
            let created = p.tables.iter().filter(|(_, c)| *c).count();
            println!(
                "  tables   {} ({created} created, {} existed)",
                p.tables
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                p.tables.len() - created
            );
            println!("  queue    {}  (the driver's action calls)", p.queue_url);
            for (role, arn, word) in &p.machines {
                println!("  {role:<8} {arn}  ({word})");
            }
            println!("  compiled {}", args.out.display());
            println!(
                "  host     {host}  Action API v1 + control plane, DynamoDB store, tenant `{}` active",
                args.tenant
            );
            println!(
                "  bridge   streams of {} and {} -> starts and wakes drivers",
                names.execution, names.wakeup
            );
            println!(
                "  relay    {} -> {host} -> SendTaskSuccess/Failure",
                p.queue_url
            );
            if shown_token.is_empty() {
                println!("  token    from {origin}");
            } else {
                println!("  token    {shown_token}  (generated; pass --token or TPF_SFN_TOKEN to choose one)");
            }
            println!("  schedule none: the sweeper is deployed but not scheduled here; start it by hand to sweep");
            println!("try:");
            println!(
                "  curl -s -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' \\\n    -d '{{\"pipelineId\":\"{}\",\"inputShape\":\"UNI\",\"inputPayload\":{{\"orderId\":\"o-1\"}},\"idempotencyKey\":\"o-1\",\"outputStreaming\":false}}' \\\n    {host}/tpf/control-plane/tenants/{}/executions",
                if shown_token.is_empty() { "$TPF_SFN_TOKEN" } else { shown_token },
                p.identity.pipeline_id,
                args.tenant
            );
            let table = crate::cmd::tables::flags(&args.tables);
            println!(
                "  tpf-sfn status --out {} --tenant {} --execution <executionId>{table}{}",
                args.out.display(),
                args.tenant,
                args.connection
                    .endpoint_url
                    .as_deref()
                    .map(|u| format!(" --endpoint-url {u}"))
                    .unwrap_or_default()
                    + &args
                        .connection
                        .region
                        .as_deref()
                        .map(|r| format!(" --region {r}"))
                        .unwrap_or_default()
            );
            println!("Ctrl-C stops host, bridge and relay.");
        }
    }
}
