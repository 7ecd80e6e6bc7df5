//! Where a release's drivers run and how to start the durable ones: what the gateway
//! host's starter and the local wake-up need to name a driver (its Step Functions machine, or
//! the Lambda durable function version a release is deployed as).

pub mod durable;
pub(crate) mod streams;

use std::collections::BTreeMap;

use tpf_sfn_compiler::lowering::names::resource_name;

use crate::error::Error;

/// Where the drivers live: `<machine_arn_prefix><resource_name(name_prefix, pipeline, release, "driver")>`.
#[derive(Debug, Clone)]
pub struct Machines {
    /// e.g. `arn:aws:states:us-east-1:123456789012:stateMachine:`
    pub arn_prefix: String,
    /// The compiler's `name_prefix` (default `tpf`).
    pub name_prefix: String,
}

impl Machines {
    pub fn driver_arn(&self, pipeline_id: &str, release_version: &str) -> String {
        format!(
            "{}{}",
            self.arn_prefix,
            resource_name(&self.name_prefix, pipeline_id, release_version, "driver")
        )
    }
}

/// The releases deployed as Lambda durable functions, by `(pipelineId, releaseVersion)`: the
/// qualified function ARN (`...:function:<name>:<version>`) whose version runs that release's
/// driver. A release not listed here runs on its Step Functions machine ([`Machines`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DurableFunctions {
    by_release: BTreeMap<(String, String), String>,
}

impl DurableFunctions {
    /// From `{"<pipelineId>@<releaseVersion>": "<qualified function ARN>", ...}` (the
    /// `TPF_SFN_DURABLE_FUNCTIONS` setting, `--durable-functions`).
    pub fn parse(json: &str) -> Result<Self, Error> {
        let bad = |message: String| {
            Error::new("DURABLE_FUNCTIONS_MAP", message).with_hint(
                "give a JSON object {\"<pipelineId>@<releaseVersion>\": \"<qualified function ARN>\"}",
            )
        };
        let map: BTreeMap<String, String> = serde_json::from_str(json).map_err(|e| {
            bad(format!(
                "the durable functions map is not a JSON object of strings: {e}"
            ))
        })?;
        let mut by_release = BTreeMap::new();
        for (key, function) in map {
            let Some((pipeline, release)) = key.rsplit_once('@') else {
                return Err(bad(format!(
                    "key `{key}` is not `<pipelineId>@<releaseVersion>`"
                )));
            };
            if pipeline.is_empty() || release.is_empty() || function.trim().is_empty() {
                return Err(bad(format!("entry `{key}` has an empty part")));
            }
            by_release.insert((pipeline.to_owned(), release.to_owned()), function);
        }
        Ok(Self { by_release })
    }

    pub fn insert(&mut self, pipeline_id: &str, release_version: &str, function: &str) {
        self.by_release.insert(
            (pipeline_id.to_owned(), release_version.to_owned()),
            function.to_owned(),
        );
    }

    /// The function version that runs this release's driver, if it is a durable one.
    pub fn function(&self, pipeline_id: &str, release_version: &str) -> Option<&str> {
        self.by_release
            .get(&(pipeline_id.to_owned(), release_version.to_owned()))
            .map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by_release.is_empty()
    }
}
