//! What a command does differently per backend, behind one dispatch: each backend's
//! implementation is a sibling module (`step_functions.rs`, `lambda_durable.rs`), and a command
//! calls these functions with the compiled release or the backend it was given, never matching
//! on the backend itself.

mod lambda_durable;
mod step_functions;

use tpf_sfn_compiler::compile::Compiled;

/// The lines `compile` prints (text format) about what it compiled, after the warnings and
/// before the files it wrote.
pub fn compile_summary(out: &Compiled) -> Vec<String> {
    match out {
        Compiled::StepFunctions(c) => step_functions::compile_summary(c),
        Compiled::LambdaDurable(c) => lambda_durable::compile_summary(c),
    }
}
