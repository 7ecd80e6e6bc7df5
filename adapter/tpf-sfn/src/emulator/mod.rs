//! The Lambda durable functions backend run locally, on AWS's own durable execution emulator:
//! the pieces `tpf-sfn dev --backend lambda-durable` starts, and the durable end-to-end tests
//! start the same way.
//!
//! - [`tools`]: the emulator (`dex-local-runner`) and `cargo lambda watch` (the Lambda runtime
//!   API the emulator invokes), both installed by `scripts/dex.sh install`.
//! - [`function`]: a release's durable driver function, our `tpf-sfn-lambda` bootstrap polling
//!   that runtime API as Lambda runs it.
//! - [`lambda`]: the Lambda endpoint in front of the emulator, filling its declared gaps.
//!
//! Every process is a [`Reaped`] child: stopped when dropped, and on Linux also when the
//! process that started it dies, so no emulator outlives the loop that started it.

pub mod function;
pub mod lambda;
pub mod tools;

use std::process::{Child, Command, ExitStatus};

use crate::error::Error;

/// A background task that ends when dropped.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A child process killed and reaped when dropped (also on panic).
pub struct Reaped {
    name: String,
    child: Child,
}

impl Reaped {
    /// Starts `command` as the child called `name`. On Linux the child gets SIGKILL when the
    /// thread that started it ends, so a `dev` killed outright leaves no process behind: start
    /// children from a thread that lives as long as they should.
    pub fn spawn(name: &str, mut command: Command) -> Result<Reaped, Error> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
            unsafe {
                command.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().map_err(|e| {
            Error::new("EMULATOR_SPAWN", format!("cannot start {name}"))
                .with_location(command.get_program().to_string_lossy().into_owned())
                .with_source(e)
                .with_hint("check that the program exists and is executable (scripts/dex.sh install installs the emulator's)")
        })?;
        Ok(Reaped {
            name: name.to_owned(),
            child,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The child's exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
