//! `tpf-sfn graph`: Mermaid for a contract's driver or for any ASL file.

use crate::stdio::out;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::{asl, graph};

use crate::cli::{Format, GraphArgs};
use crate::exit::{CmdResult, Failure};
use crate::input::read;
use crate::report;

pub fn run(args: &GraphArgs) -> CmdResult {
    let file = args.input.display().to_string();
    let bytes = read(&args.input)?;
    // A contract has `schemaVersion` and `steps`; a state machine has `States`. Decide by
    // shape, not file name, so renamed files still work.
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    let machine = if value.get("States").is_some() {
        asl::parse(&file, &bytes).map_err(|d| Failure::Input(d.into()))?
    } else {
        let input = Input {
            contract_file: &file,
            contract: &bytes,
            binding: args.binding.map(Into::into),
            allow_unverified_hash: args.allow_unverified_hash,
            ..Input::default()
        };
        match compile(&input, tpf_sfn_compiler::sfn::StepFunctions) {
            Ok(out) => out.driver,
            Err(d) => {
                report::diagnostics(Format::Text, &d.0);
                return Err(Failure::Input(tpf_sfn_compiler::Diagnostics(Vec::new())));
            }
        }
    };
    out!("{}", graph::mermaid(&machine));
    Ok(())
}
