//! The `baton` command's library half: everything the binary wires together, kept testable.

pub mod agents_check;
pub mod logging;
pub mod shutdown;
pub mod temporal;
pub mod temporal_serve;
