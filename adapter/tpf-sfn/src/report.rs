//! Prints diagnostics for people (text) and machines (`--format json`).

use crate::stdio::{errln, outln};
use serde_json::json;
use tpf_sfn_compiler::Diagnostic;

use crate::cli::Format;

pub fn diagnostics(format: Format, diags: &[Diagnostic]) {
    match format {
        Format::Text => {
            for d in diags {
                errln!("{d}");
            }
        }
        Format::Json => outln!("{}", json!({ "diagnostics": diags })),
    }
}
