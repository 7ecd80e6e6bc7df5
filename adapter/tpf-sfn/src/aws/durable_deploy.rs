//! `deploy` of a release compiled with `--backend lambda-durable`: the release's driver function
//! and its published version, the version executions start on.
//!
//! The same rules as a Step Functions release: a release's spec is never changed in place (a
//! function whose `tpf-sfn:definition-sha256` tag differs is refused, unless `--force-replace`,
//! which publishes a new version: executions already running stay on theirs), and an unchanged
//! deploy makes no write calls.

use std::collections::HashMap;
use std::path::Path;

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::{Architecture, DurableConfig, Environment, FunctionCode, Runtime};
use serde::{Deserialize, Serialize};
use tpf_durable_driver::DurableSpec;
use tpf_sfn_compiler::durable::cloudformation::{env, EXECUTION_TIMEOUT_SECONDS, RETENTION_DAYS};
use tpf_sfn_compiler::lowering::hash::sha256_hex;

use super::errors::{self, Kind};
use crate::error::Error;

const SCOPE: &str = "DEPLOY";
/// The tag the compiler writes the spec's sha256 under.
const SHA_TAG: &str = "tpf-sfn:definition-sha256";

/// The durable manifest as deploy reads it back.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableManifestView {
    pub identity: super::release::Identity,
    pub function: FunctionView,
    #[serde(default)]
    pub binding: super::release::BindingView,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionView {
    pub name: String,
    pub spec: String,
    pub spec_sha256: String,
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
}

/// A durable release read back: the manifest and the compact spec, checked against its sha256.
#[derive(Debug, Clone)]
pub struct DurableRelease {
    pub manifest: DurableManifestView,
    pub spec: DurableSpec,
    pub spec_text: String,
}

/// Whether `manifest.json` in `dir` is a durable release's (`"backend": "lambda-durable"`).
pub fn is_durable(manifest: &serde_json::Value) -> bool {
    tpf_sfn_compiler::Backend::of_manifest(manifest)
        == Some(tpf_sfn_compiler::Backend::LambdaDurable)
}

impl DurableRelease {
    pub fn load(dir: &Path, manifest: serde_json::Value) -> Result<DurableRelease, Error> {
        let hint = "compile the release again with `tpf-sfn compile --backend lambda-durable`";
        let manifest: DurableManifestView = serde_json::from_value(manifest).map_err(|e| {
            Error::new(
                "RELEASE_MANIFEST_INVALID",
                format!("manifest.json is not a durable release's manifest: {e}"),
            )
            .with_hint(hint)
        })?;
        let file = &manifest.function.spec;
        if file.is_empty() || file.contains(['/', '\\']) || file == ".." {
            return Err(Error::new(
                "RELEASE_MANIFEST_INVALID",
                format!("manifest.json names the spec `{file}`, which is not a file next to it"),
            )
            .with_hint(hint));
        }
        let path = dir.join(file);
        let bytes = crate::input::read(&path)?;
        let spec: DurableSpec = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                "RELEASE_DEFINITION_INVALID",
                format!("{} is not a durable driver spec: {e}", path.display()),
            )
            .with_hint(hint)
        })?;
        let spec_text = serde_json::to_string(&spec).map_err(|e| {
            Error::new(
                "RELEASE_DEFINITION_INVALID",
                format!("{}: {e}", path.display()),
            )
            .with_hint("compile the release again into --out")
        })?;
        if sha256_hex(&spec_text) != manifest.function.spec_sha256 {
            return Err(Error::new(
                "RELEASE_DEFINITION_MODIFIED",
                format!(
                    "{} does not match the sha256 manifest.json recorded for it: it was edited after compiling",
                    path.display()
                ),
            )
            .with_hint(hint));
        }
        Ok(DurableRelease {
            manifest,
            spec,
            spec_text,
        })
    }
}

pub struct Options<'a> {
    pub role_arn: Option<&'a str>,
    pub code_zip: Option<&'a Path>,
    pub dry_run: bool,
    pub force_replace: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum Action {
    Create,
    Unchanged,
    /// The function exists without a published version (a deploy that stopped half-way):
    /// publish one.
    Publish,
    Refuse {
        deployed_sha256: String,
    },
    Replace {
        deployed_sha256: String,
    },
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub identity: super::release::Identity,
    pub function: String,
    pub action: Action,
    /// The published version executions of this release start on.
    pub version_arn: Option<String>,
    pub dry_run: bool,
    pub write_calls: u32,
}

impl Report {
    pub fn refused(&self) -> bool {
        matches!(self.action, Action::Refuse { .. })
    }
}

pub async fn deploy(
    lambda: &aws_sdk_lambda::Client,
    release: &DurableRelease,
    opts: Options<'_>,
) -> Result<Report, Error> {
    let name = &release.manifest.function.name;
    let want = &release.manifest.function.spec_sha256;
    let deployed = match lambda.get_function().function_name(name).send().await {
        Ok(f) => Some(f.tags.unwrap_or_default()),
        Err(e)
            if e.as_service_error()
                .is_some_and(|s| s.is_resource_not_found_exception()) =>
        {
            None
        }
        Err(e) => {
            return Err(errors::from_sdk(
                SCOPE,
                "GetFunction",
                e,
                errors::lambda::get,
            ))
        }
    };
    let published = match deployed {
        Some(_) => latest_version(lambda, name).await?,
        None => None,
    };
    let action = match (&deployed, &published) {
        (None, _) => Action::Create,
        (Some(tags), _) if tags.get(SHA_TAG) != Some(want) => {
            let deployed_sha256 = tags.get(SHA_TAG).cloned().unwrap_or_default();
            if opts.force_replace {
                Action::Replace { deployed_sha256 }
            } else {
                Action::Refuse { deployed_sha256 }
            }
        }
        (Some(_), None) => Action::Publish,
        (Some(_), Some(_)) => Action::Unchanged,
    };
    let mut report = Report {
        identity: release.manifest.identity.clone(),
        function: name.clone(),
        version_arn: published.clone(),
        action: action.clone(),
        dry_run: opts.dry_run,
        write_calls: 0,
    };
    if opts.dry_run || matches!(action, Action::Unchanged | Action::Refuse { .. }) {
        return Ok(report);
    }
    match action {
        Action::Create => {
            let role = opts.role_arn.ok_or_else(|| {
                Error::new("USAGE", "deploy of a new durable driver function needs --role-arn")
                    .with_hint("the function's execution role: the managed AWSLambdaBasicDurableExecutionRolePolicy, dynamodb:PutItem on the wakeup table, lambda:InvokeFunction on the function's own versions (compile --emit cloudformation writes it)")
            })?;
            let zip = read_zip(opts.code_zip)?;
            let out = lambda
                .create_function()
                .function_name(name)
                .runtime(Runtime::Providedal2023)
                .handler("bootstrap")
                .role(role)
                .architectures(Architecture::X8664)
                .memory_size(256)
                .timeout(function_timeout(release))
                .code(FunctionCode::builder().zip_file(Blob::new(zip)).build())
                .environment(environment(release))
                .durable_config(
                    DurableConfig::builder()
                        .execution_timeout(EXECUTION_TIMEOUT_SECONDS as i32)
                        .retention_period_in_days(RETENTION_DAYS as i32)
                        .build(),
                )
                .set_tags(Some(tags(release)))
                .publish(true)
                .send()
                .await
                .map_err(|e| {
                    errors::from_sdk(SCOPE, "CreateFunction", e, errors::lambda::create)
                })?;
            report.write_calls += 1;
            report.version_arn = qualified(out.function_arn(), out.version());
        }
        Action::Publish => {
            report.version_arn = Some(publish(lambda, name).await?);
            report.write_calls += 1;
        }
        Action::Replace { .. } => {
            lambda
                .update_function_configuration()
                .function_name(name)
                .environment(environment(release))
                .send()
                .await
                .map_err(|e| {
                    errors::from_sdk(
                        SCOPE,
                        "UpdateFunctionConfiguration",
                        e,
                        errors::lambda::update,
                    )
                })?;
            let arn = publish(lambda, name).await?;
            lambda
                .tag_resource()
                .resource(unqualified(&arn))
                .set_tags(Some(tags(release)))
                .send()
                .await
                .map_err(|e| errors::from_sdk(SCOPE, "TagResource", e, errors::lambda::tag))?;
            report.write_calls += 3;
            report.version_arn = Some(arn);
        }
        Action::Unchanged | Action::Refuse { .. } => {}
    }
    Ok(report)
}

fn read_zip(path: Option<&Path>) -> Result<Vec<u8>, Error> {
    let path = path.ok_or_else(|| {
        Error::new(
            "USAGE",
            "deploy of a new durable driver function needs --code-zip",
        )
        .with_hint("the tpf-sfn-lambda zip (scripts/lambda-package.sh builds it)")
    })?;
    crate::input::read(path)
}

/// One invocation makes at most one action call, to its timeout, after replaying.
fn function_timeout(release: &DurableRelease) -> i32 {
    i32::try_from(release.spec.action_timeout_seconds + 30)
        .unwrap_or(900)
        .min(900)
}

fn environment(release: &DurableRelease) -> Environment {
    let vars = HashMap::from([
        (env::HANDLER.to_string(), env::HANDLER_VALUE.to_string()),
        (env::SPEC.to_string(), release.spec_text.clone()),
    ]);
    Environment::builder().set_variables(Some(vars)).build()
}

fn tags(release: &DurableRelease) -> HashMap<String, String> {
    release
        .manifest
        .function
        .tags
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

async fn publish(lambda: &aws_sdk_lambda::Client, name: &str) -> Result<String, Error> {
    let out = lambda
        .publish_version()
        .function_name(name)
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "PublishVersion", e, errors::lambda::publish))?;
    qualified(out.function_arn(), out.version()).ok_or_else(|| {
        errors::failed(
            SCOPE,
            "PublishVersion",
            Kind::Other,
            "the answer names no version",
        )
    })
}

/// The newest published version's ARN (`$LATEST` is never one).
async fn latest_version(
    lambda: &aws_sdk_lambda::Client,
    name: &str,
) -> Result<Option<String>, Error> {
    let mut best: Option<(u64, String)> = None;
    let mut pages = lambda
        .list_versions_by_function()
        .function_name(name)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| {
            errors::from_sdk(SCOPE, "ListVersionsByFunction", e, errors::lambda::versions)
        })?;
        for v in page.versions() {
            let Some(n) = v.version().and_then(|n| n.parse::<u64>().ok()) else {
                continue;
            };
            if best.as_ref().is_none_or(|(b, _)| n > *b) {
                if let Some(arn) = qualified(v.function_arn(), v.version()) {
                    best = Some((n, arn));
                }
            }
        }
    }
    Ok(best.map(|(_, arn)| arn))
}

/// `<function ARN>:<version>`, whether or not the service already qualified it.
fn qualified(arn: Option<&str>, version: Option<&str>) -> Option<String> {
    let (arn, version) = (arn?, version?);
    if arn.ends_with(&format!(":{version}")) {
        Some(arn.to_string())
    } else {
        Some(format!("{arn}:{version}"))
    }
}

fn unqualified(arn: &str) -> String {
    // arn:aws:lambda:region:account:function:name[:qualifier]
    arn.split(':').take(7).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_arns() {
        let f = "arn:aws:lambda:us-east-1:123456789012:function:d";
        assert_eq!(qualified(Some(f), Some("3")).unwrap(), format!("{f}:3"));
        assert_eq!(
            qualified(Some(&format!("{f}:3")), Some("3")).unwrap(),
            format!("{f}:3")
        );
        assert_eq!(unqualified(&format!("{f}:3")), f);
        assert_eq!(qualified(None, Some("3")), None);
    }
}
