//! `tpf-sfn releases` and `tpf-sfn prune`.

use crate::stdio::outln;
use serde_json::json;

use crate::aws::releases::{self, ReleaseMachine};
use crate::cli::{Backend, Format, PruneArgs, ReleasesArgs};
use crate::exit::CmdResult;

pub fn releases(args: &ReleasesArgs) -> CmdResult {
    let machines = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let prefix = args.name_prefix.as_deref();
        match args.backend {
            Backend::StepFunctions => {
                releases::list(&aws_sdk_sfn::Client::new(&conf), prefix).await
            }
            Backend::LambdaDurable => {
                releases::list_durable(&aws_sdk_lambda::Client::new(&conf), prefix).await
            }
        }
    })??;
    match args.format {
        Format::Json => outln!("{}", json!({ "machines": machines })),
        Format::Text => {
            if machines.is_empty() {
                match args.backend {
                    Backend::StepFunctions => outln!("no tpf-sfn release machines"),
                    Backend::LambdaDurable => outln!("no tpf-sfn durable release functions"),
                }
            }
            for m in &machines {
                print_machine(m);
            }
        }
    }
    Ok(())
}

fn print_machine(m: &ReleaseMachine) {
    outln!("{} ({})", m.name, m.role);
    outln!(
        "  pipeline {}  release {}",
        m.identity.pipeline_id,
        m.identity.release_version
    );
    outln!(
        "  definition sha256 {}  compiler {}  running executions {}",
        m.definition_sha256,
        m.compiler_version,
        m.running_executions
    );
}

pub fn prune(args: &PruneArgs) -> CmdResult {
    let yes = args.yes;
    let registry = crate::cmd::tables::table_names(&args.tables)?.release;
    let (decisions, registry_found, deleted) = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let ddb = aws_sdk_dynamodb::Client::new(&conf);
        let prefix = args.name_prefix.as_deref();
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let lambda = aws_sdk_lambda::Client::new(&conf);
        let machines = match args.backend {
            Backend::StepFunctions => releases::list(&sfn, prefix).await?,
            Backend::LambdaDurable => releases::list_durable(&lambda, prefix).await?,
        };
        let active = releases::active_releases(&ddb, &registry).await?;
        let decisions = releases::prune_plan(&machines, active.as_ref());
        let mut deleted = Vec::new();
        if yes {
            for d in decisions.iter().filter(|d| d.delete) {
                match args.backend {
                    Backend::StepFunctions => releases::delete(&sfn, &d.machine.arn).await?,
                    Backend::LambdaDurable => {
                        releases::delete_durable(&lambda, &d.machine.name).await?
                    }
                }
                deleted.push(d.machine.name.clone());
            }
        }
        Ok::<_, crate::error::Error>((decisions, active.is_some(), deleted))
    })??;
    match args.format {
        Format::Json => outln!(
            "{}",
            json!({"decisions": decisions, "registryFound": registry_found, "deleted": deleted, "dryRun": !yes})
        ),
        Format::Text => {
            if !registry_found {
                outln!(
                    "warning: release registry table {registry} not found; only RUNNING executions protect a release"
                );
            }
            for d in &decisions {
                let verb = match (d.delete, yes) {
                    (true, true) => "deleted",
                    (true, false) => "would delete",
                    (false, _) => "keep",
                };
                outln!("{verb}: {} ({})", d.machine.name, d.reason);
            }
            if !yes && decisions.iter().any(|d| d.delete) {
                outln!("dry run: pass --yes to delete");
            }
        }
    }
    Ok(())
}
