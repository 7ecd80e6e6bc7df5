//! The Lambda durable functions backend's part of the commands.

use tpf_sfn_compiler::durable::Compiled;

use super::step_functions::unverified;

pub(super) fn compile_summary(out: &Compiled) -> Vec<String> {
    let m = &out.manifest;
    let mut lines = vec![
        format!(
            "compiled {} (release {}) for Lambda durable functions{}",
            m.identity.pipeline_id,
            m.identity.release_version,
            unverified(m.contract.verified)
        ),
        format!("  binding   {}", m.binding.kind),
        format!(
            "  function  {}  (≤{} operations per generation, hands over after {} calls)",
            m.function.name, m.function.operation_budget, m.function.max_iterations
        ),
    ];
    for a in &m.contract.await_steps {
        lines.push(format!(
            "  await     step {} \"{}\" → callback \"{}\"",
            a.step_index, a.authored_name, a.state_name
        ));
    }
    lines
}
