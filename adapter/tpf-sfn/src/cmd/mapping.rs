//! `tpf-sfn mapping-test` (the CI gate) and `tpf-sfn simulate` (one scenario, readable): the
//! release's gateway driver in the gateway world (`gateway_world.rs`). Action API v1's bindings
//! are retired here: naming one is `ACTION_API_V1_RETIRED`.

use tpf_sfn_compiler::compile::Input;

use super::inputs::InputFiles;
use crate::backend::{self, CliBackend, ForBackend};
use crate::cli::{MappingTestArgs, SimulateArgs};
use crate::exit::CmdResult;

pub fn mapping_test(args: &MappingTestArgs) -> CmdResult {
    backend::dispatch(args.backend, MappingTest(args))
}

/// `mapping-test` on one backend: its gateway driver over the gateway world's catalogue.
struct MappingTest<'a>(&'a MappingTestArgs);

impl ForBackend for MappingTest<'_> {
    type Output = CmdResult;

    fn run<B: CliBackend>(self) -> CmdResult {
        let args = self.0;
        let files = InputFiles::read(&args.contract, args.release.as_ref(), args.config.as_ref())?;
        let input = files.input(args.binding, args.allow_unverified_hash);
        super::gateway_world::mapping_test::<B>(args, &input)
    }
}

pub fn simulate(args: &SimulateArgs) -> CmdResult {
    let files = match &args.contract {
        Some(c) => InputFiles::read(c, args.release.as_ref(), args.config.as_ref())?,
        None => {
            let mut f = InputFiles::bundled();
            if let Some(p) = super::inputs::config_path(args.config.as_ref()) {
                f.config = Some(super::inputs::read_config(&p)?);
            }
            f
        }
    };
    let input = files.input(args.binding, args.allow_unverified_hash);
    backend::dispatch(
        args.backend,
        Simulate {
            args,
            input: &input,
        },
    )
}

/// `simulate` on one backend: one scenario of the gateway world, with its trace.
struct Simulate<'a> {
    args: &'a SimulateArgs,
    input: &'a Input<'a>,
}

impl ForBackend for Simulate<'_> {
    type Output = CmdResult;

    fn run<B: CliBackend>(self) -> CmdResult {
        super::gateway_world::simulate::<B>(self.args, self.input)
    }
}
