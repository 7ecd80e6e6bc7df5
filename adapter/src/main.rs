fn main() -> std::process::ExitCode {
    tpf_sfn::run(std::env::args_os())
}
