//! What `status` needs from a release's manifest, whichever backend and driver protocol compiled
//! it: the pinned identity, where its drivers run, and how their generations are named.

use std::path::Path;

use serde::Deserialize;

use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::Backend;

use crate::aws::release::{invalid, Identity, Release};
use crate::error::Error;

/// Where a release's driver generations run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Executions of a Step Functions state machine.
    StateMachine,
    /// Durable executions of a Lambda function.
    DurableFunction,
}

/// How the driver's generations are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Action API v1: the TPF execution id, then `-g<N>`, `-r<V>`, `-s<V>` suffixes.
    Lineage,
    /// TPF's gateway: `tpf-` + a hash of tenant, idempotency key and generation, generation 1
    /// first, as TPF's own host names them.
    Gateway,
}

#[derive(Debug, Clone)]
pub struct Target {
    pub identity: Identity,
    /// The state machine's or the driver function's name.
    pub driver: String,
    pub host: Host,
    pub naming: Naming,
    pub wakeup_table: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Shape {
    identity: Identity,
    #[serde(default)]
    machines: Option<Machines>,
    #[serde(default)]
    function: Option<Named>,
    #[serde(default)]
    binding: Option<Binding>,
    wakeup_table: String,
}

#[derive(Deserialize)]
struct Machines {
    driver: Named,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

#[derive(Deserialize)]
struct Binding {
    #[serde(default)]
    kind: String,
}

impl Target {
    pub fn read(dir: &Path) -> Result<Self, Error> {
        let (path, bytes) = Release::manifest_bytes(dir)?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| invalid(&path, e))?;
        let backend = Backend::of_manifest(&value);
        let shape: Shape = serde_json::from_value(value).map_err(|e| invalid(&path, e))?;
        let naming = match shape.binding.as_ref().map(|b| b.kind.as_str()) {
            Some(kind) if kind == BindingKind::Gateway.as_str() => Naming::Gateway,
            _ => Naming::Lineage,
        };
        let missing = |what: &str| {
            Error::new(
                "RELEASE_MANIFEST_INVALID",
                format!("{}: no {what}", path.display()),
            )
            .with_hint(
                "run `tpf-sfn compile ... --out DIR` again; never edit compiled files by hand",
            )
        };
        let (host, driver) = match backend {
            Some(Backend::LambdaDurable) => (
                Host::DurableFunction,
                shape.function.ok_or_else(|| missing("`function`"))?.name,
            ),
            Some(Backend::StepFunctions) => (
                Host::StateMachine,
                shape
                    .machines
                    .ok_or_else(|| missing("`machines`"))?
                    .driver
                    .name,
            ),
            None => return Err(missing("backend this tpf-sfn knows")),
        };
        if driver.trim().is_empty() {
            return Err(missing("driver name"));
        }
        Ok(Self {
            identity: shape.identity,
            driver,
            host,
            naming,
            wakeup_table: shape.wakeup_table,
        })
    }

    /// What the operator calls to stop a driver generation.
    pub fn stop_call(&self) -> &'static str {
        match self.host {
            Host::StateMachine => "StopExecution",
            Host::DurableFunction => "StopDurableExecution",
        }
    }

    /// The driver, as the verdicts name it.
    pub fn driver_kind(&self) -> &'static str {
        match self.host {
            Host::StateMachine => "driver machine",
            Host::DurableFunction => "durable driver function",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(manifest: serde_json::Value) -> Result<Target, Error> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        Target::read(dir.path())
    }

    fn manifest(backend: Option<&str>, kind: &str) -> serde_json::Value {
        let mut m = serde_json::json!({
            "identity": {"pipelineId": "p", "contractVersion": "c", "releaseVersion": "r"},
            "machines": {"driver": {"name": "tpf-p-driver"}},
            "function": {"name": "tpf-p-durable"},
            "binding": {"kind": kind},
            "wakeupTable": "tpf_sfn_wakeup",
        });
        if let Some(b) = backend {
            m["backend"] = b.into();
        }
        m
    }

    #[test]
    fn the_backend_and_the_binding_choose_the_host_and_the_names() {
        let sfn = read(manifest(None, "http")).unwrap();
        assert_eq!(
            (sfn.host, sfn.naming),
            (Host::StateMachine, Naming::Lineage)
        );
        assert_eq!(sfn.driver, "tpf-p-driver");
        let durable = read(manifest(Some("lambda-durable"), "gateway")).unwrap();
        assert_eq!(
            (durable.host, durable.naming),
            (Host::DurableFunction, Naming::Gateway)
        );
        assert_eq!(durable.driver, "tpf-p-durable");
    }

    #[test]
    fn a_backend_this_tpf_sfn_does_not_know_is_refused() {
        let e = read(manifest(Some("cloud-workflows"), "gateway")).unwrap_err();
        assert_eq!(e.code(), "RELEASE_MANIFEST_INVALID", "{e}");
    }
}
