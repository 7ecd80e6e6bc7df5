//! TPF's `pipeline-release.json` (`PipelineReleaseDescriptor`) and the pinned identity.
//!
//! Two forms exist in the wild, told apart by one key. Today's TPF writes
//! `compiledTruthArtifactId` and validates the descriptor with the rules in [`current`]; August
//! 2026's TPF wrote no such key and knew other artifact kinds. Both are read: the August form
//! with the rules of its day and a `RELEASE_AUGUST_FORM` warning, because today's TPF refuses it.

pub mod current;
pub mod uri;

use serde_json::{Map, Value};

use crate::contract::Contract;
use crate::diagnostic::{json_syntax, Diagnostic, Diagnostics, Location};
use crate::json_fields::{child, item, json_type, FieldCodes, FieldReader};

pub use tpf_wire::Identity;

#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub schema_version: u32,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    /// The artifact carrying the Compiled Truth: present in today's form, absent in August's.
    pub compiled_truth_artifact_id: Option<String>,
    pub artifacts: Vec<Artifact>,
    /// What the descriptor is allowed to be but a user should know (its form, promotability).
    pub warnings: Vec<Diagnostic>,
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

const RELEASE_KEYS: &[&str] = &[
    "schemaVersion",
    "pipelineId",
    "contractVersion",
    "releaseVersion",
    "artifacts",
];
const ARTIFACT_KEYS: &[&str] = &[
    "artifactId",
    "kind",
    "uri",
    "digest",
    "stepIds",
    "capabilities",
];

/// August's `PipelineReleaseRegistrar.SUPPORTED_KINDS`, compared case-insensitively as that TPF
/// did; today's kinds are [`current::Kind`].
pub const AUGUST_ARTIFACT_KINDS: &[&str] = &[
    "local-file",
    "jar",
    "native-binary",
    "container-image",
    "lambda-zip",
    "lambda-image",
    "external-endpoint",
];

const CODES: FieldCodes = FieldCodes {
    missing: "RELEASE_MISSING_FIELD",
    wrong_type: "RELEASE_FIELD_TYPE",
    unknown: "RELEASE_UNKNOWN_FIELD",
    unknown_hint: "no release descriptor TPF writes has this field, and TPF's release loader \
                   (PipelineReleaseDescriptor read by a Jackson mapper that fails on unknown \
                   properties) refuses fields it does not know",
};

/// Loads and checks a `pipeline-release.json` (`PipelineReleaseDescriptor`).
///
/// Unknown keys — at the top level or in an artifact — are errors (`RELEASE_UNKNOWN_FIELD`),
/// not warnings. TPF reads this file with a strict Jackson mapper at registration, so a
/// descriptor carrying, say, the `scope`/`runtime` keys of TPF's own docs example would be
/// refused by TPF anyway; accepting it here would let a driver pin a release that can never be
/// registered. The hint names the key and says to remove it.
pub fn load_release(file: &str, bytes: &[u8]) -> Result<Release, Diagnostics> {
    let obj = parse_object(file, bytes)?;
    if obj.contains_key("compiledTruthArtifactId") {
        current::load(file, &obj)
    } else {
        load_august(file, &obj)
    }
}

/// A descriptor as TPF's loader reads it, before today's validator runs: for callers (and the
/// golden vectors) that look at the two stages apart. The August form has no second stage.
pub fn read_release(file: &str, bytes: &[u8]) -> Result<Release, Diagnostics> {
    let obj = parse_object(file, bytes)?;
    if obj.contains_key("compiledTruthArtifactId") {
        current::read(file, &obj)
    } else {
        load_august(file, &obj)
    }
}

/// The document's top-level object.
fn parse_object(file: &str, bytes: &[u8]) -> Result<Map<String, Value>, Diagnostics> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(other) => Err(Diagnostic::error(
            "RELEASE_NOT_OBJECT",
            Location::pointer(file, ""),
            format!(
                "a release descriptor is a JSON object, this file holds {}",
                json_type(&other)
            ),
        )
        .with_hint("pass the pipeline-release.json you register with TPF")
        .into()),
        Err(e) => Err(json_syntax("RELEASE_JSON_SYNTAX", file, &e).into()),
    }
}

/// August 2026's form, with that TPF's rules.
fn load_august(file: &str, obj: &Map<String, Value>) -> Result<Release, Diagnostics> {
    let mut r = FieldReader::new(file, CODES);
    r.reject_unknown(obj, "", RELEASE_KEYS, "release");
    let schema_version = read_schema_version(&mut r, obj);
    let pipeline_id = r.str_nonblank(obj, "", "pipelineId", "RELEASE_BLANK_FIELD");
    let contract_version = r.str_nonblank(obj, "", "contractVersion", "RELEASE_BLANK_FIELD");
    let release_version = r.str_nonblank(obj, "", "releaseVersion", "RELEASE_BLANK_FIELD");
    let artifacts = read_artifacts(&mut r, obj);

    match (
        r.has_errors(),
        schema_version,
        pipeline_id,
        contract_version,
        release_version,
    ) {
        (
            false,
            Some(schema_version),
            Some(pipeline_id),
            Some(contract_version),
            Some(release_version),
        ) => Ok(Release {
            schema_version,
            pipeline_id,
            contract_version,
            release_version,
            compiled_truth_artifact_id: None,
            artifacts,
            warnings: vec![august_form(file)],
        }),
        _ => Err(Diagnostics(r.diags)),
    }
}

/// The warning every August-form descriptor carries.
fn august_form(file: &str) -> Diagnostic {
    Diagnostic::warning(
        "RELEASE_AUGUST_FORM",
        Location::pointer(file, ""),
        "this release descriptor has August 2026's form (no `compiledTruthArtifactId`); it was read with \
         that TPF's rules",
    )
    .with_hint(
        "today's TPF refuses a descriptor without `compiledTruthArtifactId`: name the artifact that carries \
         the Compiled Truth, give kinds, URIs and digests today's form (`docs/compiler.md`), and place each \
         step on exactly one deployable artifact",
    )
}

fn read_schema_version(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Option<u32> {
    let n = r.int_req(obj, "", "schemaVersion")?;
    if n != 1 {
        r.error(
            "RELEASE_SCHEMA_VERSION",
            "/schemaVersion",
            format!("unsupported release schemaVersion {n}; TPF accepts exactly 1"),
            "release descriptors have their own schemaVersion, independent of the contract's; set it to 1",
        );
        return None;
    }
    Some(1)
}

fn read_artifacts(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Vec<Artifact> {
    let mut out = Vec::new();
    let present = obj.get("artifacts").is_some_and(|v| !v.is_null());
    let arr = r.array_opt(obj, "", "artifacts");
    if present && arr.is_none() {
        return out;
    }
    let arr = arr.map(Vec::as_slice).unwrap_or_default();
    if arr.is_empty() {
        r.error(
            "RELEASE_NO_ARTIFACTS",
            "/artifacts",
            "the release lists no artifacts",
            "TPF registers a release only with at least one artifact (the JAR or image that runs the steps)",
        );
    }
    for (i, v) in arr.iter().enumerate() {
        let p = item("/artifacts", i);
        let Some(a) = r.element_object(v, &p, "artifact") else {
            continue;
        };
        r.reject_unknown(a, &p, ARTIFACT_KEYS, "artifact");
        let artifact_id = r.str_nonblank(a, &p, "artifactId", "RELEASE_BLANK_FIELD");
        let kind = r.str_nonblank(a, &p, "kind", "RELEASE_BLANK_FIELD");
        if let Some(k) = &kind {
            if !AUGUST_ARTIFACT_KINDS
                .iter()
                .any(|s| s.eq_ignore_ascii_case(k.trim()))
            {
                r.error(
                    "RELEASE_ARTIFACT_KIND",
                    &child(&p, "kind"),
                    format!("unsupported artifact kind `{k}`"),
                    format!(
                        "TPF supports (any case) {}",
                        AUGUST_ARTIFACT_KINDS.join(", ")
                    ),
                );
            }
        }
        let uri = r.str_nonblank(a, &p, "uri", "RELEASE_BLANK_FIELD");
        let digest = r.str_nonblank(a, &p, "digest", "RELEASE_BLANK_FIELD");
        if let Some(d) = &digest {
            if !d.starts_with("sha256:") {
                r.error(
                    "RELEASE_ARTIFACT_DIGEST",
                    &child(&p, "digest"),
                    format!("digest `{d}` does not start with `sha256:`"),
                    "TPF only verifies sha256 digests; write `sha256:<hex>`",
                );
            }
        }
        let step_ids = r.str_array_opt(a, &p, "stepIds").unwrap_or_default();
        let capabilities = r.str_array_opt(a, &p, "capabilities").unwrap_or_default();
        if let (Some(artifact_id), Some(kind), Some(uri), Some(digest)) =
            (artifact_id, kind, uri, digest)
        {
            out.push(Artifact {
                artifact_id,
                kind,
                uri,
                digest,
                step_ids,
                capabilities,
            });
        }
    }
    out
}

/// The identity a driver pins. With a release, it must name the same pipeline and contract
/// version as the contract (TPF's registrar refuses a mismatch); a release of today's form must
/// also place every step and cover every capability of the contract ([`current`]). Without one, TPF's
/// `PipelineReleaseIdentityResolver` uses the contract version as the release version.
///
/// `release` is the release file's name (for diagnostics) and its loaded descriptor.
pub fn resolve_identity(
    contract: &Contract,
    release: Option<(&str, &Release)>,
) -> Result<Identity, Diagnostics> {
    let Some((file, release)) = release else {
        return Ok(Identity {
            pipeline_id: contract.pipeline_id.clone(),
            contract_version: contract.contract_version.clone(),
            release_version: contract.contract_version.clone(),
        });
    };
    if release.compiled_truth_artifact_id.is_some() {
        current::check_against_contract(file, release, contract)?;
        return Ok(identity_of(release));
    }
    let mut diags = Vec::new();
    let mut compare = |key: &str, in_release: &str, in_contract: &str| {
        if in_release != in_contract {
            diags.push(
                Diagnostic::error(
                    "RELEASE_MISMATCH",
                    Location::pointer(file, child("", key)),
                    format!("release {key} `{in_release}` does not match the contract's `{in_contract}`"),
                )
                .with_hint(format!(
                    "a release pins one contract; TPF's registrar refuses a release whose {key} differs from the \
                     contract inside its artifact — pass the release built with this contract"
                )),
            );
        }
    };
    compare("pipelineId", &release.pipeline_id, &contract.pipeline_id);
    compare(
        "contractVersion",
        &release.contract_version,
        &contract.contract_version,
    );
    if !diags.is_empty() {
        return Err(Diagnostics(diags));
    }
    Ok(identity_of(release))
}

fn identity_of(release: &Release) -> Identity {
    Identity {
        pipeline_id: release.pipeline_id.clone(),
        contract_version: release.contract_version.clone(),
        release_version: release.release_version.clone(),
    }
}
