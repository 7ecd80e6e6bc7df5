//! A directory of snapshots in which every distinct text is stored once.
//!
//! A test adds each output under a key (`contract [binding] file`); outputs that are equal share
//! one snapshot, named after the first key that produced it, and `index.snap` pins which key
//! lives in which snapshot. So a change that makes two outputs differ, or equal, shows up in the
//! index, and a template edit rewrites each distinct output once. Snapshot files in the
//! directory that no key produced any more fail the test, so the directory holds nothing stale.
//!
//! Shared by the compiler's output snapshots and the mapping proof's trace snapshots.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub struct SnapshotSet {
    dir: PathBuf,
    entries: Vec<(String, String, String)>,
}

impl SnapshotSet {
    /// Snapshots go to `dir` (absolute: the helper's own file is not the test's).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            entries: Vec::new(),
        }
    }

    /// `key` is what the index shows; `name` the snapshot's file name if this text is the first
    /// of its kind (letters, digits, `-`, `_`, `.`; anything else becomes `_`).
    pub fn add(&mut self, key: impl Into<String>, name: &str, text: impl Into<String>) {
        self.entries
            .push((key.into(), file_safe(name), text.into()));
    }

    /// Asserts every distinct text with `assert(name, text)` (the caller's `insta` macro, so
    /// the snapshot header names the caller's test), then the index, then that no other
    /// snapshot is left in the directory.
    pub fn assert(self, assert: impl Fn(&str, &str)) {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(&self.dir);
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.bind(|| self.assert_bound(&assert));
    }

    fn assert_bound(&self, assert: &dyn Fn(&str, &str)) {
        let mut stored: Vec<(&str, &str)> = Vec::new();
        let mut index = String::new();
        for (key, name, text) in &self.entries {
            let holder = match stored.iter().find(|(_, t)| t == text) {
                Some((held, _)) => held,
                None => {
                    assert!(
                        !stored.iter().any(|(n, _)| n == name),
                        "two different outputs want the snapshot name {name}"
                    );
                    stored.push((name, text));
                    name.as_str()
                }
            };
            index.push_str(&format!("{key} = {holder}\n"));
        }
        for (name, text) in &stored {
            assert(name, text);
        }
        assert("index", &index);
        let expected: BTreeSet<String> = stored
            .iter()
            .map(|(n, _)| format!("{n}.snap"))
            .chain(["index.snap".to_owned()])
            .collect();
        let stale: Vec<String> = snap_files(&self.dir)
            .into_iter()
            .filter(|f| !expected.contains(f))
            .collect();
        assert!(
            stale.is_empty(),
            "snapshots no output produces any more, delete them: {stale:?} in {}",
            self.dir.display()
        );
    }
}

fn snap_files(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|f| f.ends_with(".snap"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
