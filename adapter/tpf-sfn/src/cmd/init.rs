//! `tpf-sfn init`: the annotated default configuration.

use crate::stdio::outln;
use std::io::Write;

use tpf_sfn_compiler::config::DriverConfig;

use crate::cli::InitArgs;
use crate::error::Error;
use crate::exit::CmdResult;

pub fn run(args: &InitArgs) -> CmdResult {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    // Opening a FIFO for writing waits for a reader unless non-blocking; with the flag it fails
    // at once instead (and a regular file is written the same either way).
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    if args.force {
        // Only a regular file is overwritten: not a FIFO, a device or a directory.
        if let Ok(meta) = std::fs::metadata(&args.path) {
            if !meta.is_file() {
                return Err(not_a_file(&args.path).into());
            }
        }
        open.create(true).truncate(true);
    } else {
        // create_new makes "exists" and "write" one atomic step: no clobbering race.
        open.create_new(true);
    }
    let mut file = open.open(&args.path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::new(
                "INIT_EXISTS",
                format!("{} already exists", args.path.display()),
            )
            .with_hint("pass --force to overwrite it, or give another path")
        } else {
            Error::write("create", &args.path, e)
        }
    })?;
    // The path may have been swapped for something else between the check and the open.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(not_a_file(&args.path).into());
    }
    file.write_all(DriverConfig::annotated_default().as_bytes())
        .map_err(|e| Error::write("write", &args.path, e))?;
    outln!("wrote {}", args.path.display());
    Ok(())
}

fn not_a_file(path: &std::path::Path) -> Error {
    Error::new(
        "INIT_NOT_FILE",
        format!("{} is not a regular file", path.display()),
    )
    .with_hint("give the path of a regular file or of one that does not exist yet")
}
