//! Writing a release's files all-or-nothing, and comparing them with what is on disk.
//!
//! A directory holds exactly what the last write put there: each write leaves a ledger
//! ([`LEDGER`]) naming its files, and the next write removes the ones it no longer produces (a
//! CloudFormation export from a build with `--emit` that the next build leaves out), in the same
//! all-or-nothing step. Only files a ledger names are ever removed, so a directory that also
//! holds the user's own files keeps them.

use std::fs;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::error::Error;
use crate::exit::Failure;

/// Writes every file, or none. The new files are written into a fresh temporary directory next
/// to `dir` first; only when all are written are they renamed into place one by one, each old
/// file kept aside. If a rename fails (a path that became a directory, permissions), the files
/// already swapped in are put back, so `dir` holds either all old or all new files. The
/// temporary directory is removed on every path.
pub fn write_all(dir: &Path, files: &[(String, String)]) -> Result<(), Failure> {
    let stale = stale(dir, files);
    let mut files = files.to_vec();
    files.push((LEDGER.to_owned(), ledger_text(&files)));
    let created_dirs = create_dirs(dir)?;
    // The staging directory is gone at the end of this block, before the directories this
    // write created are removed (the first of them may hold it).
    let result = Staging::new(dir).and_then(|staging| {
        staging
            .stage(&files)
            .and_then(|()| staging.swap_in(dir, &files, &stale))
    });
    match &result {
        Ok(()) => remove_emptied_dirs(dir, &stale),
        Err(_) => remove_dirs(&created_dirs),
    }
    result
}

/// The directories under `dir` that removing `stale` files left empty.
fn remove_emptied_dirs(dir: &Path, stale: &[String]) {
    for name in stale {
        let mut at = Path::new(name).parent();
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
            if fs::remove_dir(dir.join(d)).is_err() {
                break;
            }
            at = d.parent();
        }
    }
}

/// The file in an output directory that names the files the last write put there.
pub const LEDGER: &str = ".tpf-sfn-files";

fn ledger_text(files: &[(String, String)]) -> String {
    let mut text = String::from(
        "# Written by tpf-sfn: the files of the last write here; the next write removes those it no longer produces.\n",
    );
    for (name, _) in files {
        text.push_str(name);
        text.push('\n');
    }
    text
}

/// The files the last write into `dir` produced (its ledger) that `files` no longer holds and
/// that are still there. A ledger line that is not a plain relative path (`..`, absolute) is
/// ignored: a hand-edited ledger cannot reach outside `dir`.
fn stale(dir: &Path, files: &[(String, String)]) -> Vec<String> {
    let Ok(bytes) = crate::input::read(&dir.join(LEDGER)) else {
        return Vec::new();
    };
    let produced: std::collections::BTreeSet<&str> =
        files.iter().map(|(n, _)| n.as_str()).collect();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#') && *line != LEDGER)
        .filter(|line| !produced.contains(line))
        .filter(|line| {
            Path::new(line)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .filter(|line| fs::symlink_metadata(dir.join(line)).is_ok_and(|m| !m.is_dir()))
        .map(str::to_owned)
        .collect()
}

/// `dir` and the missing directories above it, created; returns those it created, deepest last.
fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    missing.reverse();
    for d in &missing {
        if let Err(e) = fs::create_dir(d) {
            remove_dirs(&missing);
            return Err(io(d, "create directory", e));
        }
    }
    Ok(missing)
}

/// Removes directories this write created, deepest first, only while they are empty.
fn remove_dirs(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        let _ = fs::remove_dir(d);
    }
}

/// The temporary sibling directory: `new/` holds the staged files, `old/` the files they
/// replace until the swap is complete. Dropped, it is removed with whatever is left in it.
struct Staging {
    root: PathBuf,
}

impl Staging {
    fn new(dir: &Path) -> Result<Self, Failure> {
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_owned());
        let mut last = None;
        for attempt in 0..16u32 {
            let root = parent.join(format!(
                ".{base}.{}-{attempt}.tpf-sfn-tmp",
                std::process::id()
            ));
            // `create_dir` fails on an existing path, so the directory is ours alone.
            match fs::create_dir(&root) {
                Ok(()) => return Ok(Self { root }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(root),
                Err(e) => return Err(io(&root, "create directory", e)),
            }
        }
        let root = last.unwrap_or(parent);
        Err(io(
            &root,
            "create directory",
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        ))
    }

    fn new_file(&self, name: &str) -> PathBuf {
        self.root.join("new").join(name)
    }

    fn old_file(&self, name: &str) -> PathBuf {
        self.root.join("old").join(name)
    }

    fn stage(&self, files: &[(String, String)]) -> Result<(), Failure> {
        for (name, contents) in files {
            let tmp = self.new_file(name);
            if let Some(parent) = tmp.parent() {
                fs::create_dir_all(parent).map_err(|e| io(parent, "create directory", e))?;
            }
            fs::write(&tmp, contents).map_err(|e| io(&tmp, "write", e))?;
        }
        Ok(())
    }

    fn swap_in(
        &self,
        dir: &Path,
        files: &[(String, String)],
        stale: &[String],
    ) -> Result<(), Failure> {
        // What was done, to undo it: (destination, where its old copy went, directories made).
        let mut done: Vec<(PathBuf, Option<PathBuf>, Vec<PathBuf>)> = Vec::new();
        let steps = files
            .iter()
            .map(|(name, _)| (name, false))
            .chain(stale.iter().map(|name| (name, true)));
        for (name, remove) in steps {
            let step = if remove {
                self.set_aside(dir, name)
            } else {
                self.swap_one(dir, name)
            };
            match step {
                Ok(step) => done.push(step),
                Err(e) => {
                    for (dest, old, dirs) in done.iter().rev() {
                        match old {
                            Some(old) => {
                                let _ = fs::rename(old, dest);
                            }
                            None => {
                                let _ = fs::remove_file(dest);
                            }
                        }
                        remove_dirs(dirs);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Moves a stale file into `old/`, where the undo finds it; it goes with the staging
    /// directory once the write is complete.
    fn set_aside(
        &self,
        dir: &Path,
        name: &str,
    ) -> Result<(PathBuf, Option<PathBuf>, Vec<PathBuf>), Failure> {
        let dest = dir.join(name);
        let old = self.old_file(name);
        if let Some(parent) = old.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, "create directory", e))?;
        }
        fs::rename(&dest, &old).map_err(|e| io(&dest, "remove stale", e))?;
        Ok((dest, Some(old), Vec::new()))
    }

    fn swap_one(
        &self,
        dir: &Path,
        name: &str,
    ) -> Result<(PathBuf, Option<PathBuf>, Vec<PathBuf>), Failure> {
        let dest = dir.join(name);
        let made = match dest.parent() {
            Some(parent) => create_dirs(parent)?,
            None => Vec::new(),
        };
        let undo_dirs = |e: Failure| {
            remove_dirs(&made);
            e
        };
        // A file (or a link, moved as the link) is set aside; a directory at the path makes the
        // rename below fail, and is left exactly where it is.
        let old = match fs::symlink_metadata(&dest) {
            Ok(m) if !m.is_dir() => {
                let old = self.old_file(name);
                if let Some(parent) = old.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| undo_dirs(io(parent, "create directory", e)))?;
                }
                fs::rename(&dest, &old).map_err(|e| undo_dirs(io(&dest, "set aside", e)))?;
                Some(old)
            }
            _ => None,
        };
        if let Err(e) = fs::rename(self.new_file(name), &dest) {
            if let Some(old) = &old {
                let _ = fs::rename(old, &dest);
            }
            return Err(undo_dirs(io(&dest, "rename into place", e)));
        }
        Ok((dest, old, made))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// One file that differs from its committed copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub file: String,
    /// Unified diff, committed → compiled; empty for a missing or stale file.
    pub diff: String,
    pub missing: bool,
    /// Left from an earlier write that the compiled output no longer holds.
    pub stale: bool,
}

/// Compares compiled files with `dir`; reads only, never writes. A file an earlier write left
/// that the compiled output no longer holds is drift too: a write would remove it.
pub fn check(dir: &Path, files: &[(String, String)]) -> Vec<Drift> {
    let mut drift: Vec<Drift> = stale(dir, files)
        .into_iter()
        .map(|file| Drift {
            file,
            diff: String::new(),
            missing: false,
            stale: true,
        })
        .collect();
    for (name, contents) in files {
        let existing = crate::input::read(&dir.join(name))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        match existing {
            Ok(existing) if &existing == contents => {}
            Ok(existing) => drift.push(Drift {
                file: name.clone(),
                diff: TextDiff::from_lines(&existing, contents)
                    .unified_diff()
                    .context_radius(2)
                    .header(&format!("committed/{name}"), &format!("compiled/{name}"))
                    .to_string(),
                missing: false,
                stale: false,
            }),
            Err(_) => drift.push(Drift {
                file: name.clone(),
                diff: String::new(),
                missing: true,
                stale: false,
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

    /// Every name under `dir` (recursively, relative), for "nothing else was left" checks.
    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_rename_that_fails_leaves_every_old_file_and_no_temporary() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        let old = vec![
            ("a.json".to_string(), "old a\n".to_string()),
            ("sub/b.json".to_string(), "old b\n".to_string()),
        ];
        write_all(&out, &old).unwrap();
        // The last file's path became a directory: its rename fails after the others went in.
        fs::create_dir_all(out.join("c.json/inside")).unwrap();
        let new = vec![
            ("a.json".to_string(), "new a\n".to_string()),
            ("sub/b.json".to_string(), "new b\n".to_string()),
            ("d/new.json".to_string(), "new d\n".to_string()),
            ("c.json".to_string(), "new c\n".to_string()),
        ];
        let Err(Failure::Error(e)) = write_all(&out, &new) else {
            panic!("the write should fail");
        };
        assert_eq!(e.code(), "IO_WRITE");
        assert!(e.to_string().contains("c.json"), "{e}");
        assert_eq!(fs::read_to_string(out.join("a.json")).unwrap(), "old a\n");
        assert_eq!(
            fs::read_to_string(out.join("sub/b.json")).unwrap(),
            "old b\n"
        );
        assert_eq!(
            tree(root.path()),
            [
                "out",
                "out/.tpf-sfn-files",
                "out/a.json",
                "out/c.json",
                "out/c.json/inside",
                "out/sub",
                "out/sub/b.json"
            ],
            "old files only: no new file, new directory or temporary left"
        );
    }

    #[test]
    fn a_failed_first_write_into_a_new_directory_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("fresh/out");
        // A name that cannot be written under the staging directory (a file as a directory).
        let files = vec![
            ("x.json".to_string(), "1".to_string()),
            ("x.json/y.json".to_string(), "2".to_string()),
        ];
        assert!(write_all(&out, &files).is_err());
        assert_eq!(tree(root.path()), Vec::<String>::new());
    }

    #[test]
    fn a_new_write_replaces_every_file() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        write_all(&out, &[("a".to_string(), "1".to_string())]).unwrap();
        write_all(
            &out,
            &[
                ("a".to_string(), "2".to_string()),
                ("w/b".to_string(), "3".to_string()),
            ],
        )
        .unwrap();
        assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "2");
        assert_eq!(fs::read_to_string(out.join("w/b")).unwrap(), "3");
        assert_eq!(
            tree(root.path()),
            ["out", "out/.tpf-sfn-files", "out/a", "out/w", "out/w/b"]
        );
    }

    #[test]
    fn no_temporary_files_are_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &[("x".to_string(), "y".to_string())]).unwrap();
        assert_eq!(tree(dir.path()), [LEDGER, "x"]);
    }

    fn owned(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn a_file_the_last_write_made_and_this_one_does_not_is_removed() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("mine.txt"), "the user's own\n").unwrap();
        let first = owned(&[("a", "1"), ("cloudformation.json", "{}"), ("w/x", "2")]);
        write_all(&out, &first).unwrap();
        let second = owned(&[("a", "3")]);
        let drift = check(&out, &second);
        let stale: Vec<_> = drift.iter().filter(|d| d.stale).map(|d| &d.file).collect();
        assert_eq!(stale, ["cloudformation.json", "w/x"], "{drift:?}");
        write_all(&out, &second).unwrap();
        assert_eq!(
            tree(root.path()),
            ["out", "out/.tpf-sfn-files", "out/a", "out/mine.txt"],
            "the stale files are gone; the file no write made stays"
        );
        assert!(check(&out, &second).is_empty());
    }

    #[test]
    fn a_ledger_cannot_reach_outside_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(root.path().join("outside"), "keep").unwrap();
        let abs = root.path().join("outside");
        fs::write(out.join(LEDGER), format!("../outside\n{}\n", abs.display())).unwrap();
        write_all(&out, &owned(&[("a", "1")])).unwrap();
        assert_eq!(fs::read_to_string(&abs).unwrap(), "keep");
    }

    #[test]
    fn a_failed_write_puts_the_stale_files_back() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        write_all(&out, &owned(&[("a", "1"), ("old", "2")])).unwrap();
        // The new file's path is a directory: the write fails after the stale file went aside.
        fs::create_dir_all(out.join("b/inside")).unwrap();
        assert!(write_all(&out, &owned(&[("a", "3"), ("b", "4")])).is_err());
        assert_eq!(fs::read_to_string(out.join("old")).unwrap(), "2");
        assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "1");
    }
}
