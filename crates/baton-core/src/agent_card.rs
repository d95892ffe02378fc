//! The card a Baton agent describes itself with, built from its settings: `[card]` and the
//! public URL. The gateway serves it; the registry uses it, unfetched, for `self` and for other
//! Baton agents of the same process.

use a2a::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill,
    TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC,
};
use baton_config::Settings;
use url::Url;

use crate::extensions::{ENVELOPE_MEDIA_TYPE, SUPPORTED_EXTENSIONS};

pub const DEFAULT_NAME: &str = "Baton";
pub const DEFAULT_DESCRIPTION: &str =
    "A durable agent harness on Temporal: it works on tasks and delegates to other A2A agents.";
pub const DEFAULT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where other agents reach this one: `server.base_url`, else `http://<server.bind>`.
pub fn public_url(settings: &Settings) -> Url {
    settings.server.base_url.clone().unwrap_or_else(|| {
        Url::parse(&format!("http://{}", settings.server.bind))
            .expect("a socket address always makes a valid http URL")
    })
}

/// The agent card for `settings`. Every `[card]` value that is set replaces its default.
pub fn agent_card(settings: &Settings) -> AgentCard {
    let card = &settings.card;
    let base = public_url(settings);
    let base = base.as_str().trim_end_matches('/');
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
        default_input_modes: vec!["text/plain".into(), ENVELOPE_MEDIA_TYPE.into()],
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
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn settings(toml: &str) -> Settings {
        Settings::parse(toml, Path::new("."), &|_| None).unwrap()
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
        assert!(card.security_schemes.is_none() && card.security_requirements.is_none());
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
        assert_eq!(card.skills.len(), 1);
        assert_eq!(
            card.skills[0].examples.as_deref(),
            Some(&["Where is order 7?".to_string()][..])
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
