//! One integration-test binary per crate: a crate whose manifest sets `autotests = false` builds
//! `tests/integration.rs` alone, which declares every other file of `tests/` as a module. A file
//! left out of it would never be compiled or run, so every file must be declared. And the
//! commands the docs give to run a test, `cargo test -p <crate> --test <binary> [<file>::…]`,
//! must name a test binary and a file that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The one binary of a crate whose tests are merged.
const BINARY: &str = "integration";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest(dir: &Path) -> toml::Table {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// A workspace crate's test binaries as cargo builds them.
#[derive(Debug)]
enum Tests {
    /// `autotests = false`: the one binary, with the files `tests/integration.rs` declares.
    Merged { declared: BTreeSet<String> },
    /// Cargo's default: one binary per `tests/*.rs` file.
    PerFile { files: BTreeSet<String> },
}

/// The stems of the `.rs` files directly in `dir` (none if it does not exist).
fn test_files(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect()
}

/// The modules `binary` (the text of a `tests/integration.rs`) declares: its `mod <name>;` lines.
fn declared(binary: &str) -> BTreeSet<String> {
    binary
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// The files of `tests/` (stems, the binary's own excluded) that `binary` does not declare.
fn undeclared(files: &BTreeSet<String>, binary: &str) -> Vec<String> {
    let declared = declared(binary);
    files
        .iter()
        .filter(|f| *f != BINARY && !declared.contains(*f))
        .cloned()
        .collect()
}

/// Every workspace crate by package name: its folder and its test binaries.
fn workspace() -> BTreeMap<String, (PathBuf, Tests)> {
    let members = manifest(&root())["workspace"]["members"]
        .as_array()
        .expect("workspace.members")
        .iter()
        .map(|m| m.as_str().expect("a member is a path").to_owned())
        .collect::<Vec<_>>();
    members
        .into_iter()
        .map(|m| {
            let dir = root().join(&m);
            let toml = manifest(&dir);
            let package = toml["package"].as_table().expect("[package]");
            let name = package["name"].as_str().expect("package.name").to_owned();
            let tests = if package.get("autotests").and_then(toml::Value::as_bool) == Some(false) {
                let binary = dir.join("tests").join(format!("{BINARY}.rs"));
                let text = std::fs::read_to_string(&binary)
                    .unwrap_or_else(|e| panic!("{m}: autotests = false, {e} reading {binary:?}"));
                Tests::Merged {
                    declared: declared(&text),
                }
            } else {
                Tests::PerFile {
                    files: test_files(&dir.join("tests")),
                }
            };
            (name, (dir, tests))
        })
        .collect()
}

#[test]
fn every_test_file_is_a_module_of_its_crates_one_binary() {
    let mut merged = 0;
    let mut missing = Vec::new();
    for (name, (dir, tests)) in workspace() {
        if let Tests::Merged { .. } = tests {
            merged += 1;
            let toml = manifest(&dir);
            let targets: Vec<&str> = toml
                .get("test")
                .and_then(toml::Value::as_array)
                .map(|ts| ts.iter().filter_map(|t| t.get("name")?.as_str()).collect())
                .unwrap_or_default();
            assert_eq!(targets, [BINARY], "{name}: the [[test]] targets");
            let binary = std::fs::read_to_string(dir.join("tests/integration.rs")).unwrap();
            for file in undeclared(&test_files(&dir.join("tests")), &binary) {
                missing.push(format!("{name}: tests/{file}.rs"));
            }
        }
    }
    assert!(merged >= 7, "only {merged} crates have one test binary");
    assert!(
        missing.is_empty(),
        "test files no binary builds (declare each as `mod <file>;` in its crate's \
         tests/integration.rs, and replace its own `mod support;` by `use crate::support;`):\n{}",
        missing.join("\n")
    );
}

/// `(crate, binary, filters)` of every `cargo test -p CRATE --test BINARY …` in `text`: the
/// words after the binary up to the end of the command, options left out.
fn test_commands(text: &str) -> Vec<(String, String, Vec<String>)> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("cargo test -p ") {
        let rest = &text[i + "cargo test -p ".len()..];
        // In a code span the command ends at its closing backquote, and may wrap onto the next
        // line; in a code block or a script, at the line's end or a comment.
        let line = text[..i].rfind('\n').map_or(&text[..i], |s| &text[s..i]);
        let end = if line.matches('`').count() % 2 == 1 {
            rest.find('`')
        } else {
            rest.find(['`', '#', '\n'])
        }
        .unwrap_or(rest.len());
        let words: Vec<&str> = rest[..end].split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "--test") else {
            continue;
        };
        let (Some(krate), Some(binary)) = (words.first(), words.get(at + 1)) else {
            continue;
        };
        let filters = words[at + 2..]
            .iter()
            .filter(|w| !w.starts_with('-'))
            .map(|w| w.trim_end_matches([')', '.', ',', ';']).to_owned())
            .collect();
        found.push((krate.to_string(), binary.to_string(), filters));
    }
    found
}

/// What is wrong with `cargo test -p krate --test binary filters…`, if anything.
fn check_command(
    crates: &BTreeMap<String, (PathBuf, Tests)>,
    krate: &str,
    binary: &str,
    filters: &[String],
) -> Option<String> {
    let Some((_, tests)) = crates.get(krate) else {
        return Some(format!("no crate `{krate}`"));
    };
    match tests {
        Tests::PerFile { files } if !files.contains(binary) => {
            Some(format!("`{krate}` has no test binary `{binary}`"))
        }
        Tests::PerFile { .. } => None,
        Tests::Merged { .. } if binary != BINARY => Some(format!(
            "`{krate}` has one test binary, `{BINARY}`; `{binary}` is `--test {BINARY} {binary}::`"
        )),
        Tests::Merged { declared } => filters
            .iter()
            .filter_map(|f| f.split_once("::").map(|(file, _)| file))
            .find(|file| !declared.contains(*file))
            .map(|file| format!("`{krate}`'s test binary has no file `{file}`")),
    }
}

#[test]
fn the_docs_run_tests_that_exist() {
    let crates = workspace();
    let mut docs: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md"]
        .iter()
        .map(|d| root().join(d))
        .collect();
    for dir in ["docs", "scripts"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            docs.push(entry.path());
        }
    }
    let mut commands = 0;
    let mut wrong = Vec::new();
    for doc in docs {
        let Ok(text) = std::fs::read_to_string(&doc) else {
            continue;
        };
        for (krate, binary, filters) in test_commands(&text) {
            commands += 1;
            if let Some(why) = check_command(&crates, &krate, &binary, &filters) {
                let name = doc.strip_prefix(root()).unwrap_or(&doc).display();
                wrong.push(format!("{name}: {why}"));
            }
        }
    }
    assert!(
        commands > 20,
        "only {commands} test commands found in the docs"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_layout_checks_see_what_they_are_given() {
    let files = BTreeSet::from(["a", "b", "support", BINARY].map(str::to_owned));
    assert_eq!(
        undeclared(&files, "//! doc\nmod support;\n\nmod a;\n"),
        ["b"]
    );
    assert!(undeclared(&files, "mod a;\nmod b;\nmod support;\n").is_empty());

    let text = "run `cargo test -p x --test integration a::t -- --nocapture` or\n\
                `cargo test -p y --test old`, `cargo test -p x --test integration\n  -- a:: c::`\n\
                ```sh\ncargo test -p x --test integration b::\n# prints\n```\n\
                and `cargo test -p x --lib`";
    let commands = test_commands(text);
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        commands,
        [
            ("x".into(), BINARY.into(), owned(&["a::t"])),
            ("y".into(), "old".into(), vec![]),
            ("x".into(), BINARY.into(), owned(&["a::", "c::"])),
            ("x".into(), BINARY.into(), owned(&["b::"])),
        ]
    );

    let crates = BTreeMap::from([
        (
            "x".to_owned(),
            (
                PathBuf::new(),
                Tests::Merged {
                    declared: BTreeSet::from(["a".to_owned(), "b".to_owned()]),
                },
            ),
        ),
        (
            "y".to_owned(),
            (
                PathBuf::new(),
                Tests::PerFile {
                    files: BTreeSet::from(["old".to_owned()]),
                },
            ),
        ),
    ]);
    let verdicts: Vec<_> = commands
        .iter()
        .map(|(k, b, f)| check_command(&crates, k, b, f))
        .collect();
    assert_eq!(
        verdicts,
        [
            None,
            None,
            Some("`x`'s test binary has no file `c`".to_owned()),
            None
        ]
    );
    assert!(check_command(&crates, "x", "a", &[]).is_some());
    assert!(check_command(&crates, "y", "new", &[]).is_some());
    assert!(check_command(&crates, "z", BINARY, &[]).is_some());
}
