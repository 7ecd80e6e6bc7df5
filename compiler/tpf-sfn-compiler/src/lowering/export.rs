//! What every backend's infrastructure-as-code export shares: its flavours and their file
//! names, the refusal of a binding that still names the embedded default's placeholder,
//! because an export is for a real account, and of an Action API v1 binding, whose wake path
//! is retired.

use crate::config::{placeholder, BindingKind};
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

/// `EXPORT_ACTION_API_RETIRED` for an Action API v1 binding (`http`, `lambda`, `queue`): TPF does
/// not serve that protocol, and the wake path its drivers need (the bridge, the Action API relay,
/// the durable sweeper) is retired, so what an export would deploy could never run.
pub fn refuse_action_api(binding: &BindingInfo) -> Result<(), Diagnostics> {
    if binding.kind == BindingKind::Gateway.as_str() {
        return Ok(());
    }
    Err(Diagnostics(vec![Diagnostic::error(
        "EXPORT_ACTION_API_RETIRED",
        Location::pointer("tpf-sfn.toml", "binding.kind"),
        format!(
            "the `{}` binding calls Action API v1, which TPF does not serve; its wake path (the \
             bridge, the Action API relay, the durable sweeper) is retired, so an export of it \
             would deploy drivers nothing starts or wakes",
            binding.kind
        ),
    )
    .with_hint(
        "compile with the gateway binding (`[binding] kind = \"gateway\"`, what `tpf-sfn init` \
         writes; `--binding gateway`), naming TPF's action gateway by its numbered version",
    )]))
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
