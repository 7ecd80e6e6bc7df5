use std::process::ExitCode;

/// `mapping-test` and `simulate` spend most of their time allocating small JSON values; the
/// system allocator's frees cost them about a third of their time (docs/benchmarks.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Everything printed goes through `tpf_sfn::stdio`, which turns a failed write (a full disk,
/// a reader that went away) into a coded exit instead of a panic.
fn main() -> ExitCode {
    tpf_sfn::run(std::env::args_os())
}
