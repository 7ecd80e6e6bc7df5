//! `tpf-sfn init`: the annotated default configuration.

use std::io::Write;

use tpf_sfn_compiler::config::DriverConfig;

use crate::cli::InitArgs;
use crate::exit::{CmdResult, Failure};

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
            Failure::Io(format!(
                "error[INIT_EXISTS]: {} already exists\n  = hint: pass --force to overwrite it, or give another path",
                args.path.display()
            ))
        } else {
            Failure::Io(format!("error[IO_WRITE]: cannot create {}: {e}", args.path.display()))
        }
    })?;
    file.write_all(DriverConfig::annotated_default().as_bytes())
        .map_err(|e| {
            Failure::Io(format!(
                "error[IO_WRITE]: cannot write {}: {e}",
                args.path.display()
            ))
        })?;
    println!("wrote {}", args.path.display());
    Ok(())
}
