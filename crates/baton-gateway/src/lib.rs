//! The inbound half of A2A: what Baton serves over HTTP, with Temporal behind every call.
//! Nothing here keeps state: any number of these servers can run.

mod push_receiver;

pub use push_receiver::{MAX_PUSH_BYTES, push_routes};
