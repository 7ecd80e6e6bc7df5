//! The pinned identity: written on a TPF execution at submit, never changed, compiled into each
//! release's driver and carried by every action call.

use serde::{Deserialize, Serialize};

/// The identity a driver pins and every action call carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}
