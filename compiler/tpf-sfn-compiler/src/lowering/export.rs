//! What every backend's infrastructure-as-code export shares: its flavours and their file
//! names, and the refusal of a binding that still names the embedded default's placeholder,
//! because an export is for a real account.

use crate::config::placeholder;
use crate::diagnostic::{Diagnostic, Diagnostics, Location};
use crate::lowering::manifest::BindingInfo;

pub const CLOUDFORMATION_FILE: &str = "cloudformation.json";
pub const TERRAFORM_FILE: &str = "main.tf.json";
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CloudFormation,
    Terraform,
}

impl Kind {
    pub fn file_name(self) -> &'static str {
        match self {
            Kind::CloudFormation => CLOUDFORMATION_FILE,
            Kind::Terraform => TERRAFORM_FILE,
        }
    }
}

/// `EXPORT_PLACEHOLDER` for each placeholder the binding names; `deployed` says what the export
/// would deploy ("machines that reach nothing").
pub fn refuse_placeholders(binding: &BindingInfo, deployed: &str) -> Result<(), Diagnostics> {
    let found = placeholder::found(
        binding
            .parameters
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    if found.is_empty() {
        return Ok(());
    }
    Err(Diagnostics(
        found
            .into_iter()
            .map(|(key, value)| {
                Diagnostic::error(
                    "EXPORT_PLACEHOLDER",
                    Location::pointer("tpf-sfn.toml", key),
                    format!(
                        "`{key}` is the placeholder `{value}`; an export is for a real account and \
                         would deploy {deployed}"
                    ),
                )
                .with_hint(placeholder::hint(key))
            })
            .collect(),
    ))
}
