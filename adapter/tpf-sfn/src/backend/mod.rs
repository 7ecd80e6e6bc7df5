//! What a command does differently per backend, behind one dispatch: each backend's
//! implementation is a sibling module (`step_functions.rs`, `lambda_durable.rs`), and a command
//! calls these functions with the compiled release, or writes its work once over
//! [`CliBackend`] and hands it to [`dispatch`], never matching on the backend itself.

mod lambda_durable;
mod step_functions;

use tpf_sfn_compiler::compile::Compiled;

use crate::cli::Backend;
use crate::exit::Failure;
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::diagnostic::Diagnostics;
use tpf_sfn_mapping::sfn::gateway_proof::GatewaySubject;
use tpf_sfn_mapping::sfn::DriverFile;

/// The lines `compile` prints (text format) about what it compiled, after the warnings and
/// before the files it wrote.
pub fn compile_summary(out: &Compiled) -> Vec<String> {
    match out {
        Compiled::StepFunctions(c) => step_functions::compile_summary(c),
        Compiled::LambdaDurable(c) => lambda_durable::compile_summary(c),
    }
}

/// One backend's part of `mapping-test` and `simulate`: its gateway driver, placed in the
/// gateway world.
pub trait CliBackend {
    /// The backend's name, as `--backend` takes it.
    const NAME: Backend;

    /// Refuses a flag this backend does not take, before any file is read.
    fn check_usage(driver: Option<&std::path::Path>) -> Result<(), Failure>;

    /// The user's gateway driver for this backend, placed in the gateway world (`driver`: a
    /// hand-edited one to prove instead of the compiled one). An input that does not compile
    /// (an Action API v1 binding among them: `ACTION_API_V1_RETIRED`) is its diagnostics.
    fn gateway_subject(
        input: &Input,
        driver: Option<DriverFile>,
    ) -> Result<Result<GatewaySubject, Diagnostics>, Failure>;
}

/// A command's work, written once over [`CliBackend`].
pub trait ForBackend {
    type Output;
    fn run<B: CliBackend>(self) -> Self::Output;
}

/// Runs `work` with `backend`'s implementation: the one place that matches on the backend.
pub fn dispatch<W: ForBackend>(backend: Backend, work: W) -> W::Output {
    match backend {
        Backend::StepFunctions => work.run::<step_functions::StepFunctions>(),
        Backend::LambdaDurable => work.run::<lambda_durable::LambdaDurable>(),
    }
}
