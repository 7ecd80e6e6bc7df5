//! The Step Functions lowering: everything that is specific to AWS Step Functions lives here —
//! state and machine names, the ASL model and its validator, the gateway driver's render context
//! and its engine error names, ARNs, the 25,000-event history limit and the loop budget, IAM policies, the graph,
//! the manifest and the CloudFormation/Terraform exports.
//!
//! Input is the backend-neutral [`DriverPlan`]; TPF's wire facts (the gateway's keys, operation
//! and error names) come from `tpf_wire` through the render context. A second backend is a
//! sibling module of this one, lowering the same plan.

pub mod arn;
pub mod asl;
pub mod export;
pub mod gateway;
pub mod graph;
pub mod iam;
mod lower;
pub mod manifest;
pub mod render;
pub mod states;
pub mod validate;

pub use lower::{driver_options, lower, Lowered};

use crate::compile::{Checked, Lowering};
use crate::contract::Contract;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::plan::DriverPlan;
use arn::ArnContext;
use asl::StateMachine;
use manifest::Manifest;

/// A release compiled for Step Functions.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The contract as loaded (and hash-checked).
    pub contract: Contract,
    pub plan: DriverPlan,
    /// The Step Functions lowering's own decisions: machine and state names, loop budget, ARNs.
    pub sfn: SfnPlan,
    pub driver: StateMachine,
    pub manifest: Manifest,
    /// `(file name, contents)` in a stable order.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<Diagnostic>,
}

/// The Step Functions lowering, for `crate::compile::compile`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepFunctions;

impl Lowering for StepFunctions {
    type Output = Compiled;
    fn lower(&self, checked: Checked) -> Result<Compiled, Diagnostics> {
        let Checked {
            contract,
            plan,
            mut warnings,
        } = checked;
        let lowered = lower(&plan, &contract.contract)?;
        warnings.extend(lowered.warnings);
        Ok(Compiled {
            contract: contract.contract,
            plan,
            sfn: lowered.sfn,
            driver: lowered.driver,
            manifest: lowered.manifest,
            files: lowered.files,
            warnings,
        })
    }
}

/// Step Functions' hard cap on history events per execution.
pub const AWS_HISTORY_LIMIT: u64 = 25_000;

/// The files one compiled release consists of, next to its manifest
/// (`crate::lowering::manifest::MANIFEST_FILE`).
pub mod files {
    pub const DRIVER_FILE: &str = "driver.asl.json";
    pub const DRIVER_POLICY_FILE: &str = "driver.iam-policy.json";
    pub const GRAPH_FILE: &str = "driver.mmd";
}

/// What the lowering decides on top of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct SfnPlan {
    pub machines: MachineNames,
    pub budget: Budget,
    pub arns: ArnContext,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MachineNames {
    pub driver: String,
}

/// How long one generation may loop before it hands over to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Configured ceiling on history events per generation.
    pub event_budget: u32,
    /// Loop iterations after which the driver continues as a new generation. Computed from the
    /// rendered definition so that the validator's worst-case bound stays under `event_budget`.
    pub max_iterations: u32,
}

impl SfnPlan {
    /// Names and ARNs for a plan; `max_iterations` starts at 1 until the lowering sizes it.
    pub fn new(plan: &DriverPlan) -> SfnPlan {
        let machine = |role| {
            crate::lowering::names::resource_name(
                &plan.name_prefix,
                &plan.identity.pipeline_id,
                &plan.identity.release_version,
                role,
            )
        };
        SfnPlan {
            machines: MachineNames {
                driver: machine("driver"),
            },
            budget: Budget {
                event_budget: plan.generation_event_budget,
                max_iterations: 1,
            },
            arns: arn_context(plan),
        }
    }
}

/// Region and account for policy ARNs: the config's `[aws]` values, else the ones the gateway's
/// own ARN names (the machine runs where its gateway lives), else `*`.
fn arn_context(plan: &DriverPlan) -> ArnContext {
    let from_binding = arn::region_and_account(&plan.binding.function_arn);
    let pick = |configured: &str, inferred: Option<&String>| {
        if configured != "*" {
            configured.to_string()
        } else {
            inferred.cloned().unwrap_or_else(|| "*".to_string())
        }
    };
    ArnContext {
        partition: plan.aws.partition.clone(),
        region: pick(&plan.aws.region, from_binding.as_ref().map(|(r, _)| r)),
        account_id: pick(&plan.aws.account_id, from_binding.as_ref().map(|(_, a)| a)),
    }
}
