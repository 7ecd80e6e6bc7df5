use std::process::ExitCode;

/// `mapping-test` and `simulate` spend most of their time allocating small JSON values; the
/// system allocator's frees cost them about a third of their time (docs/benchmarks.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit status of a process whose reader went away, as a shell reports SIGPIPE.
const CLOSED_PIPE: u8 = 141;

fn main() -> ExitCode {
    // A reader that stops early (`tpf-sfn compile … | head -1`) ends the command quietly, as
    // other command-line tools end: Rust ignores SIGPIPE, so printing panics instead.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !closed_pipe(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(|| tpf_sfn::run(std::env::args_os())) {
        Ok(code) => code,
        Err(payload) if closed_pipe(payload.as_ref()) => ExitCode::from(CLOSED_PIPE),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

fn closed_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to std") && message.contains("Broken pipe")
}
