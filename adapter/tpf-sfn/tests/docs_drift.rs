//! The documentation says what the code defines: README's command table lists every command
//! with every flag clap knows (and no other), `docs/validator.md` lists the validator's codes
//! with their meanings, and `docs/codes.md` lists every other code the source can emit.
//!
//! Codes are found by reading the source: the compiler's diagnostic codes by their prefixes,
//! the commands' by `Error::new("…"` (and the AWS scopes by `SCOPE`), in shipped code only.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use tpf_sfn::aws::errors::Kind;
use tpf_sfn_compiler::sfn::validate::CODES;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// The rows of every Markdown table in `text`, cells trimmed, header and rule rows included.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            // `\|` inside a cell is a literal bar.
            let l = l.replace("\\|", "\u{0}");
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().replace('\u{0}', "|"))
                .collect()
        })
        .collect()
}

/// The backquoted word a cell starts with: `` `CODE` `` → `CODE`.
fn code_cell(cell: &str) -> Option<&str> {
    let rest = cell.strip_prefix('`')?;
    let end = rest.find('`')?;
    Some(&rest[..end])
}

/// The first-column codes of the tables under `## heading` in `text` (up to the next `## `).
fn codes_under(text: &str, heading: &str) -> BTreeSet<String> {
    let start = text
        .find(&format!("## {heading}"))
        .unwrap_or_else(|| panic!("no section `{heading}`"));
    let section = &text[start + 3..];
    let section = section.find("\n## ").map_or(section, |end| &section[..end]);
    table_rows(section)
        .iter()
        .filter_map(|row| code_cell(row.first()?).map(str::to_owned))
        .collect()
}

fn shipped(text: &str) -> &str {
    text.find("\n#[cfg(test)]").map_or(text, |i| &text[..i])
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The shipped source of the crates under `dirs` (their `src/` trees).
fn sources(dirs: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    for d in dirs {
        rust_files(&root().join(d), &mut files);
    }
    files
        .iter()
        .map(|p| shipped(&std::fs::read_to_string(p).unwrap()).to_owned())
        .collect()
}

/// The string literals right after each `call` (whitespace between allowed), where `call` is
/// not the tail of a longer name.
fn literals_after(text: &str, call: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find(call) {
        let start = at + i;
        at = start + call.len();
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = text[at..].trim_start();
        if let Some(lit) = rest.strip_prefix('"') {
            if let Some(end) = lit.find('"') {
                found.push(lit[..end].to_owned());
            }
        }
    }
    found
}

/// Literals that look like `PREFIX_…` codes (upper case, digits, underscores).
fn prefixed_literals(text: &str, prefixes: &[&str]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for part in text.split('"').skip(1).step_by(2) {
        let is_code = !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if is_code && (part == "INTERNAL" || prefixes.iter().any(|p| part.starts_with(p))) {
            found.insert(part.to_owned());
        }
    }
    found
}

fn assert_same(what: &str, documented: &BTreeSet<String>, defined: &BTreeSet<String>) {
    let undocumented: Vec<_> = defined.difference(documented).collect();
    let unknown: Vec<_> = documented.difference(defined).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "{what}: not documented {undocumented:?}; documented but not in the code {unknown:?}"
    );
}

#[test]
fn validator_md_lists_the_validators_codes_with_their_meanings() {
    let documented: Vec<(String, String)> = table_rows(&read("docs/validator.md"))
        .into_iter()
        .filter_map(|row| Some((code_cell(row.first()?)?.to_owned(), row.get(1)?.clone())))
        .filter(|(code, _)| code.starts_with("ASL_"))
        .collect();
    let defined: Vec<(String, String)> = CODES
        .iter()
        .map(|(c, m)| (c.to_string(), m.to_string()))
        .collect();
    assert_eq!(documented, defined, "docs/validator.md vs validate::CODES");
}

#[test]
fn codes_md_lists_every_input_diagnostic() {
    let mut defined = BTreeSet::new();
    for text in sources(&[
        "compiler/tpf-sfn-compiler/src",
        "compiler/tpf-durable-driver/src",
        "mapping-tests/tpf-sfn-mapping/src",
    ]) {
        defined.extend(prefixed_literals(
            &text,
            &[
                "DURABLE_",
                "EXPORT_",
                "CONTRACT_",
                "RELEASE_",
                "CONFIG_",
                "GATEWAY_",
                "HISTORY_",
                "IAM_",
                "TEMPLATE_",
            ],
        ));
    }
    assert!(defined.len() > 40, "{defined:?}");
    let documented = codes_under(&read("docs/codes.md"), "Input and compile diagnostics");
    assert_same("input diagnostics", &documented, &defined);
}

#[test]
fn codes_md_lists_every_command_error_and_aws_scope_and_kind() {
    let texts = sources(&[
        "adapter/tpf-sfn/src",
        "adapter/tpf-sfn-wakepath/src",
        "adapter/tpf-sfn-lambda/src",
    ]);
    let mut codes = BTreeSet::new();
    let mut scopes = BTreeSet::new();
    for text in &texts {
        codes.extend(literals_after(text, "Error::new("));
        // The error type's own constructors (`Error::read`, `Error::write`).
        if text.contains("pub struct Error {") {
            codes.extend(literals_after(text, "Self::new("));
        }
        scopes.extend(literals_after(text, "const SCOPE: &str ="));
        scopes.extend(literals_after(text, "errors::from_sdk("));
        scopes.extend(literals_after(text, "errors::failed("));
    }
    assert!(codes.len() > 20, "{codes:?}");
    let doc = read("docs/codes.md");
    assert_same(
        "command errors",
        &codes_under(&doc, "Command errors"),
        &codes,
    );
    let aws = codes_under(&doc, "AWS errors");
    let kinds: BTreeSet<String> = Kind::ALL
        .iter()
        .map(|k| k.code_suffix().to_owned())
        .collect();
    assert_same(
        "AWS scopes and kinds",
        &aws,
        &scopes.union(&kinds).cloned().collect(),
    );
}

/// `(command path, flags)` from README's Commands table: `tpf-sfn tables create [--prefix P]…`
/// → (`tables create`, {`--prefix`, …}). The shorthands `connection flags`, `table and
/// connection flags` and `coordinator flags` stand for the flags README says they are.
fn readme_commands() -> Vec<(String, BTreeSet<String>)> {
    let readme = read("README.md");
    let start = readme.find("## Commands").expect("a Commands section");
    let section = &readme[start..];
    let section = section[3..]
        .find("\n## ")
        .map_or(section, |end| &section[..end + 3]);
    table_rows(section)
        .iter()
        .filter_map(|row| code_cell(row.first()?).map(str::to_owned))
        .filter_map(|usage| {
            let words: Vec<&str> = usage.split_whitespace().collect();
            if words.first() != Some(&"tpf-sfn") {
                return None;
            }
            let path: Vec<&str> = words[1..]
                .iter()
                .take_while(|w| {
                    !w.starts_with('-') && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
                .copied()
                .collect();
            let mut flags: BTreeSet<String> = usage
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("--") && w.len() > 2)
                .map(str::to_owned)
                .collect();
            if usage.contains("connection flags") {
                flags.extend(
                    [
                        "--endpoint-url",
                        "--region",
                        "--profile",
                        "--aws-timeout-seconds",
                    ]
                    .map(String::from),
                );
            }
            if usage.contains("table and connection flags") {
                flags.extend(["--prefix", "--table"].map(String::from));
            }
            if usage.contains("coordinator flags") {
                flags.extend(
                    [
                        "--await-timeout-seconds",
                        "--max-retries",
                        "--retry-delay-ms",
                        "--retry-multiplier",
                    ]
                    .map(String::from),
                );
            }
            Some((path.join(" "), flags))
        })
        .collect()
}

/// Every leaf command clap knows, with its long flags (`--help` aside).
fn clap_commands() -> Vec<(String, BTreeSet<String>)> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<(String, BTreeSet<String>)>) {
        let subs: Vec<_> = cmd.get_subcommands().collect();
        if subs.is_empty() {
            let flags = cmd
                .get_arguments()
                .filter_map(|a| a.get_long())
                .filter(|l| *l != "help")
                .map(|l| format!("--{l}"))
                .collect();
            out.push((prefix.to_owned(), flags));
        }
        for sub in subs {
            let path = if prefix.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{prefix} {}", sub.get_name())
            };
            walk(sub, &path, out);
        }
    }
    let mut out = Vec::new();
    walk(&tpf_sfn::cli::Cli::command(), "", &mut out);
    out
}

#[test]
fn readme_command_table_matches_the_cli() {
    let readme = readme_commands();
    let cli = clap_commands();
    let names = |v: &[(String, BTreeSet<String>)]| -> BTreeSet<String> {
        v.iter().map(|(n, _)| n.clone()).collect()
    };
    assert_same("README commands", &names(&readme), &names(&cli));
    let mut wrong = Vec::new();
    for (name, flags) in &cli {
        let (_, documented) = readme.iter().find(|(n, _)| n == name).unwrap();
        let missing: Vec<_> = flags.difference(documented).collect();
        let unknown: Vec<_> = documented.difference(flags).collect();
        if !missing.is_empty() || !unknown.is_empty() {
            wrong.push(format!(
                "`{name}`: missing {missing:?}, unknown {unknown:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "README's flags:\n{}", wrong.join("\n"));
}

#[test]
fn the_readers_see_what_they_are_given() {
    let rows = table_rows("| `a` | x \\| y |\n|---|---|\n| b | c |\n");
    assert_eq!(rows[0], vec!["`a`", "x | y"]);
    assert_eq!(code_cell("`CODE` rest"), Some("CODE"));
    assert_eq!(
        literals_after(
            "Error::new(\n  \"IO_READ\", x); ApiError::new(400, \"B\")",
            "Error::new("
        ),
        vec!["IO_READ"]
    );
    assert_eq!(
        prefixed_literals("f(\"CONTRACT_X\", \"other\", \"INTERNAL\")", &["CONTRACT_"]),
        BTreeSet::from(["CONTRACT_X".to_owned(), "INTERNAL".to_owned()])
    );
    let doc = "## A\n| code | m |\n|---|---|\n| `X` | x |\n## B\n| `Y` | y |\n";
    assert_eq!(codes_under(doc, "A"), BTreeSet::from(["X".to_owned()]));
}
