//! Every output file, for every example contract, under every binding, as an insta snapshot.
//! Account ids and ARN accounts/regions are redacted so snapshots do not pin placeholders.

use std::path::Path;

use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;

fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Twelve digits in a row, not part of a longer number: an AWS account id.
        if bytes[i].is_ascii_digit()
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes.len() >= i + 12
            && bytes[i..i + 12].iter().all(u8::is_ascii_digit)
            && (bytes.len() == i + 12 || !bytes[i + 12].is_ascii_alphanumeric())
        {
            out.push_str("[account]");
            i += 12;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or('\0');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn release_for(contract: &Path) -> Option<std::path::PathBuf> {
    let name = contract
        .file_name()?
        .to_str()?
        .replace(".pipeline-contract.json", ".pipeline-release.json");
    let p = contract.with_file_name(name);
    p.exists().then_some(p)
}

#[test]
fn compiled_outputs() {
    insta::glob!(
        "../../examples/contracts",
        "*.pipeline-contract.json",
        |path| {
            let bytes = std::fs::read(path).unwrap();
            let release = release_for(path).map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().to_string(),
                    std::fs::read(p).unwrap(),
                )
            });
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            for binding in BindingKind::ALL {
                let input = Input {
                    contract_file: &file,
                    contract: &bytes,
                    release: release.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())),
                    binding: Some(binding),
                    ..Input::default()
                };
                let rendered = match compile(&input) {
                    Ok(out) => out
                        .files
                        .iter()
                        .map(|(name, text)| format!("=== {name} ===\n{text}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Err(diags) => format!("=== rejected ===\n{diags}\n"),
                };
                insta::assert_snapshot!(format!("{}", binding.as_str()), redact(&rendered));
            }
        }
    );
}

#[test]
fn redaction_only_touches_account_ids() {
    assert_eq!(
        redact("arn:aws:events:us-east-1:123456789012:connection/x"),
        "arn:aws:events:us-east-1:[account]:connection/x"
    );
    assert_eq!(
        redact("d7347839285b54d8463620bf8"),
        "d7347839285b54d8463620bf8"
    );
    assert_eq!(redact("1234567890123"), "1234567890123");
}
