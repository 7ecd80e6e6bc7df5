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
