//! The durable backend's `manifest.json`: what was compiled, and for which function. No
//! timestamps: the same inputs give the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::DurableOutput;
use crate::backend::Backend;
use crate::contract::Contract;
use crate::lowering::hash::sha256_hex;
use crate::lowering::manifest::{
    self, binding_info, release_tags, BindingInfo, CompilerInfo, ContractInfo, IdentityInfo,
};
use crate::plan::DriverPlan;

pub const MANIFEST_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableManifest {
    pub manifest_version: u32,
    pub backend: &'static str,
    pub compiler: CompilerInfo,
    pub identity: IdentityInfo,
    pub contract: ContractInfo,
    pub binding: BindingInfo,
    pub function: FunctionInfo,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionInfo {
    pub name: String,
    pub spec: String,
    /// sha256 of the compact spec the function runs: the tag `deploy` compares to refuse a
    /// changed spec under a pinned release.
    pub spec_sha256: String,
    pub tags: BTreeMap<String, String>,
}

pub fn build(plan: &DriverPlan, contract: &Contract, out: &DurableOutput) -> DurableManifest {
    let spec_sha256 = sha256_hex(&out.spec_text);
    DurableManifest {
        manifest_version: MANIFEST_VERSION,
        backend: Backend::LambdaDurable.as_str(),
        compiler: manifest::compiler_info(),
        identity: manifest::identity_info(plan),
        contract: manifest::contract_info(plan, contract, None),
        binding: binding_info(plan),
        function: FunctionInfo {
            name: out.function_name.clone(),
            spec: super::SPEC_FILE.to_string(),
            tags: release_tags(plan, "durable-driver", &spec_sha256),
            spec_sha256,
        },
    }
}

pub fn render(m: &DurableManifest) -> String {
    crate::lowering::json_file(m)
}
