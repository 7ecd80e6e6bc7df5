//! What `dev` sets up before it runs anything: the tables and the compiled release, and on Step
//! Functions the gateway queue (the binding's queue transport) and the deployed machine; the
//! durable backend's driver function runs on the emulator, where nothing is deployed.

use crate::stdio::errln;
use std::path::PathBuf;

use tpf_sfn_compiler::bundled::{RESTAURANT_CONTRACT, RESTAURANT_RELEASE};
use tpf_sfn_compiler::compile::{compile, Lowering};

use crate::aws::deploy::{self, Options};
use crate::aws::errors::{self, Kind};
use crate::aws::release::Release;
use crate::aws::tables::{create_all, TableNames};
use crate::cli::{Binding, DevArgs};
use crate::cmd::inputs::{config_path, read_config, InputFiles};
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

/// What the durable loop runs, once provisioned.
pub(super) struct DurableProvisioned {
    pub(super) identity: tpf_wire::Identity,
    pub(super) tables: Vec<(String, bool)>,
    /// The release's durable driver function.
    pub(super) function: String,
    /// Its compiled spec, as the function reads it.
    pub(super) spec: String,
    /// TPF's gateway, the numbered version the spec names (answered by `serve`).
    pub(super) gateway_arn: String,
    pub(super) contract: PathBuf,
    pub(super) release: Option<PathBuf>,
}

/// How the driver reaches TPF's gateway: through the queue the relay reads (Step Functions), or
/// by invoking the gateway function (Lambda durable functions, which have no queue transport).
enum Transport<'a> {
    Queue(&'a str),
    Lambda,
}

/// The user's config with what the loop needs set: the gateway binding with its transport (the
/// rest of `[binding.gateway]`, such as the gateway function's ARN, kept) and the name prefix
/// machine and function names derive from.
fn dev_config(args: &DevArgs, transport: Transport) -> Result<(String, String), Failure> {
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
    match transport {
        Transport::Queue(url) => {
            settings.insert("transport".into(), "queue".into());
            settings.insert("queue-url".into(), url.into());
        }
        Transport::Lambda => {
            settings.insert("transport".into(), "lambda".into());
            settings.remove("queue-url");
        }
    }
    let mut binding = toml::Table::new();
    binding.insert("kind".into(), "gateway".into());
    binding.insert("gateway".into(), settings.into());
    table.insert("binding".into(), binding.into());
    Ok((format!("{file} (+ dev settings)"), table.to_string()))
}

/// The contract and release the loop runs: the user's files, or the bundled sample (the config
/// is dev's, given to each compile).
struct Inputs(InputFiles);

impl Inputs {
    fn read(args: &DevArgs) -> Result<Inputs, Failure> {
        Ok(Inputs(match &args.contract {
            Some(p) => InputFiles::read(p, args.release.as_ref(), None)?,
            None => InputFiles::bundled(),
        }))
    }

    /// Compiles for `backend` under the config `(file, text)`; diagnostics are reported.
    fn compile<L: Lowering>(
        &self,
        args: &DevArgs,
        (config_file, config_text): (&str, &str),
        backend: L,
    ) -> Result<L::Output, Failure> {
        let mut input = self.0.input(Some(Binding::Gateway), false);
        input.config = Some((config_file, config_text));
        compile(&input, backend).map_err(|d| {
            report::diagnostics(args.format, &d.0);
            Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new()))
        })
    }

    /// The host's failure script is read by `serve` once the loop starts; a bad one must be
    /// refused now, before the first table, queue or machine exists.
    fn check_script(&self, args: &DevArgs) -> Result<(), Failure> {
        if let Some(path) = &args.script {
            let script = String::from_utf8_lossy(&read(path)?).into_owned();
            let releases: Vec<(&str, &[u8])> = self
                .0
                .release
                .iter()
                .map(|(f, b)| (f.as_str(), b.as_slice()))
                .collect();
            crate::host::pipeline::load(
                &self.0.contract_file,
                &self.0.contract,
                &releases,
                Some(&script),
                1,
            )?;
        }
        Ok(())
    }

    /// Writes the compiled `files` to `--out`, with the bundled inputs when there are no user
    /// files (the host reads the contract and release from files); the contract's and the
    /// release's paths.
    fn write(
        &self,
        args: &DevArgs,
        mut files: Vec<(String, String)>,
    ) -> Result<(PathBuf, Option<PathBuf>), Failure> {
        let paths = match &args.contract {
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
        Ok(paths)
    }
}

/// Creates the tables that do not exist; each with whether it was created.
fn create_tables(
    rt: &tokio::runtime::Runtime,
    config: &aws_config::SdkConfig,
    names: &TableNames,
) -> Result<Vec<(String, bool)>, Failure> {
    let tables = rt.block_on(create_all(&aws_sdk_dynamodb::Client::new(config), names))?;
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
    Ok(tables.into_iter().map(|t| (t.name, t.created)).collect())
}

/// The durable loop's provisioning: the release compiled for Lambda durable functions (its
/// driver invoking the gateway function, which `serve` answers locally) and the tables.
pub(super) fn provision_durable(
    args: &DevArgs,
    names: &TableNames,
) -> Result<DurableProvisioned, Failure> {
    let inputs = Inputs::read(args)?;
    let (file, text) = dev_config(args, Transport::Lambda)?;
    let out = inputs.compile(
        args,
        (&file, &text),
        tpf_sfn_compiler::durable::LambdaDurable,
    )?;
    inputs.check_script(args)?;
    let tpf_durable_driver::spec::Binding::Gateway { function_arn, .. } = &out.durable.spec.binding;
    let gateway_arn = function_arn.clone();

    let rt = runtime()?;
    let config = rt.block_on(args.connection.load())?;
    let tables = create_tables(&rt, &config, names)?;
    let (contract, release) = inputs.write(args, out.files.clone())?;
    Ok(DurableProvisioned {
        identity: out.plan.identity.clone(),
        tables,
        function: out.durable.function_name.clone(),
        spec: out.durable.spec_text.clone(),
        gateway_arn,
        contract,
        release,
    })
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
    let inputs = Inputs::read(args)?;
    let compile_with = |config_file: &str, config_text: &str| {
        inputs.compile(
            args,
            (config_file, config_text),
            tpf_sfn_compiler::sfn::StepFunctions,
        )
    };
    // The queue's URL is only known once it exists; a placeholder lets bad inputs fail before
    // anything is created.
    let (file, text) = dev_config(
        args,
        Transport::Queue("https://sqs.us-east-1.amazonaws.com/123456789012/placeholder"),
    )?;
    compile_with(&file, &text)?;
    inputs.check_script(args)?;

    let rt = runtime()?;
    let config = rt.block_on(args.connection.load())?;
    let tables = create_tables(&rt, &config, names)?;
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

    let (config_file, config_text) = dev_config(args, Transport::Queue(&queue_url))?;
    let out = compile_with(&config_file, &config_text)?;
    let (contract, release_path) = inputs.write(args, out.files.clone())?;

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
        tables,
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
