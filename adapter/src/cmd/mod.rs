pub mod compile;
pub mod graph;
pub mod init;
pub mod validate;
