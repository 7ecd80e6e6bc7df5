//! `tpf-sfn deploy` of a `--backend lambda-durable` release.

use crate::stdio::outln;
use serde_json::json;

use crate::aws::durable_deploy::{self, Action, DurableRelease, Options, Report};
use crate::cli::{DeployArgs, Format};
use crate::exit::{CmdResult, Failure};

pub fn run(args: &DeployArgs, manifest: serde_json::Value) -> CmdResult {
    let release = DurableRelease::load(&args.out, manifest)?;
    let refusal = super::deploy::refuse_placeholder_parameters(
        &release.manifest.identity,
        &release.manifest.binding.parameters,
        &args.connection,
    );
    super::deploy::refused_around_the_plan(refusal, args.dry_run, args.format, |refusal| {
        plan_and_report(args, &release, refusal)
    })
}

/// Plans the driver function against the account and carries the plan out unless `--dry-run`,
/// printing the report.
/// `refusal`: the placeholder refusal a JSON dry run says inside its one document.
fn plan_and_report(
    args: &DeployArgs,
    release: &DurableRelease,
    refusal: Option<serde_json::Value>,
) -> CmdResult {
    let opts = Options {
        role_arn: args.role_arn.as_deref(),
        code_zip: args.code_zip.as_deref(),
        dry_run: args.dry_run,
        force_replace: args.force_replace,
    };
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        // Creating the function uploads its code in the request: a longer default bound.
        let timeout = args
            .connection
            .timeout_or(crate::aws::client::DEFAULT_UPLOAD_TIMEOUT);
        let lambda = aws_sdk_lambda::Client::from_conf(
            aws_sdk_lambda::config::Builder::from(&conf)
                .timeout_config(crate::aws::client::Connection::timeouts(timeout))
                .build(),
        );
        durable_deploy::deploy(&lambda, release, opts).await
    })?
    .map_err(|e| e.verbose(args.verbose))?;
    match args.format {
        Format::Text => print_text(&report),
        Format::Json => outln!(
            "{}",
            super::deploy::with_refusal(
                json!({"report": report, "refused": report.refused()}),
                refusal
            )
        ),
    }
    if report.refused() {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

fn print_text(r: &Report) {
    let verb = if r.dry_run { "plan" } else { "deploy" };
    outln!("{verb}: {} (Lambda durable functions)", r.identity);
    let f = &r.function;
    match &r.action {
        Action::Create if r.dry_run => outln!("  create: driver function {f} and its first published version"),
        Action::Create => {}
        Action::Publish if r.dry_run => outln!("  publish: a version of driver function {f} (it has none)"),
        Action::Publish => {}
        Action::Unchanged => outln!("  unchanged: driver function {f} (no write calls)"),
        Action::Refuse { deployed_sha256 } => outln!(
            "  refuse: driver function {f}: its spec (sha256 {deployed_sha256}) differs, and executions pinned to release {} would mix specs",
            r.identity.release_version
        ),
        Action::Replace { deployed_sha256 } => outln!(
            "  {}: driver function {f} (--force-replace; was sha256 {deployed_sha256}): a new published version; running executions stay on theirs",
            if r.dry_run { "replace" } else { "replaced" }
        ),
    }
    if let Some(v) = &r.version_arn {
        outln!("  version: {v} (start this release's executions here)");
    }
    if r.refused() {
        let refusal = crate::error::Error::new(
            "DEPLOY_DEFINITION_CHANGED",
            "refused: a release's spec is never changed in place",
        )
        .with_hint("bump the release version (a new function), or pass --force-replace if the change is known to be compatible");
        outln!("{}", refusal.report());
    } else if r.dry_run {
        outln!("dry run: no write calls");
    } else if r.write_calls == 0 {
        outln!("unchanged: {} (no write calls)", r.identity);
    } else {
        outln!("done: {} write call(s)", r.write_calls);
    }
}
