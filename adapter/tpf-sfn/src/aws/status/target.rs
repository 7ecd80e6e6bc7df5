//! What `status` needs from a release's manifest, whichever backend compiled it: the pinned
//! identity and where its drivers run. Only a gateway release has drivers `status` can name; a
//! release compiled for Action API v1 is `ACTION_API_V1_RETIRED`.

use std::path::Path;

use serde::Deserialize;

use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::Backend;

use crate::aws::release::{invalid, refuse_action_api_v1, Identity, Release};
use crate::error::Error;

/// Where a release's driver generations run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Executions of a Step Functions state machine.
    StateMachine,
    /// Durable executions of a Lambda function.
    DurableFunction,
}

#[derive(Debug, Clone)]
pub struct Target {
    pub identity: Identity,
    /// The state machine's or the driver function's name.
    pub driver: String,
    pub host: Host,
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
        refuse_action_api_v1(dir, &value)?;
        let backend = Backend::of_manifest(&value);
        let shape: Shape = serde_json::from_value(value).map_err(|e| invalid(&path, e))?;
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
        // TPF's generation names are a gateway driver's; no other binding is left to name.
        if shape.binding.as_ref().map(|b| b.kind.as_str()) != Some(BindingKind::Gateway.as_str()) {
            return Err(missing("gateway binding (`binding.kind = \"gateway\"`)"));
        }
        Ok(Self {
            identity: shape.identity,
            driver,
            host,
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
        });
        if let Some(b) = backend {
            m["backend"] = b.into();
        }
        m
    }

    #[test]
    fn the_backend_chooses_the_host() {
        let sfn = read(manifest(None, "gateway")).unwrap();
        assert_eq!(sfn.host, Host::StateMachine);
        assert_eq!(sfn.driver, "tpf-p-driver");
        let durable = read(manifest(Some("lambda-durable"), "gateway")).unwrap();
        assert_eq!(durable.host, Host::DurableFunction);
        assert_eq!(durable.driver, "tpf-p-durable");
    }

    /// A release compiled for Action API v1, on either backend, is refused by its binding's
    /// location, not read with v1's lineage names.
    #[test]
    fn an_action_api_v1_release_is_refused_with_its_code() {
        for backend in [None, Some("lambda-durable")] {
            for kind in ["http", "lambda", "queue"] {
                let e = read(manifest(backend, kind)).unwrap_err();
                assert_eq!(e.code(), "ACTION_API_V1_RETIRED", "{kind}: {e}");
                assert!(e.to_string().contains("#/binding/kind"), "{e}");
            }
        }
        // No binding at all is no gateway release either.
        let mut none = manifest(None, "gateway");
        none.as_object_mut().unwrap().remove("binding");
        let e = read(none).unwrap_err();
        assert_eq!(e.code(), "RELEASE_MANIFEST_INVALID", "{e}");
    }

    #[test]
    fn a_backend_this_tpf_sfn_does_not_know_is_refused() {
        let e = read(manifest(Some("cloud-workflows"), "gateway")).unwrap_err();
        assert_eq!(e.code(), "RELEASE_MANIFEST_INVALID", "{e}");
    }
}
