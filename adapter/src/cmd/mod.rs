pub mod compile;
pub mod deploy;
pub mod graph;
pub mod init;
pub mod inputs;
pub mod mapping;
pub mod status;
pub mod validate;
