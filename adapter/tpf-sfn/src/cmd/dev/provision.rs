//! What `dev` sets up before it runs anything: the tables, the gateway queue, the compiled
//! release (the gateway binding with its queue transport) and its deployed machine.

use crate::stdio::errln;
use std::path::PathBuf;

use tpf_sfn_compiler::bundled::{
    RESTAURANT_CONTRACT, RESTAURANT_CONTRACT_FILE, RESTAURANT_RELEASE, RESTAURANT_RELEASE_FILE,
};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;

use crate::aws::deploy::{self, Options};
use crate::aws::errors::{self, Kind};
use crate::aws::release::Release;
use crate::aws::tables::{create_all, TableNames};
use crate::cli::DevArgs;
use crate::cmd::inputs::{config_path, read_config};
use crate::cmd::tables::runtime;
use crate::error::Error;
use crate::exit::Failure;
use crate::input::read;
use crate::{output, report};

/// Emulators do not check roles; AWS needs a real one (`--role-arn`).
const PLACEHOLDER_ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-dev";

/// What `dev` set up, for the summary.
pub(super) struct Provisioned {
    pub(super) identity: tpf_wire::Identity,
    pub(super) tables: Vec<(String, bool)>,
    pub(super) queue_url: String,
    pub(super) machines: Vec<(&'static str, String, String)>,
    pub(super) driver_arn_prefix: String,
    pub(super) contract: PathBuf,
    pub(super) release: Option<PathBuf>,
}

impl Provisioned {
    /// The driver machine's ARN.
    pub(super) fn driver_arn(&self) -> String {
        self.machines
            .iter()
            .find(|(role, _, _)| *role == "driver")
            .map(|(_, arn, _)| arn.clone())
            .unwrap_or_default()
    }
}

/// The user's config with what the loop needs set: the gateway binding with the queue transport
/// and its URL (the rest of `[binding.gateway]`, such as the gateway function's ARN, kept) and
/// the name prefix machine names derive from.
fn dev_config(args: &DevArgs, queue_url: &str) -> Result<(String, String), Failure> {
    // The same rule as `compile`'s: `--config`, else the `./tpf-sfn.toml` `init` writes.
    let (file, text) = match config_path(args.config.as_ref()) {
        Some(p) => read_config(&p)?,
        None => ("tpf-sfn.toml (dev defaults)".to_owned(), String::new()),
    };
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        Error::new("CONFIG_SYNTAX", format!("{file}: {}", e.message()))
            .with_hint("fix the TOML at the place named; `tpf-sfn init` writes a valid file")
    })?;
    table.insert("name-prefix".into(), args.name_prefix.clone().into());
    let mut settings = table
        .get("binding")
        .and_then(|b| b.get("gateway"))
        .and_then(|g| g.as_table())
        .cloned()
        .unwrap_or_default();
    settings.insert("transport".into(), "queue".into());
    settings.insert("queue-url".into(), queue_url.into());
    let mut binding = toml::Table::new();
    binding.insert("kind".into(), "gateway".into());
    binding.insert("gateway".into(), settings.into());
    table.insert("binding".into(), binding.into());
    Ok((format!("{file} (+ dev settings)"), table.to_string()))
}

pub(super) fn provision(args: &DevArgs, names: &TableNames) -> Result<Provisioned, Failure> {
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
            format!("{RESTAURANT_CONTRACT_FILE} (bundled)"),
            RESTAURANT_CONTRACT.to_vec(),
            Some((
                format!("{RESTAURANT_RELEASE_FILE} (bundled)"),
                RESTAURANT_RELEASE.to_vec(),
            )),
        ),
    };

    let compile_with = |config_file: &str, config_text: &str| {
        compile(
            &Input {
                contract_file: &contract_file,
                contract: &contract_bytes,
                release: release.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())),
                config: Some((config_file, config_text)),
                binding: Some(BindingKind::Gateway),
                allow_unverified_hash: false,
            },
            tpf_sfn_compiler::sfn::StepFunctions,
        )
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
    )?;
    compile_with(&file, &text)?;
    // The host's failure script is read by `serve` once the loop starts; a bad one must be
    // refused now, before the first table, queue or machine exists.
    if let Some(path) = &args.script {
        let script = String::from_utf8_lossy(&read(path)?).into_owned();
        let releases: Vec<(&str, &[u8])> = release
            .iter()
            .map(|(f, b)| (f.as_str(), b.as_slice()))
            .collect();
        crate::host::pipeline::load(&contract_file, &contract_bytes, &releases, Some(&script), 1)?;
    }

    let rt = runtime()?;
    let config = rt.block_on(args.connection.load())?;
    let tables = rt.block_on(create_all(&aws_sdk_dynamodb::Client::new(&config), names))?;
    // The loop would start and then stall on a table it cannot use; say so before it starts.
    for t in &tables {
        for g in t.open_gaps() {
            errln!(
                "tpf-sfn dev: warning: {}: {}\n  = hint: {}",
                t.name,
                g.what,
                g.hint
            );
        }
    }
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

    let (config_file, config_text) = dev_config(args, &queue_url)?;
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
        .ok_or_else(|| {
            Error::new("DEV_DEPLOY", "the driver's ARN is unknown after deploy")
                .with_hint("run `tpf-sfn releases` against the endpoint to see what was deployed")
        })?;
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
