//! TPF's `pipeline-release.json` (`PipelineReleaseDescriptor`) and the pinned identity.

/// The identity a driver pins and every action call carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub schema_version: u32,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub artifacts: Vec<Artifact>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    pub artifact_id: String,
    pub kind: String,
    pub uri: String,
    pub digest: String,
    pub step_ids: Vec<String>,
    pub capabilities: Vec<String>,
}

// STUB
pub fn load_release(_file: &str, bytes: &[u8]) -> Result<Release, crate::Diagnostics> {
    let v: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    Ok(Release {
        schema_version: 1,
        pipeline_id: s("pipelineId"),
        contract_version: s("contractVersion"),
        release_version: s("releaseVersion"),
        artifacts: vec![],
    })
}
pub fn resolve_identity(
    c: &crate::contract::Contract,
    r: Option<(&str, &Release)>,
) -> Result<Identity, crate::Diagnostics> {
    Ok(Identity {
        pipeline_id: c.pipeline_id.clone(),
        contract_version: c.contract_version.clone(),
        release_version: r
            .map(|(_, r)| r.release_version.clone())
            .unwrap_or(c.contract_version.clone()),
    })
}
