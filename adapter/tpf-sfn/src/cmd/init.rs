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
    if args.force {
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
    file.write_all(DriverConfig::annotated_default().as_bytes())
        .map_err(|e| Error::write("write", &args.path, e))?;
    outln!("wrote {}", args.path.display());
    Ok(())
}
