//! `server.rate_limit_per_minute`, per caller: a participant a credential proved has a budget of
//! its own wherever it calls from; any other request counts against its client's address (the
//! connection's peer, or behind `server.trusted_proxies` the client they name). A GCRA limiter
//! (the `governor` crate): `per_minute` requests a minute, as a burst or spread out.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use ipnet::IpNet;

use crate::client_address::client_address;
use crate::identity::{CALLER_KIND_HEADER, CallerKind, PARTICIPANT_HEADER};

/// Callers tracked at most. Those whose budget has refilled are forgotten first; if that frees
/// nothing (that many callers all busy at once), a new one is refused until one does.
const MAX_TRACKED: usize = 10_000;

/// Whose budget a request spends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Budget {
    /// A participant a credential proved.
    Caller(String),
    /// Anyone else, by the client's address.
    Address(IpAddr),
}

/// The limiter every gateway route shares; `None` inside when the limit is off.
#[derive(Clone)]
pub(crate) struct RateLimit {
    limiter: Option<Arc<DefaultKeyedRateLimiter<Budget>>>,
    trusted_proxies: Arc<Vec<IpNet>>,
}

impl RateLimit {
    /// `per_minute` requests a minute per caller (0: no limit), with the client addresses
    /// behind `trusted_proxies` read from their headers.
    pub(crate) fn new(per_minute: u32, trusted_proxies: Vec<IpNet>) -> Self {
        RateLimit {
            limiter: NonZeroU32::new(per_minute)
                .map(|n| Arc::new(DefaultKeyedRateLimiter::keyed(Quota::per_minute(n)))),
            trusted_proxies: Arc::new(trusted_proxies),
        }
    }

    /// Spends one request of `budget`; on a refusal, how long until the next one is taken.
    fn admit(&self, budget: Budget) -> Result<(), std::time::Duration> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if limiter.len() >= MAX_TRACKED {
            limiter.retain_recent();
            limiter.shrink_to_fit();
            if limiter.len() >= MAX_TRACKED {
                return Err(std::time::Duration::from_secs(1));
            }
        }
        limiter
            .check_key(&budget)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// The client's address of `request`, when it came over a connection.
    fn address(&self, request: &Request) -> Option<IpAddr> {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()?
            .0
            .ip();
        Some(client_address(
            peer,
            request.headers(),
            &self.trusted_proxies,
        ))
    }
}

/// For routes that ask nobody who they are (the card, pushes): every request by its address.
pub(crate) async fn limit_by_address(
    State(limit): State<RateLimit>,
    request: Request,
    next: Next,
) -> Response {
    match limit.address(&request) {
        Some(address) => admitted(&limit, Budget::Address(address), request, next).await,
        None => next.run(request).await,
    }
}

/// For the A2A methods, after authentication: a proven participant by its id, anyone else by
/// its address (an asserted id costs nothing to change, so it is no budget of its own).
pub(crate) async fn limit_by_caller(
    State(limit): State<RateLimit>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let proven = matches!(
        headers
            .get(CALLER_KIND_HEADER)
            .and_then(|kind| kind.to_str().ok()),
        Some(kind) if kind == CallerKind::Authenticated.as_str()
            || kind == CallerKind::Deployment.as_str()
    );
    let participant = headers
        .get(PARTICIPANT_HEADER)
        .and_then(|id| id.to_str().ok())
        .map(str::to_string);
    let budget = match (proven, participant) {
        (true, Some(participant)) => Some(Budget::Caller(participant)),
        _ => limit.address(&request).map(Budget::Address),
    };
    match budget {
        Some(budget) => admitted(&limit, budget, request, next).await,
        None => next.run(request).await,
    }
}

async fn admitted(limit: &RateLimit, budget: Budget, request: Request, next: Next) -> Response {
    match limit.admit(budget) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            let mut response =
                (StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded").into_response();
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_str(&seconds.to_string()).expect("a number is a header value"),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(n: u32) -> Budget {
        Budget::Address(IpAddr::from(n.to_be_bytes()))
    }

    #[test]
    fn a_budget_is_spent_then_refused_with_the_wait_and_others_are_not() {
        let limit = RateLimit::new(3, Vec::new());
        let first: Vec<bool> = (0..5).map(|_| limit.admit(address(1)).is_ok()).collect();
        assert_eq!(first, [true, true, true, false, false]);
        let wait = limit.admit(address(1)).unwrap_err();
        // Three a minute: the next one in about 20 s.
        assert!(wait.as_secs() <= 20 && wait.as_secs() >= 15, "{wait:?}");
        assert!(limit.admit(address(2)).is_ok());
        assert!(limit.admit(Budget::Caller("alice".into())).is_ok());
    }

    #[test]
    fn zero_means_no_limit() {
        let limit = RateLimit::new(0, Vec::new());
        assert!((0..10_000).all(|_| limit.admit(address(1)).is_ok()));
    }

    #[test]
    fn the_callers_tracked_are_bounded() {
        // One request a minute: every tracked caller stays busy, so a new one is refused.
        let limit = RateLimit::new(1, Vec::new());
        assert!((0..MAX_TRACKED as u32).all(|n| limit.admit(address(n)).is_ok()));
        assert!(limit.admit(address(u32::MAX)).is_err());
        // A million a minute: the budgets refill within microseconds and are forgotten.
        let limit = RateLimit::new(1_000_000, Vec::new());
        assert!((0..MAX_TRACKED as u32).all(|n| limit.admit(address(n)).is_ok()));
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(limit.admit(address(u32::MAX)).is_ok());
    }
}
