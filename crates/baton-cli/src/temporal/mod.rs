//! Reaching Temporal: the embedded dev server Baton starts for you, and the connection to
//! whichever server the settings name.

mod connect;
mod connect_error;
mod embedded;
mod identity;
mod join;

pub use connect::{ConnectError, connect, wait_until_ready};
pub use embedded::{EmbeddedError, EmbeddedServer, ServerLost};
pub use identity::worker_identity;
pub use join::{join, joined_address};
