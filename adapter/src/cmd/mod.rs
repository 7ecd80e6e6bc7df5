pub mod compile;
pub mod graph;
pub mod init;
pub mod inputs;
pub mod mapping;
pub mod serve;
pub mod tables;
pub mod validate;
