//! The one writer for everything the command line prints on stdout and stderr.
//!
//! `println!` panics when a write fails: a full disk (`tpf-sfn simulate > /dev/full`) or a reader
//! that went away (`| head -1`) would end the process with a panic and exit 101. Every line goes
//! through [`write`] instead (the [`out!`], [`outln!`] and [`errln!`] macros): the first failure
//! of a stream is kept and later writes to that stream are skipped, so the command finishes what
//! it was doing (a deploy is never cut in half by its own log line), and [`finish`] turns the
//! failure into a coded error and an exit code at the end (`crate::run`).

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;

use crate::error::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

static STDOUT_FAILED: OnceLock<io::Error> = OnceLock::new();
static STDERR_FAILED: OnceLock<io::Error> = OnceLock::new();

fn failed(stream: Stream) -> &'static OnceLock<io::Error> {
    match stream {
        Stream::Out => &STDOUT_FAILED,
        Stream::Err => &STDERR_FAILED,
    }
}

/// Writes `args` to `stream`, unless an earlier write to it failed; a failure is kept for
/// [`finish`], never raised.
pub fn write(stream: Stream, args: fmt::Arguments<'_>) {
    write_with(stream, |w| w.write_fmt(args));
}

/// Writes raw bytes (generated completions, which arrive as bytes).
pub fn write_bytes(stream: Stream, bytes: &[u8]) {
    write_with(stream, |w| w.write_all(bytes));
}

fn write_with(stream: Stream, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
    let state = failed(stream);
    if state.get().is_some() {
        return;
    }
    let result = match stream {
        Stream::Out => write(&mut io::stdout().lock()),
        Stream::Err => write(&mut io::stderr().lock()),
    };
    if let Err(e) = result {
        let _ = state.set(e);
    }
}

/// `print!` through the one writer.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdio::write($crate::stdio::Stream::Out, format_args!($($arg)*))
    };
}

/// `println!` through the one writer.
macro_rules! outln {
    () => {
        $crate::stdio::write($crate::stdio::Stream::Out, format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdio::write(
            $crate::stdio::Stream::Out,
            format_args!("{}\n", format_args!($($arg)*)),
        )
    };
}

/// `eprintln!` through the one writer.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::stdio::write(
            $crate::stdio::Stream::Err,
            format_args!("{}\n", format_args!($($arg)*)),
        )
    };
}

pub(crate) use {errln, out, outln};

/// How printing went, once the command is done.
#[derive(Debug)]
pub enum Outcome {
    /// Every write reached its stream.
    Written,
    /// The reader of stdout or stderr went away (`| head -1`): the command ends quietly, as
    /// Unix tools do, with the status a shell reports for SIGPIPE.
    Closed,
    /// A write failed otherwise (a full disk): `STDOUT_WRITE` or `STDERR_WRITE`.
    Failed(Error),
}

/// Exit status of a command whose reader went away, as a shell reports SIGPIPE (128 + 13).
pub const CLOSED_PIPE: u8 = 141;

/// Flushes stdout and says whether everything printed was written.
pub fn finish() -> Outcome {
    if STDOUT_FAILED.get().is_none() {
        if let Err(e) = io::stdout().lock().flush() {
            let _ = STDOUT_FAILED.set(e);
        }
    }
    let closed = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    match (STDOUT_FAILED.get(), STDERR_FAILED.get()) {
        (Some(e), _) | (None, Some(e)) if closed(e) => Outcome::Closed,
        (Some(e), _) => Outcome::Failed(
            Error::new("STDOUT_WRITE", "cannot write to stdout")
                .with_source(copy(e))
                .with_hint(INCOMPLETE),
        ),
        (None, Some(e)) => Outcome::Failed(
            Error::new("STDERR_WRITE", "cannot write to stderr")
                .with_source(copy(e))
                .with_hint(INCOMPLETE),
        ),
        (None, None) => Outcome::Written,
    }
}

const INCOMPLETE: &str =
    "what the command printed is incomplete: free space on the device it goes to, or send it elsewhere";

/// Whether stderr still takes writes (a failed stderr cannot carry its own error).
pub fn stderr_works() -> bool {
    STDERR_FAILED.get().is_none()
}

/// Whether stdout still takes writes.
pub fn stdout_works() -> bool {
    STDOUT_FAILED.get().is_none()
}

/// The kept error again, as the cause of the coded one (an `io::Error` cannot be cloned).
fn copy(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}
