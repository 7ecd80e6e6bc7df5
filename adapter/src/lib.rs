//! The tpf-sfn command line and everything that touches files, processes or AWS.
