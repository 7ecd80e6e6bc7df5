//! The durable backend's harness on AWS's own durable execution emulator (TPF's records in
//! DynamoDB on moto), shared by the gateway driver's durable tests (`gateway_e2e_durable`).
//! Action API v1's durable loop (the bridge starting and waking the v1 driver function, the
//! durable sweeper) is retired, and its tests with it.

pub(crate) mod harness;
