//! A compiled release as `deploy` and `status` read it back: `manifest.json` and the definition
//! files it names, with each definition checked against the sha256 the compiler recorded.

use crate::error::Error;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use tpf_sfn_compiler::lowering::hash::sha256_hex;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestView {
    pub compiler: CompilerView,
    pub identity: Identity,
    pub machines: MachinesView,
    pub logging: LoggingView,
    pub tracing: bool,
    #[serde(default)]
    pub binding: BindingView,
}

/// The binding the machines were compiled with: its kind and parameters (endpoint, ARNs).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BindingView {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CompilerView {
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} contract {} release {}",
            self.pipeline_id, self.contract_version, self.release_version
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct MachinesView {
    pub driver: MachineView,
}

impl MachinesView {
    /// `(role, machine)` of each machine the release has: its driver alone.
    pub fn by_role(&self) -> Vec<(&'static str, &MachineView)> {
        vec![("driver", &self.driver)]
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineView {
    pub name: String,
    pub definition: String,
    pub definition_sha256: String,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingView {
    pub level: String,
    pub include_execution_data: bool,
    pub log_group_arn: Option<String>,
}

impl LoggingView {
    pub fn enabled(&self) -> bool {
        !self.level.eq_ignore_ascii_case("OFF")
    }
}

/// One machine ready to deploy.
#[derive(Debug, Clone)]
pub struct Machine {
    /// `driver`.
    pub role: &'static str,
    pub name: String,
    /// The exact text sent to Step Functions.
    pub definition_text: String,
    pub definition: Value,
    pub sha256: String,
    pub tags: BTreeMap<String, String>,
}

/// Everything `deploy` needs from an output directory.
#[derive(Debug, Clone)]
pub struct Release {
    pub manifest: ManifestView,
    pub machines: Vec<Machine>,
}

const RECOMPILE: &str =
    "run `tpf-sfn compile ... --out DIR` again; never edit compiled files by hand";

/// A manifest the reader cannot parse.
pub fn invalid(path: &Path, e: serde_json::Error) -> Error {
    Error::new(
        "RELEASE_MANIFEST_INVALID",
        format!("{} is not a tpf-sfn manifest", path.display()),
    )
    .with_source(e)
    .with_hint(RECOMPILE)
}

/// A file that cannot be read becomes `code`'s error; one the input reader refuses (not a
/// regular file, too large) keeps its own code.
fn missing(e: Error, code: impl FnOnce() -> Error) -> Error {
    if e.code() == "IO_READ" {
        code().with_source(e)
    } else {
        e
    }
}

/// What the compiler always writes, checked before any AWS call is built from it: an identity
/// without blanks, machine names Step Functions takes (1 to 80 of `A-Z a-z 0-9 - _`; the
/// compiler writes only these) and a DynamoDB table name.
fn check(m: &ManifestView, path: &Path) -> Result<(), Error> {
    let invalid = |why: String| {
        Error::new(
            "RELEASE_MANIFEST_INVALID",
            format!("{}: {why}", path.display()),
        )
        .with_hint(RECOMPILE)
    };
    for (field, value) in [
        ("identity.pipelineId", &m.identity.pipeline_id),
        ("identity.contractVersion", &m.identity.contract_version),
        ("identity.releaseVersion", &m.identity.release_version),
    ] {
        if value.trim().is_empty() {
            return Err(invalid(format!("{field} is blank")));
        }
    }
    for (role, name) in m.machines.by_role().into_iter().map(|(r, m)| (r, &m.name)) {
        let valid = (1..=80).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        if !valid {
            return Err(invalid(format!(
                "the {role} machine's name `{name}` is not 1 to 80 letters, digits, `-` or `_`"
            )));
        }
    }
    Ok(())
}

/// `ACTION_API_V1_RETIRED` for a release compiled for an Action API v1 binding (`http`,
/// `lambda`, `queue`, on either backend), read from its manifest before anything else: TPF does
/// not serve Action API v1, so its drivers would fail at their first call, and nothing of its
/// wake path is left to wake them.
pub fn refuse_action_api_v1(out: &Path, manifest: &serde_json::Value) -> Result<(), Error> {
    use tpf_sfn_compiler::config::{retired, BindingKind};
    let kind = manifest
        .pointer("/binding/kind")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if !BindingKind::ACTION_API_V1
        .iter()
        .any(|k| k.as_str() == kind)
    {
        return Ok(());
    }
    let path = out.join(tpf_sfn_compiler::lowering::manifest::MANIFEST_FILE);
    let at = format!("{}#/binding/kind", path.display());
    Err(Error::new(
        retired::CODE,
        format!(
            "{at} is `{kind}`: the release was compiled for Action API v1, which is retired: TPF \
             serves its action gateway only, and the release's drivers would fail at their first \
             call"
        ),
    )
    .with_location(at)
    .with_hint(format!(
        "recompile the release with the gateway binding and deploy that: {}",
        retired::HINT
    )))
}

impl Release {
    /// Reads only `manifest.json` (for commands that need names and identity, not definitions).
    pub fn manifest(dir: &Path) -> Result<ManifestView, Error> {
        let (path, bytes) = Self::manifest_bytes(dir)?;
        let manifest: ManifestView =
            serde_json::from_slice(&bytes).map_err(|e| invalid(&path, e))?;
        check(&manifest, &path)?;
        Ok(manifest)
    }

    /// The manifest's path and text, for a reader of another shape (`status` reads every
    /// backend's).
    pub fn manifest_bytes(dir: &Path) -> Result<(std::path::PathBuf, Vec<u8>), Error> {
        let path = dir.join("manifest.json");
        let bytes = crate::input::read(&path).map_err(|e| {
            missing(e, || {
                Error::new(
                    "RELEASE_MANIFEST_MISSING",
                    format!("cannot read {}", path.display()),
                )
                .with_hint("point --out at a directory written by `tpf-sfn compile`")
            })
        })?;
        Ok((path, bytes))
    }

    pub fn load(dir: &Path) -> Result<Self, Error> {
        let manifest = Self::manifest(dir)?;
        let mut machines = Vec::new();
        for (role, m) in manifest.machines.by_role() {
            // The manifest names files in its own directory; anything else is not ours.
            if m.definition.is_empty()
                || m.definition.contains(['/', '\\'])
                || m.definition.starts_with('.')
            {
                return Err(Error::new(
                    "RELEASE_MANIFEST_INVALID",
                    format!(
                        "the manifest names `{}` as the {role} definition, which is not a file name",
                        m.definition
                    ),
                )
                .with_hint(RECOMPILE));
            }
            let path = dir.join(&m.definition);
            let text = crate::input::read(&path)
                .and_then(|bytes| {
                    String::from_utf8(bytes).map_err(|e| {
                        Error::read(
                            &path,
                            std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
                        )
                    })
                })
                .map_err(|e| {
                    missing(e, || {
                        Error::new(
                            "RELEASE_DEFINITION_MISSING",
                            format!("cannot read {}", path.display()),
                        )
                        .with_hint(RECOMPILE)
                    })
                })?;
            let sha = sha256_hex(&text);
            if sha != m.definition_sha256 {
                return Err(Error::new(
                    "RELEASE_DEFINITION_MODIFIED",
                    format!(
                        "{} has sha256 {sha}, but the manifest records {}",
                        path.display(),
                        m.definition_sha256
                    ),
                )
                .with_hint(RECOMPILE));
            }
            let definition = serde_json::from_str(&text).map_err(|e| {
                Error::new(
                    "RELEASE_DEFINITION_INVALID",
                    format!("{} is not JSON", path.display()),
                )
                .with_source(e)
                .with_hint(RECOMPILE)
            })?;
            machines.push(Machine {
                role,
                name: m.name.clone(),
                definition_text: text,
                definition,
                sha256: sha,
                tags: m.tags.clone(),
            });
        }
        Ok(Self { manifest, machines })
    }
}
