//! Infrastructure-as-code exports of a compiled release, as two stacks:
//!
//! - the **release stack** (`cloudformation.json`, `main.tf.json`): what is pinned to this
//!   release and retired with it: the gateway driver, its least-privilege role and its alarms;
//! - the **wake-path stack** (`wake-path/`): what every release of a configuration shares and
//!   nothing pins: the gateway host (TPF's callback-binding table, the wake-up, reconciler and
//!   starter functions), the relay function with its queue and dead-letter queue (the gateway's
//!   queue transport), log groups and alarms. Its content depends on the configuration only,
//!   never on the release, so recompiling any release gives the same bytes and deploying it
//!   again changes nothing.
//!
//! Deploying release N+1 is a new release stack next to N's, which keeps running N's pinned
//! executions; `tpf-sfn prune` tells when N's stack can go.
//!
//! Pure: compile output in, JSON out; the CLI writes the files next to the others. Both
//! flavours spell the same facts (`stack.rs`); what a user owns (TPF's streams, where the
//! function code is) is a parameter or variable.

pub mod cloudformation;
mod refs;
pub mod stack;
pub mod terraform;

pub use refs::{unresolved_cloudformation_refs, unresolved_terraform_refs};

use crate::diagnostic::Diagnostics;
use crate::lowering::export::Kind;
use crate::lowering::json_file;
use crate::sfn::Compiled;

/// The shared wake-path stack's directory inside a release's output.
pub const WAKE_PATH_DIR: &str = "wake-path";

/// `(file name, contents)` of both stacks of the requested flavour: the release stack, then the
/// wake-path stack under [`WAKE_PATH_DIR`]. Refused (`EXPORT_PLACEHOLDER`) while the binding
/// still carries a placeholder: an export is for a real account. The release stack is the
/// gateway driver alone ([`release_contents`]).
pub fn files(out: &Compiled, kind: Kind) -> Result<Vec<(String, String)>, Diagnostics> {
    crate::lowering::export::refuse_placeholders(
        &out.manifest.binding,
        "machines that reach nothing",
    )?;
    let (release, wake_path) = match kind {
        Kind::CloudFormation => (cloudformation::release(out), cloudformation::wake_path(out)),
        Kind::Terraform => (terraform::release(out), terraform::wake_path(out)),
    };
    Ok(vec![
        (kind.file_name().to_string(), json_file(&release)),
        (
            format!("{WAKE_PATH_DIR}/{}", kind.file_name()),
            json_file(&wake_path),
        ),
    ])
}

/// What the release stack (`what`: "stack" or "module") holds, for its description. No
/// sweeper machine: a gateway driver SWEEPs TPF itself before every STATUS it polls and when
/// its park's deadline (the contract's longest await + 1 s) passes, or the wake-path stack's
/// schedule does (`sweeper.mode = "schedule"`); the wake-path stack's reconciler replaces a
/// driver that ended without TPF's outcome.
fn release_contents(what: &str) -> String {
    format!("the gateway driver, its role and its alarms (no sweeper machine: the driver sweeps TPF, or the wake-path stack's schedule does); the gateway host is the wake-path {what}")
}

/// What the driver output says starts the driver.
const DRIVER_OUTPUT_DESCRIPTION: &str = "The release's gateway driver machine (the wake-path stack's starter starts it, named by TPF's recipe)";

fn file_text<'a>(out: &'a Compiled, name: &str) -> &'a str {
    out.files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
        .unwrap_or("")
}

fn policy(out: &Compiled, name: &str) -> serde_json::Value {
    serde_json::from_str(file_text(out, name)).unwrap_or(serde_json::Value::Null)
}

fn logging_on(out: &Compiled) -> bool {
    out.manifest.logging.level != crate::config::LogLevel::Off
}

fn description(out: &Compiled, what: &str) -> String {
    let m = &out.manifest;
    format!(
        "tpf-sfn {} release {} of {}: {what}",
        m.compiler.version, m.identity.release_version, m.identity.pipeline_id
    )
}

fn wake_path_description(out: &Compiled) -> String {
    format!(
        "tpf-sfn {} wake path of `{}` machines: the gateway host{}, log groups and alarms, shared by every release",
        out.manifest.compiler.version,
        out.plan.name_prefix,
        if stack::Facts::new(out).queue.is_some() {
            ", relay, action queue and its dead-letter queue"
        } else {
            ""
        }
    )
}
