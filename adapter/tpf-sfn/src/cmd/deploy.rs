//! `tpf-sfn deploy`.

use crate::stdio::{errln, outln};
use serde_json::json;

use tpf_sfn_compiler::config::placeholder;
use tpf_sfn_compiler::{Diagnostic, Diagnostics, Location};

use crate::aws::client::Connection;
use crate::aws::deploy::{self, Options, Report};
use crate::aws::plan::Action;
use crate::aws::release::{refuse_action_api_v1, Release};
use crate::cli::{DeployArgs, Format};
use crate::exit::{CmdResult, Failure};

pub fn run(args: &DeployArgs) -> CmdResult {
    let manifest = read_manifest(&args.out);
    if let Some(m) = &manifest {
        refuse_action_api_v1(&args.out, m)?;
    }
    if let Some(manifest) = manifest.filter(crate::aws::durable_deploy::is_durable) {
        return super::deploy_durable::run(args, manifest);
    }
    let release = Release::load(&args.out)?;
    let refusal = refuse_placeholders(&release, &args.connection);
    refused_around_the_plan(refusal, args.dry_run, args.format, |refusal| {
        plan_and_report(args, &release, refusal)
    })
}

/// A placeholder refusal, said before any call (no credentials or network are needed to be
/// told), except on a dry run: that shows the plan first, then the refusal, as `terraform plan`
/// does, and ends with the refusal's exit even when the plan itself failed. With
/// `--format json` the run prints one document: the plan's, with the refusal's own JSON
/// (`{"diagnostics": […]}` or `{"error": …}`) merged in (`plan` receives it), or the refusal's
/// with the plan's own failure as `planError`.
pub(super) fn refused_around_the_plan(
    refusal: CmdResult,
    dry_run: bool,
    format: Format,
    plan: impl FnOnce(Option<serde_json::Value>) -> CmdResult,
) -> CmdResult {
    let refusal = match refusal {
        Err(refusal) if dry_run => refusal,
        refusal => {
            refusal?;
            return plan(None);
        }
    };
    if format == Format::Json {
        let said = refusal.to_json();
        return match plan(said.clone()) {
            Ok(()) | Err(Failure::Findings) => Err(Failure::SaidInOutput),
            Err(failed) => {
                let mut doc = said.unwrap_or_else(|| json!({}));
                doc["planError"] = failed
                    .to_json()
                    .and_then(|j| j.get("error").cloned())
                    .unwrap_or(serde_json::Value::Null);
                outln!("{doc}");
                Err(Failure::SaidInOutput)
            }
        };
    }
    if let Err(failure) = plan(None) {
        if let Some(text) = failure.report() {
            errln!("{text}");
        }
    }
    Err(refusal)
}

/// Plans the release against the account and carries the plan out unless `--dry-run`, printing
/// the report.
/// `refusal`: the placeholder refusal a JSON dry run says inside its one document.
fn plan_and_report(
    args: &DeployArgs,
    release: &Release,
    refusal: Option<serde_json::Value>,
) -> CmdResult {
    let opts = Options {
        role_arn: args.role_arn.as_deref(),
        dry_run: args.dry_run,
        force_replace: args.force_replace,
    };
    let text = args.format == Format::Text;
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let mut progress = |line: String| {
            if text {
                outln!("{line}");
            }
        };
        deploy::deploy(&sfn, release, opts, &mut progress).await
    })?
    .map_err(|e| e.verbose(args.verbose))?;
    match args.format {
        Format::Text => print_text(&report),
        Format::Json => {
            let doc = json!({
                "report": report,
                "refused": report.refused(),
            });
            outln!("{}", with_refusal(doc, refusal));
        }
    }
    if report.refused() {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

/// A JSON dry run's document with the placeholder refusal's keys merged in.
pub(super) fn with_refusal(
    mut doc: serde_json::Value,
    refusal: Option<serde_json::Value>,
) -> serde_json::Value {
    if let (Some(serde_json::Value::Object(said)), Some(doc)) = (refusal, doc.as_object_mut()) {
        doc.extend(said);
    }
    doc
}

/// The release's manifest as JSON, when it reads as such (`Release::load` and
/// `DurableRelease::load` report an unreadable one in their own words).
fn read_manifest(out: &std::path::Path) -> Option<serde_json::Value> {
    let path = out.join(tpf_sfn_compiler::lowering::manifest::MANIFEST_FILE);
    let bytes = crate::input::read(&path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Placeholder endpoints and ARNs deploy only to a local emulator: on AWS they would create
/// machines that reach nothing. Checked before any call, so no credentials or network are needed
/// to be told.
fn refuse_placeholders(release: &Release, connection: &Connection) -> CmdResult {
    // Where the calls go decides what is refused: a malformed endpoint first.
    connection.check()?;
    refuse_placeholder_parameters(
        &release.manifest.identity,
        &release.manifest.binding.parameters,
        connection,
    )
}

pub(super) fn refuse_placeholder_parameters(
    identity: &crate::aws::release::Identity,
    parameters: &std::collections::BTreeMap<String, String>,
    connection: &Connection,
) -> CmdResult {
    if connection.emulator_endpoint().is_some() {
        return Ok(());
    }
    let found = placeholder::found(parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if found.is_empty() {
        return Ok(());
    }
    Err(Failure::Input(Diagnostics(
        found
            .into_iter()
            .map(|(key, value)| {
                Diagnostic::error(
                    "DEPLOY_PLACEHOLDER",
                    Location::pointer("tpf-sfn.toml", key),
                    format!(
                        "release {} was compiled with the placeholder `{value}` for `{key}`; on AWS its \
                         machines would reach nothing (only a local emulator endpoint takes placeholders)",
                        identity
                    ),
                )
                .with_hint(format!("{}, then compile again", placeholder::hint(key)))
            })
            .collect(),
    )))
}

fn print_text(report: &Report) {
    let verb = if report.dry_run { "plan" } else { "deploy" };
    outln!("{verb}: {}", report.identity);
    for m in &report.machines {
        let what = format!("{} {}", m.role, m.name);
        match &m.action {
            Action::Create if report.dry_run => outln!("  create: {what}"),
            Action::Create => {}
            Action::Unchanged => outln!("  unchanged: {what} (no write calls)"),
            Action::Update { tags, settings } => {
                let head = if report.dry_run { "update" } else { "updated" };
                let mut parts = settings.clone();
                if !tags.is_empty() {
                    parts.push(format!("tags {}", tags.join(", ")));
                }
                outln!("  {head}: {what}: {}", parts.join("; "));
            }
            Action::Refuse { diff } => {
                outln!(
                    "  refuse: {what}: the deployed definition differs, and executions pinned to release {} would mix definitions",
                    report.identity.release_version
                );
                for line in diff {
                    outln!("      {line}");
                }
            }
            Action::Replace { diff, .. } => {
                let head = if report.dry_run {
                    "replace"
                } else {
                    "replaced"
                };
                outln!("  {head}: {what} (--force-replace)");
                for line in diff {
                    outln!("      {line}");
                }
                if m.running_executions.is_empty() {
                    outln!("  warning: no RUNNING executions");
                } else {
                    outln!(
                        "  warning: {} RUNNING execution(s) keep the old definition; generations they start get the new one: {}",
                        m.running_executions.len(),
                        m.running_executions.join(", ")
                    );
                }
            }
        }
    }
    let writes = report.write_calls;
    if report.refused() {
        let refusal = crate::error::Error::new(
            "DEPLOY_DEFINITION_CHANGED",
            "refused: a release's definition is never changed in place",
        )
        .with_hint("bump the release version (a new machine), or pass --force-replace if the change is known to be compatible");
        outln!("{}", refusal.report());
    } else if report.dry_run {
        outln!("dry run: no write calls");
    } else if writes == 0 {
        outln!("unchanged: {} (no write calls)", report.identity);
    } else {
        outln!("done: {writes} write call(s)");
    }
}
