//! The engines a release's driver can run on: the one list the compiler, the command line and
//! the mapping proof choose from. Adding a backend is a variant here plus its sibling modules
//! (a lowering under `crate`, an engine adapter in the proof, an implementation in the CLI).

use serde::Serialize;

/// The engine a release's driver runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Backend {
    // A gateway driver state machine per release. (Plain comments: doc comments on the
    // values would switch every --help that lists them to the long layout.)
    #[default]
    StepFunctions,
    // A driver function per release, started on its published version.
    LambdaDurable,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::StepFunctions, Backend::LambdaDurable];

    /// The name on the command line, in proof reports and in a durable release's manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::StepFunctions => "step-functions",
            Backend::LambdaDurable => "lambda-durable",
        }
    }

    /// The backend a compiled release's `manifest.json` was written for: its `backend` field,
    /// which the Step Functions manifest predates and so does not carry.
    pub fn of_manifest(manifest: &serde_json::Value) -> Option<Backend> {
        match manifest.get("backend") {
            None => Some(Backend::StepFunctions),
            Some(name) => Backend::ALL
                .into_iter()
                .find(|b| Some(b.as_str()) == name.as_str()),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Backend;
    use serde_json::json;

    #[test]
    fn names_serialise_as_spelled() {
        for b in Backend::ALL {
            assert_eq!(serde_json::to_value(b).unwrap(), json!(b.as_str()));
        }
    }

    #[test]
    fn a_manifest_names_its_backend() {
        assert_eq!(
            Backend::of_manifest(&json!({"machines": {}})),
            Some(Backend::StepFunctions)
        );
        assert_eq!(
            Backend::of_manifest(&json!({"backend": "lambda-durable"})),
            Some(Backend::LambdaDurable)
        );
        assert_eq!(Backend::of_manifest(&json!({"backend": "gcw"})), None);
        assert_eq!(Backend::of_manifest(&json!({"backend": 1})), None);
    }
}
