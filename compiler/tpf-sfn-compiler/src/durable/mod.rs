//! The Lambda durable functions lowering: one release's [`DurableSpec`] for the driver function
//! and the stack that publishes one function version per release
//! (`stack.rs`, spelled by `cloudformation.rs` and `terraform.rs`).
//!
//! Sibling of `crate::sfn`: it lowers the same `DriverPlan` with the same neutral parts
//! (`crate::lowering`), and nothing here names a state.

pub mod cloudformation;
pub mod manifest;
pub mod stack;
pub mod terraform;

use tpf_durable_driver::spec::{self, AwaitSpec, Binding, DurableSpec};

use crate::compile::{Checked, Lowering};
use crate::diagnostic::{Diagnostic, Diagnostics, Location};
use crate::lowering::export::Kind;
use crate::lowering::manifest::MANIFEST_FILE;
use crate::lowering::names::resource_name;
use crate::plan::{DriverPlan, GatewayPlan};

/// File name of the spec in a release's output directory.
pub const SPEC_FILE: &str = "driver.durable.json";
/// The last part of a release's driver function name (`<prefix>-<pipeline>-<tag>-durable`),
/// which the wake path's bridge role matches.
pub const FUNCTION_ROLE: &str = crate::lowering::names::role::DURABLE;

#[derive(Debug, Clone)]
pub struct DurableOutput {
    pub spec: DurableSpec,
    /// The spec as the function reads it: compact JSON, what its sha256 is taken of.
    pub spec_text: String,
    /// The release's driver function (one per release; its published version is the release).
    pub function_name: String,
    /// `(file name, contents)` in a stable order.
    pub files: Vec<(String, String)>,
}

/// A whole compile for this backend: inputs → plan → spec, manifest.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub contract: crate::contract::Contract,
    pub plan: DriverPlan,
    pub durable: DurableOutput,
    pub manifest: manifest::DurableManifest,
    pub files: Vec<(String, String)>,
    pub warnings: Vec<Diagnostic>,
}

/// The Lambda durable functions lowering, for `crate::compile::compile`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LambdaDurable;

impl Lowering for LambdaDurable {
    type Output = Compiled;
    fn lower(&self, checked: Checked) -> Result<Compiled, Diagnostics> {
        let Checked {
            contract: loaded,
            plan,
            warnings,
        } = checked;
        let durable = lower(&plan)?;
        let manifest = manifest::build(&plan, &loaded.contract, &durable);
        let mut files = durable.files.clone();
        files.push((MANIFEST_FILE.to_string(), manifest::render(&manifest)));
        Ok(Compiled {
            contract: loaded.contract,
            plan,
            durable,
            manifest,
            files,
            warnings,
        })
    }
}

/// `(file name, contents)` of the export of flavour `kind`: the release stack (`stack.rs`) in
/// CloudFormation or Terraform.
pub fn export(c: &Compiled, kind: Kind) -> Result<Vec<(String, String)>, Diagnostics> {
    let release = stack::release(c)?;
    let rendered = match kind {
        Kind::CloudFormation => cloudformation::render_release(&release),
        Kind::Terraform => terraform::render_release(&release),
    };
    Ok(vec![(
        kind.file_name().to_string(),
        crate::lowering::json_file(&rendered),
    )])
}

/// The gateway binding: the function runs the gateway driver, invoking TPF's action gateway
/// by the numbered version the plan names. The configuration's check refuses anything else;
/// this refuses it again for a plan built another way, so no spec the function reads can name
/// an alias or the unqualified function.
fn gateway_binding(g: &GatewayPlan) -> Result<Binding, Diagnostics> {
    if !crate::config::is_numbered_version(&g.function_arn) {
        return Err(Diagnostics(vec![Diagnostic::error(
            "GATEWAY_UNQUALIFIED",
            Location::pointer("tpf-sfn.toml", "/binding/gateway/function-arn"),
            format!(
                "function-arn `{}` is not a numbered version: the durable gateway driver only invokes a numbered version of TPF's action gateway",
                g.function_arn
            ),
        )
        .with_hint("publish a version of the gateway function and append its number: arn:<partition>:lambda:<region>:<account>:function:<name>:<version>")]));
    }
    Ok(Binding::Gateway {
        function_arn: g.function_arn.clone(),
        longest_await_seconds: g.longest_await_seconds,
        scheduled_sweep: g.scheduled_sweep.is_some(),
    })
}

/// Lowers a plan. The gateway's queue transport has no durable form: a durable function
/// invokes the gateway itself, so the relay that transport exists for is not needed.
pub fn lower(plan: &DriverPlan) -> Result<DurableOutput, Diagnostics> {
    let binding = match plan.binding.queue_url {
        None => gateway_binding(&plan.binding)?,
        Some(_) => {
            return Err(Diagnostics(vec![Diagnostic::error(
                "DURABLE_BINDING_UNSUPPORTED",
                Location::pointer("tpf-sfn.toml", "/binding/gateway/transport"),
                "the gateway binding's queue transport has no Lambda durable functions form",
            )
            .with_hint("use binding.gateway.transport = \"lambda\": the durable function invokes TPF's action gateway itself")]))
        }
    };
    let spec = DurableSpec {
        format: spec::FORMAT,
        identity: plan.identity.clone(),
        binding,
        action_timeout_seconds: plan.action_timeout_seconds,
        awaits: plan
            .awaits
            .iter()
            .map(|a| AwaitSpec {
                step_name: a.authored_name.clone(),
                step_index: a.step_index,
            })
            .collect(),
    };
    let internal = |e: serde_json::Error| {
        Diagnostics(vec![Diagnostic::error(
            "INTERNAL",
            Location::default(),
            e.to_string(),
        )])
    };
    let text = serde_json::to_string_pretty(&spec).map_err(internal)?;
    let spec_text = serde_json::to_string(&spec).map_err(internal)?;
    let id = &plan.identity;
    Ok(DurableOutput {
        files: vec![(SPEC_FILE.to_string(), format!("{text}\n"))],
        function_name: resource_name(
            &plan.name_prefix,
            &id.pipeline_id,
            &id.release_version,
            FUNCTION_ROLE,
        ),
        spec,
        spec_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(function_arn: &str) -> GatewayPlan {
        GatewayPlan {
            function_arn: function_arn.to_owned(),
            queue_url: None,
            starter_function_arn: "arn:aws:lambda:us-east-1:123456789012:function:starter:1"
                .to_owned(),
            longest_await_seconds: 1800,
            scheduled_sweep: None,
        }
    }

    #[test]
    fn the_gateway_binding_names_a_numbered_version_or_is_refused() {
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:7";
        assert_eq!(
            gateway_binding(&plan(arn)).unwrap(),
            Binding::Gateway {
                function_arn: arn.to_owned(),
                longest_await_seconds: 1800,
                scheduled_sweep: false,
            }
        );
        // The scheduled sweep reaches the spec, so the function sweeps as the release was
        // compiled.
        let mut scheduled = plan(arn);
        scheduled.scheduled_sweep = Some(crate::plan::ScheduledSweep {
            expression: "rate(1 minute)".into(),
            period_seconds: 60,
        });
        assert!(matches!(
            gateway_binding(&scheduled).unwrap(),
            Binding::Gateway {
                scheduled_sweep: true,
                ..
            }
        ));
        for bad in [
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:live",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:$LATEST",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:07",
        ] {
            let e = gateway_binding(&plan(bad)).unwrap_err();
            assert_eq!(e.0[0].code, "GATEWAY_UNQUALIFIED", "{bad}");
        }
    }
}
