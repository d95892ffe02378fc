//! The card a Baton agent describes itself with, built from its settings: `[card]` and the
//! public URL. The gateway serves it; the registry uses it, unfetched, for `self` and for other
//! Baton agents of the same process.

use std::collections::HashMap;

use a2a::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, ApiKeySecurityScheme,
    HttpAuthSecurityScheme, OpenIdConnectSecurityScheme, SecurityRequirement, SecurityScheme,
    TRANSPORT_PROTOCOL_GRPC, TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC,
};
use baton_core::extensions::{ENVELOPE_MEDIA_TYPE, SUPPORTED_EXTENSIONS};
use url::Url;

use crate::{AuthMode, AuthSettings, GrpcUrlForm, Settings};

const DEFAULT_NAME: &str = "Baton";
const DEFAULT_DESCRIPTION: &str =
    "A durable agent harness on Temporal: it works on tasks and delegates to other A2A agents.";
const DEFAULT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where other agents reach this one: `server.base_url`, else `http://<server.bind>`.
pub fn public_url(settings: &Settings) -> Url {
    settings.server.public_url()
}

/// How this agent names itself in the chain of parent tasks its briefs carry: the URL of its
/// HTTP+JSON interface, as its card publishes it.
pub fn agent_identity(server: &crate::ServerSettings) -> String {
    server
        .public_url()
        .as_str()
        .trim_end_matches('/')
        .to_string()
}

/// Where gRPC clients reach the agent, in the form `[card] grpc_url` asks: the origin of the
/// public URL, port included, as an absolute URL (A2A 1.0's `AgentInterface.url`; strict
/// clients such as ADK refuse anything else), or its bare `host:port`. gRPC is served at the
/// root of that origin whatever the URL's path, since gRPC clients call
/// `/lf.a2a.v1.A2AService/<Method>` there.
fn grpc_url(public: &Url, form: GrpcUrlForm) -> String {
    let host = public.host_str().unwrap_or("127.0.0.1");
    let port = public.port_or_known_default().unwrap_or(80);
    match form {
        GrpcUrlForm::Origin => format!("{}://{host}:{port}", public.scheme()),
        GrpcUrlForm::HostPort => format!("{host}:{port}"),
    }
}

/// The agent card as the gateway serves it. The official types write an `http` gRPC URL as
/// `host:port` whatever they are given, so the gRPC interface's URL is set here, in the form
/// `[card] grpc_url` asks.
pub fn served_card(settings: &Settings) -> serde_json::Value {
    let mut card = serde_json::to_value(agent_card(settings)).expect("an agent card serialises");
    let url = grpc_url(&public_url(settings), settings.card.grpc_url);
    for interface in card["supportedInterfaces"]
        .as_array_mut()
        .expect("a card lists its interfaces")
    {
        if interface["protocolBinding"] == TRANSPORT_PROTOCOL_GRPC {
            interface["url"] = serde_json::Value::String(url.clone());
        }
    }
    card
}

/// The agent card for `settings`. Every `[card]` value that is set replaces its default.
pub fn agent_card(settings: &Settings) -> AgentCard {
    let card = &settings.card;
    let public = public_url(settings);
    let base = public.as_str().trim_end_matches('/');
    AgentCard {
        name: card.name.clone().unwrap_or_else(|| DEFAULT_NAME.into()),
        description: card
            .description
            .clone()
            .unwrap_or_else(|| DEFAULT_DESCRIPTION.into()),
        version: card
            .version
            .clone()
            .unwrap_or_else(|| DEFAULT_VERSION.into()),
        supported_interfaces: vec![
            AgentInterface::new(format!("{base}/"), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(base, TRANSPORT_PROTOCOL_HTTP_JSON),
            AgentInterface::new(
                grpc_url(&public, settings.card.grpc_url),
                TRANSPORT_PROTOCOL_GRPC,
            ),
        ],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extensions: Some(
                SUPPORTED_EXTENSIONS
                    .iter()
                    .map(|uri| AgentExtension {
                        uri: uri.to_string(),
                        description: None,
                        required: Some(false),
                        params: None,
                    })
                    .collect(),
            ),
            extended_agent_card: Some(false),
        },
        default_input_modes: input_modes(&settings.content.media_types),
        default_output_modes: vec!["text/plain".into()],
        skills: card
            .skills
            .iter()
            .map(|skill| AgentSkill {
                id: skill.id.clone(),
                name: skill.name.clone(),
                description: skill.description.clone(),
                tags: skill.tags.clone(),
                examples: (!skill.examples.is_empty()).then(|| skill.examples.clone()),
                input_modes: None,
                output_modes: None,
                security_requirements: None,
            })
            .collect(),
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: security_schemes(&settings.server.auth),
        security_requirements: security_requirements(&settings.server.auth),
        signatures: None,
    }
}

/// What a message to this agent may carry: text, data (JSON), the task envelope, and files of
/// the media types `[content]` takes.
fn input_modes(media_types: &[String]) -> Vec<String> {
    let mut modes: Vec<String> = ["text/plain", "application/json", ENVELOPE_MEDIA_TYPE]
        .map(String::from)
        .to_vec();
    for media_type in media_types {
        if !modes.contains(media_type) {
            modes.push(media_type.clone());
        }
    }
    modes
}

const BEARER_SCHEME: &str = "bearer";
const API_KEY_SCHEME: &str = "apiKey";
const OIDC_SCHEME: &str = "oidc";

/// The credentials `[server.auth]` takes, as the card's `securitySchemes`; none when it takes
/// none, so a peer that refuses every scheme (tiny-harness) still delegates to an open agent.
fn security_schemes(auth: &AuthSettings) -> Option<HashMap<String, SecurityScheme>> {
    let mut schemes = HashMap::new();
    if !auth.tokens.is_empty() {
        schemes.insert(
            BEARER_SCHEME.to_string(),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                description: Some("a token the operator issued you".into()),
                bearer_format: None,
            }),
        );
        schemes.insert(
            API_KEY_SCHEME.to_string(),
            SecurityScheme::ApiKey(ApiKeySecurityScheme {
                location: "header".into(),
                name: auth.api_key_header.clone(),
                description: Some("the same token, as an API key".into()),
            }),
        );
    }
    if let Some(oidc) = &auth.oidc {
        let issuer = oidc.issuer.as_str().trim_end_matches('/');
        schemes.insert(
            OIDC_SCHEME.to_string(),
            SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                open_id_connect_url: format!("{issuer}/.well-known/openid-configuration"),
                description: Some(format!(
                    "a JWT from this issuer for audience {:?}; the participant is its {:?} claim",
                    oidc.audience, oidc.participant_claim
                )),
            }),
        );
    }
    (!schemes.is_empty()).then_some(schemes)
}

/// Any one scheme satisfies; where a caller may also come without a credential (asserted or
/// anonymous mode), an empty requirement says so.
fn security_requirements(auth: &AuthSettings) -> Option<Vec<SecurityRequirement>> {
    let schemes = security_schemes(auth)?;
    let mut names: Vec<&String> = schemes.keys().collect();
    names.sort();
    let mut requirements: Vec<SecurityRequirement> = names
        .into_iter()
        .map(|name| HashMap::from([(name.clone(), Vec::new())]))
        .collect();
    if auth.mode != AuthMode::Authenticated {
        requirements.push(HashMap::new());
    }
    Some(requirements)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn settings(toml: &str) -> Settings {
        Settings::parse(toml, Path::new("."), &|_| None).unwrap()
    }

    #[test]
    fn the_card_declares_each_credential_the_gateway_takes() {
        let env = |name: &str| (name == "T").then(|| "0123456789abcdef".to_string());
        let authenticated = Settings::parse(
            r#"
            [server.auth]
            mode = "authenticated"
            api_key_header = "X-Key"
            tokens = [{ participant = "alice", secret_env = "T" }]
            [server.auth.oidc]
            issuer = "https://id.example.com/"
            audience = "baton"
            "#,
            Path::new("."),
            &env,
        )
        .unwrap();
        let card = serde_json::to_value(agent_card(&authenticated)).unwrap();
        assert_eq!(
            card["securitySchemes"],
            serde_json::json!({
                "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "description": "a token the operator issued you"}},
                "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key", "description": "the same token, as an API key"}},
                "oidc": {"openIdConnectSecurityScheme": {
                    "openIdConnectUrl": "https://id.example.com/.well-known/openid-configuration",
                    "description": "a JWT from this issuer for audience \"baton\"; the participant is its \"sub\" claim"
                }}
            })
        );
        assert_eq!(
            card["securityRequirements"],
            serde_json::json!([
                {"schemes": {"apiKey": {"list": []}}},
                {"schemes": {"bearer": {"list": []}}},
                {"schemes": {"oidc": {"list": []}}}
            ])
        );
        let mut anonymous = authenticated.clone();
        anonymous.server.auth.mode = AuthMode::Anonymous;
        let requirements = agent_card(&anonymous).security_requirements.unwrap();
        assert_eq!(
            requirements.last(),
            Some(&HashMap::new()),
            "a credential is optional"
        );
    }

    #[test]
    fn defaults_describe_baton_at_the_bind_address() {
        let card = agent_card(&settings(""));
        assert_eq!(card.name, DEFAULT_NAME);
        assert_eq!(card.version, DEFAULT_VERSION);
        assert_eq!(card.supported_interfaces[0].url, "http://127.0.0.1:8080/");
        assert_eq!(card.supported_interfaces[0].protocol_binding, "JSONRPC");
        assert_eq!(card.supported_interfaces[1].url, "http://127.0.0.1:8080");
        assert_eq!(card.supported_interfaces[1].protocol_binding, "HTTP+JSON");
        assert_eq!(card.supported_interfaces[2].url, "127.0.0.1:8080");
        assert_eq!(card.supported_interfaces[2].protocol_binding, "GRPC");
        assert!(card.security_schemes.is_none() && card.security_requirements.is_none());
    }

    #[test]
    fn the_input_modes_name_the_files_content_takes() {
        let any = agent_card(&settings(""));
        assert_eq!(
            any.default_input_modes,
            ["text/plain", "application/json", ENVELOPE_MEDIA_TYPE, "*/*"]
        );
        let some = agent_card(&settings(
            "[content]\nmedia_types = [\"image/*\", \"text/plain\", \"text/csv\"]",
        ));
        assert_eq!(
            some.default_input_modes,
            [
                "text/plain",
                "application/json",
                ENVELOPE_MEDIA_TYPE,
                "image/*",
                "text/csv"
            ]
        );
    }

    #[test]
    fn card_settings_replace_the_defaults_and_list_skills() {
        let card = agent_card(&settings(
            r#"
            [server]
            base_url = "https://ledger.example/a2a/"
            [card]
            name = "Ledger"
            description = "Knows every order"
            version = "2.1.0"
            [[card.skills]]
            id = "orders"
            name = "Order lookup"
            description = "Finds an order by id"
            tags = ["orders"]
            examples = ["Where is order 7?"]
            "#,
        ));
        assert_eq!(card.name, "Ledger");
        assert_eq!(card.description, "Knows every order");
        assert_eq!(card.version, "2.1.0");
        assert_eq!(
            card.supported_interfaces[0].url,
            "https://ledger.example/a2a/"
        );
        assert_eq!(
            card.supported_interfaces[1].url,
            "https://ledger.example/a2a"
        );
        assert_eq!(
            card.supported_interfaces[2].url,
            "https://ledger.example:443"
        );
        assert_eq!(card.skills.len(), 1);
        assert_eq!(
            card.skills[0].examples.as_deref(),
            Some(&["Where is order 7?".to_string()][..])
        );
    }

    #[test]
    fn every_interface_is_served_as_an_absolute_url_unless_grpc_is_asked_for_as_host_port() {
        let served = served_card(&settings("[server]\nbind = \"127.0.0.1:7070\""));
        let urls: Vec<&str> = served["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|interface| interface["url"].as_str().unwrap())
            .collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:7070/",
                "http://127.0.0.1:7070",
                "http://127.0.0.1:7070"
            ]
        );
        let host_port = served_card(&settings(
            "[server]\nbase_url = \"https://ledger.example/a2a\"\n[card]\ngrpc_url = \"host-port\"",
        ));
        assert_eq!(
            host_port["supportedInterfaces"][2]["url"],
            "ledger.example:443"
        );
        let error = Settings::parse("[card]\ngrpc_url = \"grpc\"", Path::new("."), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("card.grpc_url") && error.contains("\"host-port\""),
            "{error}"
        );
    }

    #[test]
    fn every_extension_is_advertised_and_none_is_required() {
        let card = agent_card(&settings(""));
        let extensions = card.capabilities.extensions.unwrap();
        let uris: Vec<&str> = extensions.iter().map(|e| e.uri.as_str()).collect();
        assert_eq!(uris, SUPPORTED_EXTENSIONS);
        assert!(extensions.iter().all(|e| e.required == Some(false)));
        assert_eq!(card.capabilities.streaming, Some(true));
        assert_eq!(card.capabilities.push_notifications, Some(true));
    }
}
