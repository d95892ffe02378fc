//! How a stand-in watches its remote task between turns: the defaults the configuration and the
//! workflow share.

use std::time::Duration;

use baton_proto::RemoteWatch;

/// The safety fetch of a push watch (`agents[].push_safety_fetch`): a push lost while no
/// receiver was up (a restart, a network split) costs at most this long.
pub const PUSH_SAFETY_FETCH: Duration = Duration::from_secs(30);

/// How often a push-watched task is fetched anyway: the watch's own setting, else the default.
pub fn safety_fetch(watch: Option<&RemoteWatch>) -> Duration {
    watch
        .and_then(|w| w.safety_fetch_secs)
        .map_or(PUSH_SAFETY_FETCH, Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::WatchKind;

    #[test]
    fn a_watch_that_names_its_safety_fetch_keeps_it_and_one_that_does_not_takes_the_default() {
        let mut watch = RemoteWatch::unregistered(WatchKind::Push);
        assert_eq!(safety_fetch(Some(&watch)), PUSH_SAFETY_FETCH);
        assert_eq!(safety_fetch(None), PUSH_SAFETY_FETCH);
        watch.safety_fetch_secs = Some(120);
        assert_eq!(safety_fetch(Some(&watch)), Duration::from_secs(120));
    }
}
