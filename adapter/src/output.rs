//! Writing a release's files all-or-nothing, and comparing them with what is on disk.

use std::fs;
use std::path::Path;

use similar::TextDiff;

use crate::error::Error;
use crate::exit::Failure;

/// Writes every file, or none. Each file goes to a temporary sibling first; only when all are
/// written are they renamed into place, so an error (disk full, permissions) never leaves a
/// mix of old and new outputs behind.
pub fn write_all(dir: &Path, files: &[(String, String)]) -> Result<(), Failure> {
    fs::create_dir_all(dir).map_err(|e| io(dir, "create directory", e))?;
    let mut staged = Vec::with_capacity(files.len());
    for (name, contents) in files {
        // A name may sit in a subdirectory (`wake-path/main.tf.json`); its temporary sibling too.
        let dest = dir.join(name);
        let parent = dest.parent().unwrap_or(dir);
        fs::create_dir_all(parent).map_err(|e| io(parent, "create directory", e))?;
        let base = dest
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let tmp = parent.join(format!(".{base}.tpf-sfn-tmp"));
        if let Err(e) = fs::write(&tmp, contents) {
            for (t, _) in &staged {
                let _ = fs::remove_file(t);
            }
            let _ = fs::remove_file(&tmp);
            return Err(io(&tmp, "write", e));
        }
        staged.push((tmp, dest));
    }
    for (tmp, dest) in &staged {
        fs::rename(tmp, dest).map_err(|e| io(dest, "rename into place", e))?;
    }
    Ok(())
}

/// One file that differs from its committed copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub file: String,
    /// Unified diff, committed → compiled; empty for a missing file.
    pub diff: String,
    pub missing: bool,
}

/// Compares compiled files with `dir`; reads only, never writes.
pub fn check(dir: &Path, files: &[(String, String)]) -> Vec<Drift> {
    let mut drift = Vec::new();
    for (name, contents) in files {
        match fs::read_to_string(dir.join(name)) {
            Ok(existing) if &existing == contents => {}
            Ok(existing) => drift.push(Drift {
                file: name.clone(),
                diff: TextDiff::from_lines(&existing, contents)
                    .unified_diff()
                    .context_radius(2)
                    .header(&format!("committed/{name}"), &format!("compiled/{name}"))
                    .to_string(),
                missing: false,
            }),
            Err(_) => drift.push(Drift {
                file: name.clone(),
                diff: String::new(),
                missing: true,
            }),
        }
    }
    drift
}

fn io(path: &Path, what: &str, e: std::io::Error) -> Failure {
    Error::write(what, path, e).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reports_missing_and_changed_files() {
        let dir = tempfile::tempdir().unwrap();
        let files = vec![
            ("a.json".to_string(), "1\n".to_string()),
            ("b.json".to_string(), "2\n".to_string()),
        ];
        write_all(dir.path(), &files).unwrap();
        assert!(check(dir.path(), &files).is_empty());
        fs::write(dir.path().join("a.json"), "0\n").unwrap();
        fs::remove_file(dir.path().join("b.json")).unwrap();
        let d = check(dir.path(), &files);
        assert_eq!(d.len(), 2);
        assert!(
            d[0].diff.contains("-0") && d[0].diff.contains("+1"),
            "{}",
            d[0].diff
        );
        assert!(d[1].missing);
    }

    #[test]
    fn no_temporary_files_are_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &[("x".to_string(), "y".to_string())]).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x")]);
    }
}
