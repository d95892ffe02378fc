//! Deciding whether Baton can honour a remote agent's card, before anything else is sent to it.
//!
//! The checks read the raw JSON first, so a card is refused for what it declares even when the
//! declaration itself is malformed: required extensions, then the protocol version, then the
//! typed parse and the choice of interface. Whether Baton can satisfy the card's security is the
//! credential plan's to say (`outbound_auth`).

use a2a::{
    AgentCard, AgentInterface, TRANSPORT_PROTOCOL_GRPC, TRANSPORT_PROTOCOL_HTTP_JSON,
    TRANSPORT_PROTOCOL_JSONRPC,
};
use serde_json::Value;

use crate::extensions::SUPPORTED_EXTENSIONS;
use crate::grpc_transport::grpc_url;
use crate::{AgentError, UnsupportedExtensionError};

/// The bindings Baton speaks, in the order it prefers them when a card lists both first.
pub const SUPPORTED_BINDINGS: &[&str] = &[
    TRANSPORT_PROTOCOL_JSONRPC,
    TRANSPORT_PROTOCOL_HTTP_JSON,
    TRANSPORT_PROTOCOL_GRPC,
];

/// A card Baton accepted, with the interface it will call and the extensions both sides know.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedCard {
    /// The card as parsed.
    pub card: AgentCard,
    /// The interface Baton calls: the first on the card it can speak.
    pub interface: AgentInterface,
    /// The extensions Baton implements that the card advertises: all `A2A-Extensions` may name.
    pub extensions: Vec<String>,
}

/// Validates the raw card of agent `agent`, fetched from `url`.
pub fn validate_card(agent: &str, url: &str, raw: &Value) -> Result<ValidatedCard, AgentError> {
    let object = raw.as_object().ok_or_else(|| AgentError::CardInvalid {
        agent: agent.to_string(),
        url: url.to_string(),
        reason: "the card is not a JSON object".into(),
    })?;
    refuse_required_extensions(agent, object)?;
    if !object.contains_key("supportedInterfaces") {
        return Err(AgentError::NoCompatibleInterface {
            agent: agent.to_string(),
            reason: format!(
                "the card has no supportedInterfaces, so it is an A2A {} card; Baton speaks A2A 1.x only",
                object
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("0.3")
            ),
        });
    }
    let card: AgentCard =
        serde_json::from_value(raw.clone()).map_err(|e| AgentError::CardInvalid {
            agent: agent.to_string(),
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    let interface = choose_interface(agent, &card)?;
    let extensions = advertised_supported_extensions(&card);
    Ok(ValidatedCard {
        card,
        interface,
        extensions,
    })
}

/// Checks a card Baton built itself (for `self` or an agent of the same process) with the same
/// rules as a fetched one.
pub fn validate_built_card(agent: &str, card: &AgentCard) -> Result<ValidatedCard, AgentError> {
    let raw = serde_json::to_value(card).map_err(|e| AgentError::CardInvalid {
        agent: agent.to_string(),
        url: "(built in-process)".into(),
        reason: e.to_string(),
    })?;
    validate_card(agent, "(built in-process)", &raw)
}

/// Refuses a card whose `version` is not the one `agents[].version` pins, when it pins one: the
/// operator vetted that version of the agent, not whatever it has become since.
pub fn check_pinned_version(
    agent: &str,
    pinned: Option<&str>,
    card: &AgentCard,
) -> Result<(), AgentError> {
    match pinned {
        Some(pinned) if pinned != card.version => Err(AgentError::VersionMismatch {
            agent: agent.to_string(),
            pinned: pinned.to_string(),
            found: card.version.clone(),
        }),
        _ => Ok(()),
    }
}

fn refuse_required_extensions(
    agent: &str,
    card: &serde_json::Map<String, Value>,
) -> Result<(), UnsupportedExtensionError> {
    let extensions = card
        .get("capabilities")
        .and_then(|c| c.get("extensions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for extension in extensions {
        let required = extension.get("required").and_then(Value::as_bool) == Some(true);
        let uri = extension.get("uri").and_then(Value::as_str).unwrap_or("");
        if required && !SUPPORTED_EXTENSIONS.contains(&uri) {
            return Err(UnsupportedExtensionError {
                agent: agent.to_string(),
                reason: "remote agent card requires an extension Baton does not implement".into(),
                detail: Some(format!("extension={uri}")),
            });
        }
    }
    Ok(())
}

/// The first interface, in the card's order of preference, with a binding Baton speaks at
/// protocol version 1.x and an http(s) URL (for gRPC, `host:port` or an http(s) origin).
fn choose_interface(agent: &str, card: &AgentCard) -> Result<AgentInterface, AgentError> {
    let usable = |iface: &&AgentInterface| {
        let reachable = if iface.protocol_binding == TRANSPORT_PROTOCOL_GRPC {
            grpc_url(&iface.url, "http").is_some()
        } else {
            url::Url::parse(&iface.url)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        };
        SUPPORTED_BINDINGS.contains(&iface.protocol_binding.as_str())
            && iface.protocol_version.split('.').next() == Some("1")
            && reachable
    };
    card.supported_interfaces
        .iter()
        .find(usable)
        .cloned()
        .ok_or_else(|| {
            let offered: Vec<String> = card
                .supported_interfaces
                .iter()
                .map(|i| format!("{} {} at {}", i.protocol_binding, i.protocol_version, i.url))
                .collect();
            AgentError::NoCompatibleInterface {
                agent: agent.to_string(),
                reason: format!(
                    "the card offers no A2A 1.x interface in a binding Baton speaks (JSONRPC or HTTP+JSON over http/https, GRPC at host:port); it offers: {}",
                    if offered.is_empty() { "nothing".to_string() } else { offered.join("; ") }
                ),
            }
        })
}

fn advertised_supported_extensions(card: &AgentCard) -> Vec<String> {
    let advertised = card.capabilities.extensions.as_deref().unwrap_or_default();
    SUPPORTED_EXTENSIONS
        .iter()
        .filter(|uri| advertised.iter().any(|e| e.uri == **uri))
        .map(ToString::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extensions::TASK_EXTENSION;
    use serde_json::json;

    fn card() -> Value {
        json!({
            "name": "Ledger",
            "description": "Answers order questions",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:9000/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": []
        })
    }

    fn with(mut base: Value, key: &str, value: Value) -> Value {
        base[key] = value;
        base
    }

    fn refusal(raw: &Value) -> AgentError {
        validate_card("ledger", "http://x", raw).unwrap_err()
    }

    #[test]
    fn a_plain_card_is_accepted_with_its_interface() {
        let valid = validate_card("ledger", "http://x", &card()).unwrap();
        assert_eq!(valid.interface.protocol_binding, "JSONRPC");
        assert_eq!(valid.interface.url, "http://127.0.0.1:9000/rpc");
        assert!(valid.extensions.is_empty());
    }

    #[test]
    fn declared_security_is_read_whole_and_decided_by_the_credential_plan() {
        let raw = with(
            with(
                card(),
                "securitySchemes",
                json!({"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}}),
            ),
            "securityRequirements",
            json!([{"schemes": {"key": {"list": []}}}]),
        );
        let validated = validate_card("ledger", "http://x", &raw).unwrap();
        assert!(validated.card.security_schemes.unwrap().contains_key("key"));
    }

    #[test]
    fn malformed_security_makes_the_card_invalid() {
        let raw = with(card(), "securitySchemes", json!("yes please"));
        assert_eq!(refusal(&raw).code(), "a2a.card_invalid");
    }

    #[test]
    fn empty_security_declarations_are_not_security() {
        let raw = with(
            with(card(), "securitySchemes", json!({})),
            "securityRequirements",
            json!([]),
        );
        assert!(validate_card("ledger", "http://x", &raw).is_ok());
    }

    #[test]
    fn a_required_unknown_extension_is_refused_naming_its_uri() {
        let raw = with(
            card(),
            "capabilities",
            json!({"extensions": [{"uri": "urn:x:billing", "required": true}]}),
        );
        let error = refusal(&raw);
        assert_eq!(error.code(), "a2a.unsupported_extension");
        assert!(
            error.to_string().contains("extension=urn:x:billing"),
            "{error}"
        );
    }

    #[test]
    fn an_optional_unknown_extension_is_accepted_and_never_requested() {
        let raw = with(
            card(),
            "capabilities",
            json!({"extensions": [{"uri": "urn:x:billing", "required": false}, {"uri": TASK_EXTENSION}]}),
        );
        let valid = validate_card("ledger", "http://x", &raw).unwrap();
        assert_eq!(valid.extensions, vec![TASK_EXTENSION.to_string()]);
    }

    #[test]
    fn a_required_supported_extension_is_accepted() {
        let raw = with(
            card(),
            "capabilities",
            json!({"extensions": [{"uri": TASK_EXTENSION, "required": true}]}),
        );
        assert!(validate_card("ledger", "http://x", &raw).is_ok());
    }

    #[test]
    fn a_0_3_only_card_is_refused_clearly() {
        let raw = json!({"name": "Old", "description": "", "version": "1", "url": "http://x/", "protocolVersion": "0.3", "preferredTransport": "JSONRPC", "capabilities": {}, "skills": []});
        let error = refusal(&raw);
        assert_eq!(error.code(), "a2a.no_compatible_interface");
        assert!(error.to_string().contains("A2A 0.3 card"), "{error}");
    }

    #[test]
    fn a_card_with_only_unreachable_grpc_or_0_3_interfaces_is_refused_listing_them() {
        let raw = with(
            card(),
            "supportedInterfaces",
            json!([
                {"url": "https://grpc.example/a2a", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "127.0.0.1:9001", "protocolBinding": "GRPC", "protocolVersion": "0.3"},
                {"url": "http://127.0.0.1:9000/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
            ]),
        );
        let error = refusal(&raw);
        assert_eq!(error.code(), "a2a.no_compatible_interface");
        let text = error.to_string();
        assert!(
            text.contains("GRPC 1.0 at https://grpc.example/a2a")
                && text.contains("GRPC 0.3")
                && text.contains("JSONRPC 0.3"),
            "{text}"
        );
    }

    #[test]
    fn a_grpc_interface_at_host_port_is_chosen_when_the_card_prefers_it() {
        let raw = with(
            card(),
            "supportedInterfaces",
            json!([
                {"url": "127.0.0.1:9001", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "http://127.0.0.1:9000/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]),
        );
        let valid = validate_card("ledger", "http://x", &raw).unwrap();
        assert_eq!(valid.interface.protocol_binding, "GRPC");
        assert_eq!(valid.interface.url, "127.0.0.1:9001");
    }

    #[test]
    fn the_first_usable_interface_in_card_order_is_chosen() {
        let raw = with(
            card(),
            "supportedInterfaces",
            json!([
                {"url": "127.0.0.1:9001", "protocolBinding": "GRPC", "protocolVersion": "0.3"},
                {"url": "http://127.0.0.1:9000/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://127.0.0.1:9000/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]),
        );
        let valid = validate_card("ledger", "http://x", &raw).unwrap();
        assert_eq!(valid.interface.protocol_binding, "HTTP+JSON");
    }

    #[test]
    fn an_interface_url_that_is_not_http_is_unusable() {
        let raw = with(
            card(),
            "supportedInterfaces",
            json!([
                {"url": "file:///etc/passwd", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]),
        );
        assert_eq!(refusal(&raw).code(), "a2a.no_compatible_interface");
    }

    #[test]
    fn a_card_missing_required_fields_is_invalid() {
        let raw = json!({"supportedInterfaces": []});
        assert_eq!(refusal(&raw).code(), "a2a.card_invalid");
        assert_eq!(refusal(&json!([1, 2])).code(), "a2a.card_invalid");
    }

    #[test]
    fn a_pinned_version_must_be_the_cards_exactly() {
        let valid = validate_card("ledger", "http://x", &card()).unwrap();
        assert!(check_pinned_version("ledger", None, &valid.card).is_ok());
        assert!(check_pinned_version("ledger", Some("1.0.0"), &valid.card).is_ok());
        for pinned in ["1.0.1", "1.0", "v1.0.0", "1.0.0 "] {
            let error = check_pinned_version("ledger", Some(pinned), &valid.card).unwrap_err();
            assert_eq!(error.code(), "a2a.card_version_mismatch");
            assert_eq!(error.agent(), "ledger");
            assert_eq!(
                error.to_string(),
                format!(
                    "agent ledger: the card says version \"1.0.0\", but agents[].version pins {pinned:?}"
                )
            );
        }
    }
}
