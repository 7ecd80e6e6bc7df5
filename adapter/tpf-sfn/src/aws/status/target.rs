//! What `status` needs from a release's manifest, whichever backend and driver protocol compiled
//! it: the pinned identity, where its drivers run, and how their generations are named.

use std::path::Path;

use serde::Deserialize;

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
    #[serde(default)]
    backend: Option<String>,
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
        let shape: Shape = serde_json::from_slice(&bytes).map_err(|e| invalid(&path, e))?;
        let naming = match shape.binding.as_ref().map(|b| b.kind.as_str()) {
            Some("gateway") => Naming::Gateway,
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
        let (host, driver) = match shape.backend.as_deref() {
            Some("lambda-durable") => (
                Host::DurableFunction,
                shape.function.ok_or_else(|| missing("`function`"))?.name,
            ),
            _ => (
                Host::StateMachine,
                shape
                    .machines
                    .ok_or_else(|| missing("`machines`"))?
                    .driver
                    .name,
            ),
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
