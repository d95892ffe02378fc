//! A resolver for URLs a stranger gave: it resolves names to the addresses outside this network
//! only, at the time it connects, so a name that points inward reaches nothing.

use std::net::SocketAddr;

use baton_core::network::is_internal_ip;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Resolves names to the addresses outside this network only; a name with none left fails,
/// saying what `for_what` (a webhook, a file's URL) may not reach.
pub(crate) struct OutsideOnly {
    pub(crate) for_what: &'static str,
}

impl Resolve for OutsideOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let for_what = self.for_what;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let outside: Vec<SocketAddr> = all
                .into_iter()
                .filter(|addr| !is_internal_ip(addr.ip()))
                .collect();
            if outside.is_empty() {
                return Err(format!(
                    "{host} resolves only to loopback or private addresses, which {for_what} may not reach"
                )
                .into());
            }
            Ok(Box::new(outside.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_name_that_resolves_only_inward_reaches_nothing() {
        let name: Name = "localhost".parse().unwrap();
        let resolver = OutsideOnly {
            for_what: "a webhook",
        };
        let error = match resolver.resolve(name).await {
            Ok(_) => panic!("localhost resolved to an address a webhook may use"),
            Err(error) => error.to_string(),
        };
        assert!(
            error.contains("only to loopback or private addresses, which a webhook may not reach"),
            "{error}"
        );
    }
}
