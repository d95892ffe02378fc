//! Calls to agents over the A2A gRPC binding, through the official `a2a-grpc` transport on a
//! channel Baton builds itself: connected on first use with a bounded connect time (the
//! official factory connects at once, without a bound, while the card is being validated),
//! over TLS where the agent is.

use std::time::Duration;

use a2a::{A2AError, AgentCard, AgentInterface, TRANSPORT_PROTOCOL_GRPC};
use a2a_client::{Transport, TransportFactory};
use a2a_grpc::GrpcTransport;
use async_trait::async_trait;
use tonic::transport::{ClientTlsConfig, Endpoint};
use url::Url;

/// A gRPC interface URL as a URL: gRPC names its target `host:port`, which takes `scheme`, the
/// scheme of the agent's own URL; an http(s) URL keeps its scheme. gRPC is called at the root
/// of the origin, so a URL with a path is not one Baton can call.
pub fn grpc_url(raw: &str, scheme: &str) -> Option<Url> {
    let url = if raw.contains("://") {
        Url::parse(raw).ok()?
    } else {
        let (_, port) = raw.rsplit_once(':')?;
        port.parse::<u16>().ok()?;
        Url::parse(&format!("{scheme}://{raw}")).ok()?
    };
    let at_root = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    (matches!(url.scheme(), "http" | "https") && url.has_host() && at_root).then_some(url)
}

/// Makes gRPC transports for an agent whose URL has `scheme`.
pub struct GrpcFactory {
    scheme: String,
    connect_timeout: Duration,
}

impl GrpcFactory {
    pub fn new(agent_url: &Url, connect_timeout: Duration) -> Self {
        GrpcFactory {
            scheme: agent_url.scheme().to_string(),
            connect_timeout,
        }
    }

    fn endpoint(&self, interface: &str) -> Result<Endpoint, A2AError> {
        let url = grpc_url(interface, &self.scheme).ok_or_else(|| {
            A2AError::internal(format!("the gRPC interface {interface} is not host:port"))
        })?;
        let origin = url.origin().ascii_serialization();
        let endpoint = Endpoint::from_shared(origin.clone())
            .map_err(|e| A2AError::internal(format!("the gRPC interface {origin}: {e}")))?
            .connect_timeout(self.connect_timeout);
        if url.scheme() == "https" {
            endpoint
                .tls_config(ClientTlsConfig::new().with_webpki_roots())
                .map_err(|e| A2AError::internal(format!("TLS for {origin}: {e}")))
        } else {
            Ok(endpoint)
        }
    }
}

#[async_trait]
impl TransportFactory for GrpcFactory {
    fn protocol(&self) -> &str {
        TRANSPORT_PROTOCOL_GRPC
    }

    async fn create(
        &self,
        _card: &AgentCard,
        interface: &AgentInterface,
    ) -> Result<Box<dyn Transport>, A2AError> {
        let channel = self.endpoint(&interface.url)?.connect_lazy();
        Ok(Box::new(GrpcTransport::from_channel(channel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grpc_target_takes_the_agents_scheme_unless_it_names_one() {
        let cases = [
            ("127.0.0.1:9001", "http", Some("http://127.0.0.1:9001/")),
            (
                "ledger.example:443",
                "https",
                Some("https://ledger.example/"),
            ),
            ("[::1]:9001", "http", Some("http://[::1]:9001/")),
            (
                "https://ledger.example:8443",
                "http",
                Some("https://ledger.example:8443/"),
            ),
            ("https://grpc.example/a2a", "https", None),
            ("ledger.example", "https", None),
            ("file:///etc/passwd", "http", None),
            ("unix:/tmp/socket", "http", None),
            ("", "http", None),
        ];
        for (raw, scheme, expected) in cases {
            assert_eq!(
                grpc_url(raw, scheme).map(|u| u.to_string()).as_deref(),
                expected,
                "{raw} for a {scheme} agent"
            );
        }
    }

    #[tokio::test]
    async fn a_transport_is_made_without_connecting() {
        let factory = GrpcFactory::new(
            &Url::parse("http://127.0.0.1:9").unwrap(),
            Duration::from_secs(1),
        );
        let card: AgentCard = serde_json::from_value(serde_json::json!({
            "name": "x", "description": "", "version": "1", "supportedInterfaces": [],
            "capabilities": {}, "skills": []
        }))
        .unwrap();
        let interface = AgentInterface::new("127.0.0.1:9", TRANSPORT_PROTOCOL_GRPC);
        assert!(factory.create(&card, &interface).await.is_ok());
        let bad = AgentInterface::new("unix:/tmp/socket", TRANSPORT_PROTOCOL_GRPC);
        assert!(factory.create(&card, &bad).await.is_err());
    }
}
