//! Every output file, for every example contract, under the gateway binding (the embedded
//! default), one snapshot per distinct output (`snapshots/compile/`, with `index.snap` saying
//! which output is where).
//!
//! Outputs are compared with the release's identity written as placeholders (`[pipeline]`,
//! `[release]`, `[contract]`, or `[version]` where the two versions are equal, and the machine
//! name), so the policies, which differ between contracts only in identity, are pinned once. The manifest is kept verbatim: it pins the identity, the machine
//! names and the sha256 of every definition as written. Account ids are redacted too, so
//! snapshots do not pin placeholders.

use std::path::{Path, PathBuf};

use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::{Compiled as Output, StepFunctions};
use tpf_sfn_test_support::snapshot_set::SnapshotSet;

fn redact_accounts(text: &str) -> String {
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

/// The identity's strings, longest first, and their placeholders.
fn identity_placeholders(out: &Output) -> Vec<(String, &'static str)> {
    let id = &out.manifest.identity;
    let mut pairs = vec![(out.sfn.machines.driver.clone(), "[driver machine]")];
    if id.release_version == id.contract_version {
        pairs.push((id.release_version.clone(), "[version]"));
    } else {
        pairs.push((id.release_version.clone(), "[release]"));
        pairs.push((id.contract_version.clone(), "[contract]"));
    }
    pairs.push((id.pipeline_id.clone(), "[pipeline]"));
    pairs
}

fn redact(out: &Output, file: &str, text: &str) -> String {
    let mut text = redact_accounts(text);
    if file != "manifest.json" {
        for (value, placeholder) in identity_placeholders(out) {
            text = text.replace(&value, placeholder);
        }
    }
    text
}

fn release_for(contract: &Path) -> Option<PathBuf> {
    let name = contract
        .file_name()?
        .to_str()?
        .replace(".pipeline-contract.json", ".pipeline-release.json");
    let p = contract.with_file_name(name);
    p.exists().then_some(p)
}

fn contracts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pipeline-contract.json"))
        .collect();
    // The restaurant sample first: an output other contracts share is named after it.
    paths.sort_by_key(|p| {
        (
            !p.ends_with("restaurant-approval.pipeline-contract.json"),
            p.clone(),
        )
    });
    paths
}

#[test]
fn compiled_outputs() {
    let mut set =
        SnapshotSet::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/compile"));
    for path in contracts() {
        let bytes = std::fs::read(&path).unwrap();
        let release = release_for(&path).map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(p).unwrap(),
            )
        });
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let contract = file.replace(".pipeline-contract.json", "");
        let input = Input {
            contract_file: &file,
            contract: &bytes,
            release: release.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())),
            ..Input::default()
        };
        match compile(&input, StepFunctions) {
            Ok(out) => {
                for (name, text) in &out.files {
                    set.add(
                        format!("{contract} [gateway] {name}"),
                        &format!("{contract}.gateway.{name}"),
                        redact(&out, name, text),
                    );
                }
            }
            Err(diags) => set.add(
                format!("{contract} [gateway] rejected"),
                &format!("{contract}.gateway.rejected"),
                diags.to_string(),
            ),
        }
    }
    set.assert(|name, text| insta::assert_snapshot!(name, text));
}

#[test]
fn redaction_only_touches_account_ids() {
    assert_eq!(
        redact_accounts("arn:aws:events:us-east-1:123456789012:connection/x"),
        "arn:aws:events:us-east-1:[account]:connection/x"
    );
    assert_eq!(
        redact_accounts("d7347839285b54d8463620bf8"),
        "d7347839285b54d8463620bf8"
    );
    assert_eq!(redact_accounts("1234567890123"), "1234567890123");
}
