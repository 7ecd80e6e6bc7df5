//! Today's `pipeline-release.json`: the form TPF's generator writes since its repository split,
//! with `compiledTruthArtifactId`, seven artifact kinds and `file:`/`maven:`/`oci:` locations.
//!
//! TPF reads it in two stages, and so does this module: a strict load (unknown keys, missing
//! fields and `schemaVersion` are refused, every problem reported at once), then
//! `PipelineReleaseDescriptorValidator`'s rules in TPF's order. The validator throws at its
//! first problem, so the second stage reports one diagnostic carrying TPF's own message: which
//! problem a user sees first is the one TPF's registrar would print.

use std::collections::HashMap;

use serde_json::{Map, Value};
// Java's `Character.isWhitespace`, which `isBlank` and `strip` use.
use tpf_wire::java_text::is_java_whitespace as java_whitespace;

use super::uri::{is_sha256, ArtifactUri};
use super::{Artifact, Release, ARTIFACT_KEYS, CODES};
use crate::contract::Contract;
use crate::diagnostic::{Diagnostic, Diagnostics, Location};
use crate::json_fields::{child, item, FieldReader};

pub(super) const RELEASE_KEYS: &[&str] = &[
    "schemaVersion",
    "pipelineId",
    "contractVersion",
    "releaseVersion",
    "compiledTruthArtifactId",
    "artifacts",
];

/// `PipelineReleaseArtifactKind`'s wire values, compared exactly (`JAR` is not `jar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Jar,
    ApplicationArchive,
    NativeBinary,
    LambdaZip,
    CompiledTruth,
    ContainerImage,
    LambdaImage,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Jar,
        Kind::ApplicationArchive,
        Kind::NativeBinary,
        Kind::LambdaZip,
        Kind::CompiledTruth,
        Kind::ContainerImage,
        Kind::LambdaImage,
    ];

    pub fn wire(self) -> &'static str {
        match self {
            Kind::Jar => "jar",
            Kind::ApplicationArchive => "application-archive",
            Kind::NativeBinary => "native-binary",
            Kind::LambdaZip => "lambda-zip",
            Kind::CompiledTruth => "compiled-truth",
            Kind::ContainerImage => "container-image",
            Kind::LambdaImage => "lambda-image",
        }
    }

    pub fn from_wire(value: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.wire() == value)
    }

    /// Runs steps: every kind but the Compiled Truth-only one.
    pub fn deployable(self) -> bool {
        self != Kind::CompiledTruth
    }

    /// Can carry the Compiled Truth TPF inspects: a JAR or an archive.
    pub fn compiled_truth_carrier(self) -> bool {
        matches!(
            self,
            Kind::Jar | Kind::ApplicationArchive | Kind::LambdaZip | Kind::CompiledTruth
        )
    }

    fn image(self) -> bool {
        matches!(self, Kind::ContainerImage | Kind::LambdaImage)
    }
}

fn kinds_list() -> String {
    Kind::ALL.map(Kind::wire).join(", ")
}

/// The strict load of today's form and its validation; `obj` has a `compiledTruthArtifactId` key.
pub(super) fn load(file: &str, obj: &Map<String, Value>) -> Result<Release, Diagnostics> {
    let mut release = read(file, obj)?;
    validate(file, &release)?;
    release.warnings = promotable_warnings(file, &release);
    Ok(release)
}

/// The strict load alone: what TPF's Jackson loader and the descriptor's record constructor
/// accept, before the validator runs.
pub(super) fn read(file: &str, obj: &Map<String, Value>) -> Result<Release, Diagnostics> {
    let mut r = FieldReader::new(file, CODES);
    r.reject_unknown(obj, "", RELEASE_KEYS, "release");
    // Jackson reads a missing int as 0, which the record then refuses like any other version.
    let schema_version = match r.int_opt(obj, "", "schemaVersion") {
        Ok(n) => Some(n.unwrap_or(0)),
        Err(()) => None,
    };
    if let Some(n) = schema_version.filter(|n| *n != 1) {
        r.error(
            "RELEASE_SCHEMA_VERSION",
            "/schemaVersion",
            format!("Unsupported pipeline release schemaVersion {n}"),
            "release descriptors have their own schemaVersion, independent of the contract's; set it to 1",
        );
    }
    let pipeline_id = r.str_req(obj, "", "pipelineId");
    let contract_version = r.str_req(obj, "", "contractVersion");
    let release_version = r.str_req(obj, "", "releaseVersion");
    let compiled_truth = r.str_req(obj, "", "compiledTruthArtifactId");
    let mut artifacts = Vec::new();
    for (i, v) in r
        .array_opt(obj, "", "artifacts")
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let p = item("/artifacts", i);
        let Some(a) = r.element_object(v, &p, "artifact") else {
            continue;
        };
        r.reject_unknown(a, &p, ARTIFACT_KEYS, "artifact");
        let fields = (
            r.str_req(a, &p, "artifactId"),
            r.str_req(a, &p, "kind"),
            r.str_req(a, &p, "uri"),
            r.str_req(a, &p, "digest"),
        );
        let step_ids = r.str_array_opt(a, &p, "stepIds").unwrap_or_default();
        let capabilities = r.str_array_opt(a, &p, "capabilities").unwrap_or_default();
        if let (Some(artifact_id), Some(kind), Some(uri), Some(digest)) = fields {
            artifacts.push(Artifact {
                artifact_id,
                kind,
                uri,
                digest,
                step_ids,
                capabilities,
            });
        }
    }
    let (Some(1), Some(pipeline_id), Some(contract_version), Some(release_version), Some(ct)) = (
        schema_version,
        pipeline_id,
        contract_version,
        release_version,
        compiled_truth,
    ) else {
        return Err(Diagnostics(r.diags));
    };
    if r.has_errors() {
        return Err(Diagnostics(r.diags));
    }
    Ok(Release {
        schema_version: 1,
        pipeline_id,
        contract_version,
        release_version,
        compiled_truth_artifact_id: Some(ct),
        artifacts,
        warnings: Vec::new(),
    })
}

fn fail(file: &str, ptr: &str, code: &'static str, message: String, hint: &str) -> Diagnostics {
    Diagnostic::error(code, Location::pointer(file, ptr), message)
        .with_hint(hint)
        .into()
}

fn require_text(file: &str, ptr: &str, value: &str, name: &str) -> Result<(), Diagnostics> {
    if value.chars().all(java_whitespace) {
        return Err(fail(
            file,
            ptr,
            "RELEASE_BLANK_FIELD",
            format!("{name} is required"),
            "give it a non-blank value; TPF's release validator refuses blank text here",
        ));
    }
    if value.starts_with(java_whitespace) || value.ends_with(java_whitespace) {
        return Err(fail(
            file,
            ptr,
            "RELEASE_FIELD_WHITESPACE",
            format!("{name} must not have leading or trailing whitespace"),
            "remove the surrounding whitespace; TPF compares these values exactly",
        ));
    }
    Ok(())
}

fn valid_artifact_id(id: &str) -> bool {
    id.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// `PipelineReleaseDescriptorValidator.validate`, in its order; the first problem is the error.
pub fn validate(file: &str, release: &Release) -> Result<(), Diagnostics> {
    let ct = release.compiled_truth_artifact_id.as_deref().unwrap_or("");
    for (key, value) in [
        ("pipelineId", release.pipeline_id.as_str()),
        ("contractVersion", &release.contract_version),
        ("releaseVersion", &release.release_version),
        ("compiledTruthArtifactId", ct),
    ] {
        require_text(file, &child("", key), value, key)?;
    }
    if release.artifacts.is_empty() {
        return Err(fail(
            file,
            "/artifacts",
            "RELEASE_NO_ARTIFACTS",
            "Release descriptor must contain at least one artifact".into(),
            "TPF registers a release only with its artifacts: list the JAR, archive or image that runs the steps",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut carrier_found = false;
    for (i, a) in release.artifacts.iter().enumerate() {
        let p = item("/artifacts", i);
        let at = |key: &str| child(&p, key);
        require_text(file, &at("artifactId"), &a.artifact_id, "artifactId")?;
        if !valid_artifact_id(&a.artifact_id) {
            return Err(fail(
                file,
                &at("artifactId"),
                "RELEASE_ARTIFACT_ID",
                format!(
                    "Release artifactId must contain only letters, digits, '.', '_' or '-': {}",
                    a.artifact_id
                ),
                "rename the artifact with ASCII letters, digits, '.', '_' or '-' only",
            ));
        }
        if !seen.insert(a.artifact_id.as_str()) {
            return Err(fail(
                file,
                &at("artifactId"),
                "RELEASE_ARTIFACT_DUPLICATE",
                format!("Duplicate release artifactId {}", a.artifact_id),
                "each artifact of a release needs its own artifactId",
            ));
        }
        require_text(file, &at("kind"), &a.kind, "kind")?;
        let Some(kind) = Kind::from_wire(&a.kind) else {
            return Err(fail(
                file,
                &at("kind"),
                "RELEASE_ARTIFACT_KIND",
                format!("Unsupported release artifact kind {}", a.kind),
                &format!(
                    "today's TPF knows exactly these kinds, in lower case: {}",
                    kinds_list()
                ),
            ));
        };
        let uri = ArtifactUri::parse(&a.uri).map_err(|e| {
            fail(
                file,
                &at("uri"),
                "RELEASE_ARTIFACT_URI",
                e.0,
                "write `file:///absolute/path` (local releases), `maven:group:artifact[:ext[:classifier]]:version` \
                 or `oci://registry/repository@sha256:<hex>`",
            )
        })?;
        if !is_sha256(&a.digest) {
            return Err(fail(
                file,
                &at("digest"),
                "RELEASE_ARTIFACT_DIGEST",
                "Release artifact digest must use sha256:<64 lowercase hex>".into(),
                "write the artifact's SHA-256 as `sha256:` and 64 lowercase hex digits",
            ));
        }
        if kind.image() != uri.is_oci() {
            return Err(fail(
                file,
                &at("uri"),
                "RELEASE_ARTIFACT_LOCATION",
                "OCI image kinds must use oci: URIs and non-image kinds must use file: or maven: URIs"
                    .into(),
                "give container-image and lambda-image artifacts an `oci://` reference, every other kind a `file:` or `maven:` URI",
            ));
        }
        if let ArtifactUri::Oci { digest } = &uri {
            if digest != &a.digest {
                return Err(fail(
                    file,
                    &at("digest"),
                    "RELEASE_ARTIFACT_LOCATION",
                    "OCI URI digest must match release artifact digest".into(),
                    "the digest after `@` in the oci: reference and `digest` must be the same image digest",
                ));
            }
        }
        for (key, values, name) in [
            ("stepIds", &a.step_ids, "stepId"),
            ("capabilities", &a.capabilities, "capability"),
        ] {
            let mut distinct = std::collections::HashSet::new();
            for (j, v) in values.iter().enumerate() {
                let ptr = item(&at(key), j);
                require_text(
                    file,
                    &ptr,
                    v,
                    &format!("{name} for release artifact {}", a.artifact_id),
                )?;
                if !distinct.insert(v.as_str()) {
                    return Err(fail(
                        file,
                        &ptr,
                        "RELEASE_ARTIFACT_ASSOCIATION",
                        format!(
                            "Duplicate {name} {v} for release artifact {}",
                            a.artifact_id
                        ),
                        "list each step id and capability once per artifact",
                    ));
                }
            }
        }
        if a.artifact_id == ct {
            carrier_found = true;
            if !kind.compiled_truth_carrier() {
                return Err(fail(
                    file,
                    "/compiledTruthArtifactId",
                    "RELEASE_COMPILED_TRUTH",
                    "Compiled Truth artifact must be an inspectable JAR or archive".into(),
                    "point compiledTruthArtifactId at a jar, application-archive, lambda-zip or compiled-truth artifact",
                ));
            }
        }
        if kind == Kind::CompiledTruth && (!a.step_ids.is_empty() || !a.capabilities.is_empty()) {
            return Err(fail(
                file,
                &p,
                "RELEASE_ARTIFACT_ASSOCIATION",
                "Compiled Truth-only artifacts must not declare step or capability associations"
                    .into(),
                "a compiled-truth artifact runs nothing: move its stepIds and capabilities to a deployable artifact",
            ));
        }
    }
    if !carrier_found {
        return Err(fail(
            file,
            "/compiledTruthArtifactId",
            "RELEASE_COMPILED_TRUTH",
            format!("compiledTruthArtifactId does not reference a release artifact: {ct}"),
            "set compiledTruthArtifactId to the artifactId of the artifact that carries the Compiled Truth",
        ));
    }
    Ok(())
}

/// `validatePromotable`'s refusals, as warnings: a `file:` artifact or a Maven SNAPSHOT is fine
/// for a local release, and TPF refuses only to promote it.
pub fn promotable_warnings(file: &str, release: &Release) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, a) in release.artifacts.iter().enumerate() {
        let ptr = child(&item("/artifacts", i), "uri");
        let message = match ArtifactUri::parse(&a.uri) {
            Ok(uri) if !uri.promotable() => format!(
                "Promotable release artifacts must use maven: or oci: URIs: {}",
                a.artifact_id
            ),
            Ok(ArtifactUri::Maven(m)) if m.version.to_uppercase().ends_with("-SNAPSHOT") => {
                format!(
                    "Promotable Maven artifact URIs must not use SNAPSHOT versions: {}",
                    a.artifact_id
                )
            }
            _ => continue,
        };
        out.push(
            Diagnostic::warning("RELEASE_NOT_PROMOTABLE", Location::pointer(file, ptr), message)
                .with_hint(
                    "fine for a local release; TPF promotes only maven: releases with a fixed version and oci: images",
                ),
        );
    }
    out
}

/// `validate(descriptor, contract)`'s rules beyond `validate`: the release pins this contract,
/// places every step on exactly one deployable artifact and covers its capabilities.
pub fn check_against_contract(
    file: &str,
    release: &Release,
    contract: &Contract,
) -> Result<(), Diagnostics> {
    for (key, ours, theirs) in [
        ("pipelineId", &release.pipeline_id, &contract.pipeline_id),
        (
            "contractVersion",
            &release.contract_version,
            &contract.contract_version,
        ),
    ] {
        if ours != theirs {
            return Err(fail(
                file,
                &child("", key),
                "RELEASE_MISMATCH",
                format!("Release descriptor {key} does not match Pipeline Contract"),
                &format!(
                    "the release pins {key} `{ours}`, the contract is `{theirs}`: pass the release built with this contract"
                ),
            ));
        }
    }
    if contract.steps.is_empty() {
        return Err(fail(
            file,
            "",
            "RELEASE_STEP_PLACEMENT",
            "Pipeline Contract must contain at least one step".into(),
            "TPF places a release's artifacts by the contract's steps; this contract has none",
        ));
    }
    // Step names by position, and the position of each name: contracts run to thousands of steps.
    let mut names: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for s in &contract.steps {
        if index.insert(&s.authored_name, names.len()).is_some() {
            return Err(fail(
                file,
                "",
                "RELEASE_STEP_PLACEMENT",
                format!(
                    "Duplicate Pipeline Contract step authoredName {}",
                    s.authored_name
                ),
                "TPF places artifacts by step name, so two steps of one contract cannot share a name",
            ));
        }
        names.push(&s.authored_name);
    }
    let mut known: Vec<&str> = Vec::new();
    if contract.capabilities.local_transition_execution {
        known.push("local");
    }
    for p in &contract.capabilities.transition_worker_protocols {
        if !known.contains(&p.as_str()) {
            known.push(p);
        }
    }
    let mut placements = vec![0usize; names.len()];
    let mut covered: Vec<&str> = Vec::new();
    for (i, a) in release.artifacts.iter().enumerate() {
        if !Kind::from_wire(&a.kind).is_some_and(Kind::deployable) {
            continue;
        }
        let p = item("/artifacts", i);
        for (j, step) in a.step_ids.iter().enumerate() {
            let Some(&k) = index.get(step.as_str()) else {
                return Err(fail(
                    file,
                    &item(&child(&p, "stepIds"), j),
                    "RELEASE_UNKNOWN_STEP",
                    format!(
                        "Unknown stepId {step} for release artifact {}",
                        a.artifact_id
                    ),
                    &format!("the contract's steps are: {}", names.join(", ")),
                ));
            };
            placements[k] += 1;
        }
        for (j, cap) in a.capabilities.iter().enumerate() {
            if !known.contains(&cap.as_str()) {
                return Err(fail(
                    file,
                    &item(&child(&p, "capabilities"), j),
                    "RELEASE_UNKNOWN_CAPABILITY",
                    format!(
                        "Unknown capability {cap} for release artifact {}",
                        a.artifact_id
                    ),
                    &format!(
                        "the contract's capabilities are: {} (`local` when it executes transitions locally, \
                         then its transitionWorkerProtocols)",
                        known.join(", ")
                    ),
                ));
            }
            covered.push(cap);
        }
    }
    // TPF walks a HashMap of step names; with several misplaced steps, the one it names first
    // is the first in that map's iteration order.
    for k in java_hash_map_order(&names) {
        if placements[k] != 1 {
            return Err(fail(
                file,
                "/artifacts",
                "RELEASE_STEP_PLACEMENT",
                format!(
                    "Release step {} must be associated with exactly one deployable artifact",
                    names[k]
                ),
                &format!(
                    "list `{}` in the stepIds of exactly one deployable artifact (it is in {})",
                    names[k], placements[k]
                ),
            ));
        }
    }
    // TPF's set of missing capabilities has no defined order (`Set.copyOf`); the contract's
    // order is used here.
    let missing: Vec<&str> = known
        .iter()
        .copied()
        .filter(|c| !covered.contains(c))
        .collect();
    if !missing.is_empty() {
        return Err(fail(
            file,
            "/artifacts",
            "RELEASE_CAPABILITIES_UNCOVERED",
            format!(
                "Release artifacts do not cover Pipeline Contract capabilities [{}]",
                missing.join(", ")
            ),
            "add each missing capability to the artifact that provides it",
        ));
    }
    Ok(())
}

/// Java's `String.hashCode`: over UTF-16 code units, wrapping.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// The order a `java.util.HashMap` filled with `keys` (distinct, in this order) iterates them:
/// by bucket of the final table, then by insertion. The table starts at 16 buckets and doubles
/// when it holds more than three quarters of its size, or when one bucket reaches nine entries
/// while the table is under 64 (above that Java turns the bucket into a tree, which is not
/// modelled: it takes nine names colliding in one bucket of a 64-bucket table).
fn java_hash_map_order(keys: &[&str]) -> Vec<usize> {
    let spread: Vec<u32> = keys
        .iter()
        .map(|k| {
            let h = java_string_hash(k) as u32;
            h ^ (h >> 16)
        })
        .collect();
    let mut capacity: usize = 16;
    // Entries per bucket of the current table, recounted when it grows.
    let mut filled = vec![0usize; capacity];
    let grow = |capacity: &mut usize, filled: &mut Vec<usize>, n: usize| {
        *capacity *= 2;
        *filled = vec![0; *capacity];
        for &h in &spread[..n] {
            filled[h as usize & (*capacity - 1)] += 1;
        }
    };
    for n in 0..keys.len() {
        if filled[spread[n] as usize & (capacity - 1)] >= 8 && capacity < 64 {
            grow(&mut capacity, &mut filled, n);
        }
        filled[spread[n] as usize & (capacity - 1)] += 1;
        if n + 1 > capacity * 3 / 4 {
            grow(&mut capacity, &mut filled, n + 1);
        }
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&k| (spread[k] as usize & (capacity - 1), k));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_javas() {
        // Known values of Java's "".hashCode(), "a".hashCode() and "hello".hashCode().
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99162322);
    }

    #[test]
    fn hash_map_order_is_by_bucket_then_insertion() {
        // "b" (98) lands in bucket 2, "a" (97) in 1, "q" (113) in 1 after "a".
        assert_eq!(java_hash_map_order(&["b", "q", "a"]), vec![1, 2, 0]);
        // Thirteen keys grow the table to 32 buckets: "a" (97 -> 1) and "q" (113 -> 17) part.
        let keys: Vec<String> = (0..13).map(|i| format!("k{i}")).collect();
        let mut with: Vec<&str> = vec!["q", "a"];
        with.extend(keys.iter().map(String::as_str));
        let order = java_hash_map_order(&with);
        let pos = |k: usize| order.iter().position(|&x| x == k).unwrap_or(usize::MAX);
        assert!(
            pos(1) < pos(0),
            "in 32 buckets `a` (1) comes before `q` (17)"
        );
    }

    #[test]
    fn whitespace_is_javas() {
        assert!(java_whitespace(' ') && java_whitespace('\u{1f}'));
        assert!(!java_whitespace('\u{a0}'));
    }
}
