//! Reading the files a command is given — contracts, releases, configs, scripts, scenarios, ASL
//! files, a compiled release's manifest and definitions. Every command reads through here, so
//! every command refuses the same things: anything but a regular file (a FIFO would block for
//! ever, `/dev/zero` would read until memory runs out) and anything over [`MAX_INPUT_BYTES`].

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::Error;

/// The largest input read: far above TPF's largest contracts (a 1,000-step contract is about
/// 1 MiB) and far below what would hurt the machine reading it.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The bytes of `path`, a regular file of at most [`MAX_INPUT_BYTES`].
pub fn read(path: &Path) -> Result<Vec<u8>, Error> {
    read_capped(path, MAX_INPUT_BYTES)
}

fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    let file = open(path)?;
    let meta = file.metadata().map_err(|e| Error::read(path, e))?;
    if !meta.is_file() {
        return Err(Error::new(
            "INPUT_NOT_FILE",
            format!("{} is not a regular file ({})", path.display(), kind(&meta)),
        )
        .with_hint("pass a file; pipes, devices and sockets are not read"));
    }
    if meta.len() > limit {
        return Err(too_large(path, limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow between the size check and the read; the cap holds either way.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::read(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(bytes)
}

fn too_large(path: &Path, limit: u64) -> Error {
    Error::new(
        "INPUT_TOO_LARGE",
        format!(
            "{} is larger than {} MiB, the most tpf-sfn reads from one file",
            path.display(),
            limit / (1024 * 1024)
        ),
    )
    .with_hint("pass the file TPF generated; no contract, release or config is near this size")
}

/// Opens without blocking: opening a FIFO for reading waits for a writer unless non-blocking.
#[cfg(unix)]
fn open(path: &Path) -> Result<File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::read(path, e))
}

#[cfg(not(unix))]
fn open(path: &Path) -> Result<File, Error> {
    File::open(path).map_err(|e| Error::read(path, e))
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read(&p).unwrap(), b"{}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_with_its_code() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b' '; 11]).unwrap();
        assert_eq!(read_capped(&p, 10).unwrap_err().code(), "INPUT_TOO_LARGE");
        assert_eq!(read_capped(&p, 11).unwrap().len(), 11);
    }

    #[test]
    fn a_directory_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path()).unwrap_err();
        assert_eq!(e.code(), "INPUT_NOT_FILE");
        assert!(e.to_string().contains("a directory"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_and_a_fifo_are_refused_without_reading() {
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.code(), "INPUT_NOT_FILE");
        assert!(e.to_string().contains("a device"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // With no writer, a blocking open would never return.
        let e = read(&fifo).unwrap_err();
        assert_eq!(e.code(), "INPUT_NOT_FILE");
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }
}
