//! Credentials for agents whose cards ask for one: which of a card's security requirements the
//! operator's `agents[].auth` satisfies, and presenting it on every call. A card Baton cannot
//! satisfy is refused naming what it asks for and what to configure; a credential is never sent
//! where the card alone says to send it (a token URL on another origin).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a::{A2AError, AgentCard, OAuthFlows, SecurityScheme};
use baton_config::{AgentAuth, ClientCredentials, Secret};
use serde::Deserialize;
use url::Url;

use crate::AgentError;

/// How a credential goes on each call.
pub enum Presenter {
    /// A header with a fixed value: `Authorization: Bearer …`, or an API key header.
    Header { name: String, value: Secret },
    /// `Authorization: Bearer` with an access token from a client-credentials grant.
    ClientCredentials(Arc<TokenSource>),
}

impl Presenter {
    /// The header to send, fetching a new access token first when the one kept has expired.
    pub async fn header(&self) -> Result<(String, String), A2AError> {
        match self {
            Presenter::Header { name, value } => Ok((name.clone(), value.expose().to_string())),
            Presenter::ClientCredentials(source) => {
                let token = source.token().await?;
                Ok(("Authorization".into(), format!("Bearer {}", token.expose())))
            }
        }
    }
}

/// Which credential Baton presents to `agent`: `Ok(None)` when its card asks for none (or makes
/// one optional and none fits), an error naming what to configure when it needs one Baton
/// cannot give.
pub fn plan(
    agent: &str,
    agent_url: &Url,
    card: &AgentCard,
    auth: Option<&AgentAuth>,
    http: &reqwest::Client,
) -> Result<Option<Presenter>, AgentError> {
    let no_schemes = HashMap::new();
    let schemes = card.security_schemes.as_ref().unwrap_or(&no_schemes);
    let requirements = card.security_requirements.as_deref().unwrap_or_default();
    let optional = requirements.is_empty() || requirements.iter().any(HashMap::is_empty);
    let mut asked = Vec::new();
    for requirement in requirements.iter().filter(|r| !r.is_empty()) {
        let mut names: Vec<&String> = requirement.keys().collect();
        names.sort();
        let [name] = names.as_slice() else {
            asked.push(format!(
                "{} together (Baton presents one credential)",
                names
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
            continue;
        };
        let Some(scheme) = schemes.get(*name) else {
            asked.push(format!("{name} (a scheme the card does not declare)"));
            continue;
        };
        match fit(agent, agent_url, scheme, &requirement[*name], auth, http) {
            Ok(presenter) => return Ok(Some(presenter)),
            Err(why) => asked.push(format!("{name}: {why}")),
        }
    }
    if optional {
        return Ok(None);
    }
    Err(AgentError::SecurityUnsatisfiable {
        agent: agent.to_string(),
        reason: format!("its card requires one of: {}", asked.join("; ")),
    })
}

/// The presenter for `scheme` from `auth`, or why there is none.
fn fit(
    agent: &str,
    agent_url: &Url,
    scheme: &SecurityScheme,
    required_scopes: &[String],
    auth: Option<&AgentAuth>,
    http: &reqwest::Client,
) -> Result<Presenter, String> {
    let bearer = |token: &Secret| Presenter::Header {
        name: "Authorization".into(),
        value: Secret::new(format!("Bearer {}", token.expose())),
    };
    match (scheme, auth) {
        (SecurityScheme::HttpAuth(http_auth), _) if !http_auth.scheme.eq_ignore_ascii_case("bearer") => {
            Err(format!("HTTP {} authentication, which Baton does not send", http_auth.scheme))
        }
        (SecurityScheme::HttpAuth(_), Some(AgentAuth::Bearer(token))) => Ok(bearer(&token.secret)),
        (SecurityScheme::HttpAuth(_), _) => Err("a bearer token: set agents[].auth.bearer_env".into()),
        (SecurityScheme::ApiKey(key), _) if key.location != "header" => Err(format!(
            "an API key in the {}, which Baton does not send (header only)",
            key.location
        )),
        (SecurityScheme::ApiKey(key), Some(AgentAuth::ApiKey(secret))) => {
            if reqwest::header::HeaderName::try_from(key.name.as_str()).is_err() {
                return Err(format!("an API key in header {:?}, which is no header name", key.name));
            }
            Ok(Presenter::Header {
                name: key.name.clone(),
                value: secret.secret.clone(),
            })
        }
        (SecurityScheme::ApiKey(key), _) => Err(format!(
            "an API key in header {}: set agents[].auth.api_key_env",
            key.name
        )),
        (SecurityScheme::OAuth2(_) | SecurityScheme::OpenIdConnect(_), Some(AgentAuth::Bearer(token))) => {
            Ok(bearer(&token.secret))
        }
        (SecurityScheme::OAuth2(oauth), Some(AgentAuth::ClientCredentials(client))) => {
            let OAuthFlows::ClientCredentials(flow) = &oauth.flows else {
                return Err("an OAuth2 flow other than client credentials, which Baton cannot run".into());
            };
            let token_url = match &client.token_url {
                Some(url) => url.clone(),
                None => same_origin_token_url(agent_url, &flow.token_url)?,
            };
            Ok(token_source(agent, token_url, client, required_scopes, http))
        }
        (SecurityScheme::OpenIdConnect(_), Some(AgentAuth::ClientCredentials(client))) => {
            match &client.token_url {
                Some(url) => Ok(token_source(agent, url.clone(), client, required_scopes, http)),
                None => Err("an OpenID Connect token: set agents[].auth.token_url to the issuer's token endpoint".into()),
            }
        }
        (SecurityScheme::OAuth2(_), _) => Err(
            "an OAuth2 token: set agents[].auth.client_id and client_secret_env (or bearer_env)".into(),
        ),
        (SecurityScheme::OpenIdConnect(_), _) => Err(
            "an OpenID Connect token: set agents[].auth.bearer_env, or client credentials with token_url".into(),
        ),
        (SecurityScheme::MutualTls(_), _) => Err("mutual TLS, which Baton does not do".into()),
    }
}

/// The card's token URL, if it is on the agent's own origin: the client secret goes only where
/// the operator pointed Baton.
fn same_origin_token_url(agent_url: &Url, token_url: &str) -> Result<Url, String> {
    match Url::parse(token_url) {
        Ok(url) if url.origin() == agent_url.origin() => Ok(url),
        Ok(_) => Err(format!(
            "OAuth2 client credentials at {token_url}, on another origin than the agent: set \
             agents[].auth.token_url to it if it is the agent's token endpoint"
        )),
        Err(_) => Err(format!(
            "OAuth2 client credentials at {token_url:?}, which is no URL"
        )),
    }
}

fn token_source(
    agent: &str,
    token_url: Url,
    client: &ClientCredentials,
    required_scopes: &[String],
    http: &reqwest::Client,
) -> Presenter {
    let scopes = if client.scopes.is_empty() {
        required_scopes.to_vec()
    } else {
        client.scopes.clone()
    };
    Presenter::ClientCredentials(Arc::new(TokenSource {
        agent: agent.to_string(),
        http: http.clone(),
        token_url,
        client_id: client.client_id.clone(),
        client_secret: client.client_secret.secret.clone(),
        scopes,
        kept: tokio::sync::Mutex::new(None),
    }))
}

const TOKEN_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;
/// A token is renewed this long before the endpoint says it expires.
const RENEW_EARLY: Duration = Duration::from_secs(30);
/// How long a token with no `expires_in` is kept.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

/// Access tokens of one client at one token endpoint, kept until shortly before they expire.
/// Concurrent calls wait for one fetch.
pub struct TokenSource {
    agent: String,
    http: reqwest::Client,
    token_url: Url,
    client_id: String,
    client_secret: Secret,
    scopes: Vec<String>,
    kept: tokio::sync::Mutex<Option<(Secret, Instant)>>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl TokenSource {
    async fn token(&self) -> Result<Secret, A2AError> {
        let mut kept = self.kept.lock().await;
        if let Some((token, until)) = kept.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let (token, lifetime) = self.fetch().await?;
        let until = Instant::now()
            + lifetime
                .saturating_sub(RENEW_EARLY)
                .max(Duration::from_secs(1));
        *kept = Some((token.clone(), until));
        Ok(token)
    }

    async fn fetch(&self) -> Result<(Secret, Duration), A2AError> {
        let about = format!(
            "agent {}: the token endpoint {}",
            self.agent, self.token_url
        );
        // RFC 6749 §2.3.1: the client id and secret are form-encoded before they are Basic.
        let encode =
            |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if !self.scopes.is_empty() {
                form.append_pair("scope", &self.scopes.join(" "));
            }
            form.finish()
        };
        let mut response = self
            .http
            .post(self.token_url.clone())
            .basic_auth(
                encode(&self.client_id),
                Some(encode(self.client_secret.expose())),
            )
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .timeout(TOKEN_TIMEOUT)
            .send()
            .await
            .map_err(|e| {
                A2AError::internal(format!("{about} did not answer: {}", e.without_url()))
            })?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| A2AError::internal(format!("{about}: {}", e.without_url())))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_TOKEN_RESPONSE_BYTES {
                return Err(A2AError::internal(format!("{about} answered over 64 KiB")));
            }
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(A2AError::internal(format!(
                "{about} answered HTTP {status}"
            )));
        }
        if !status.is_success() {
            // The endpoint's own refusal (a wrong secret, an unknown client): no retry mends it.
            let said = String::from_utf8_lossy(&body);
            return Err(A2AError::invalid_request(format!(
                "{about} refused the client credentials (HTTP {status}): {}",
                baton_core::display::one_line_capped(&said, 300)
            )));
        }
        let token: TokenResponse = serde_json::from_slice(&body).map_err(|e| {
            A2AError::invalid_request(format!("{about} answered no access token: {e}"))
        })?;
        if token
            .token_type
            .as_deref()
            .is_some_and(|kind| !kind.eq_ignore_ascii_case("bearer"))
        {
            return Err(A2AError::invalid_request(format!(
                "{about} issued a {:?} token, not a bearer token",
                token.token_type.unwrap_or_default()
            )));
        }
        let lifetime = token
            .expires_in
            .map_or(DEFAULT_LIFETIME, Duration::from_secs);
        Ok((Secret::new(token.access_token), lifetime))
    }
}

#[cfg(test)]
mod tests {
    use baton_config::EnvSecret;
    use serde_json::json;

    use super::*;

    fn card(security: serde_json::Value) -> AgentCard {
        let mut card = json!({
            "name": "Ledger", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "https://ledger.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        });
        for (key, value) in security.as_object().unwrap() {
            card[key] = value.clone();
        }
        serde_json::from_value(card).unwrap()
    }

    fn env_secret(value: &str) -> EnvSecret {
        EnvSecret {
            variable: "V".into(),
            secret: Secret::new(value),
        }
    }

    fn client(token_url: Option<&str>) -> AgentAuth {
        AgentAuth::ClientCredentials(ClientCredentials {
            client_id: "desk".into(),
            client_secret: env_secret("s3cret"),
            token_url: token_url.map(|u| Url::parse(u).unwrap()),
            scopes: vec![],
        })
    }

    fn planned(
        security: serde_json::Value,
        auth: Option<&AgentAuth>,
    ) -> Result<Option<Presenter>, String> {
        plan(
            "ledger",
            &Url::parse("https://ledger.example.com/a2a").unwrap(),
            &card(security),
            auth,
            &reqwest::Client::new(),
        )
        .map_err(|e| e.to_string())
    }

    fn header_of(presenter: Option<Presenter>) -> (String, String) {
        match presenter.expect("a credential is presented") {
            Presenter::Header { name, value } => (name, value.expose().to_string()),
            Presenter::ClientCredentials(_) => panic!("a token source"),
        }
    }

    const BEARER: &str = r#"{"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}, "securityRequirements": [{"schemes": {"b": {"list": []}}}]}"#;
    const API_KEY: &str = r#"{"securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Ledger-Key"}}}, "securityRequirements": [{"schemes": {"k": {"list": []}}}]}"#;

    fn security(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_card_that_asks_for_nothing_gets_nothing() {
        assert!(planned(json!({}), None).unwrap().is_none());
        let bearer = AgentAuth::Bearer(env_secret("t"));
        assert!(planned(json!({}), Some(&bearer)).unwrap().is_none());
    }

    #[test]
    fn a_bearer_token_and_an_api_key_go_where_the_card_says() {
        let bearer = AgentAuth::Bearer(env_secret("tok-1"));
        assert_eq!(
            header_of(planned(security(BEARER), Some(&bearer)).unwrap()),
            ("Authorization".into(), "Bearer tok-1".into())
        );
        let key = AgentAuth::ApiKey(env_secret("key-1"));
        assert_eq!(
            header_of(planned(security(API_KEY), Some(&key)).unwrap()),
            ("X-Ledger-Key".into(), "key-1".into())
        );
        // A pre-issued token serves an OAuth2 or OpenID Connect scheme too.
        let oidc = json!({"securitySchemes": {"o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example.com/.well-known/openid-configuration"}}},
                          "securityRequirements": [{"schemes": {"o": {"list": []}}}]});
        assert_eq!(
            header_of(planned(oidc, Some(&bearer)).unwrap()).1,
            "Bearer tok-1"
        );
    }

    #[test]
    fn the_first_alternative_baton_can_satisfy_is_taken() {
        let both = json!({
            "securitySchemes": {
                "k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Ledger-Key"}},
                "b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
            },
            "securityRequirements": [{"schemes": {"k": {"list": []}}}, {"schemes": {"b": {"list": []}}}]
        });
        let bearer = AgentAuth::Bearer(env_secret("tok-1"));
        assert_eq!(
            header_of(planned(both, Some(&bearer)).unwrap()).0,
            "Authorization"
        );
    }

    #[test]
    fn a_credential_the_card_does_not_need_is_not_sent_and_an_optional_one_is() {
        let optional = json!({
            "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"b": {"list": []}}}, {"schemes": {}}]
        });
        assert!(planned(optional.clone(), None).unwrap().is_none());
        let bearer = AgentAuth::Bearer(env_secret("tok-1"));
        assert_eq!(
            header_of(planned(optional, Some(&bearer)).unwrap()).1,
            "Bearer tok-1"
        );
    }

    #[test]
    fn what_baton_cannot_satisfy_is_refused_naming_what_to_configure() {
        let key = AgentAuth::ApiKey(env_secret("k"));
        for (security, auth, said) in [
            (
                security(BEARER),
                None,
                "b: a bearer token: set agents[].auth.bearer_env",
            ),
            (
                security(BEARER),
                Some(&key),
                "b: a bearer token: set agents[].auth.bearer_env",
            ),
            (
                security(API_KEY),
                None,
                "k: an API key in header X-Ledger-Key: set agents[].auth.api_key_env",
            ),
            (
                json!({"securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "query", "name": "key"}}}, "securityRequirements": [{"schemes": {"k": {"list": []}}}]}),
                Some(&key),
                "an API key in the query, which Baton does not send",
            ),
            (
                json!({"securitySchemes": {"h": {"httpAuthSecurityScheme": {"scheme": "Basic"}}}, "securityRequirements": [{"schemes": {"h": {"list": []}}}]}),
                None,
                "HTTP Basic authentication, which Baton does not send",
            ),
            (
                json!({"securitySchemes": {"m": {"mtlsSecurityScheme": {}}}, "securityRequirements": [{"schemes": {"m": {"list": []}}}]}),
                None,
                "mutual TLS",
            ),
            (
                json!({"securitySchemes": {"a": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}, "b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                       "securityRequirements": [{"schemes": {"a": {"list": []}, "b": {"list": []}}}]}),
                None,
                "a and b together",
            ),
            (
                json!({"securityRequirements": [{"schemes": {"ghost": {"list": []}}}]}),
                None,
                "ghost (a scheme the card does not declare)",
            ),
        ] {
            let error = match planned(security, auth) {
                Err(error) => error,
                Ok(_) => panic!("{said}: accepted"),
            };
            assert!(
                error.contains("agent ledger") && error.contains(said),
                "{said:?} not in {error}"
            );
        }
    }

    #[test]
    fn a_client_secret_goes_only_to_a_token_url_the_operator_trusts() {
        let flow = |token_url: &str| {
            json!({"securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {}}}}}},
                   "securityRequirements": [{"schemes": {"o": {"list": ["a2a"]}}}]})
        };
        // On the agent's origin, the card's token URL is used.
        assert!(matches!(
            planned(
                flow("https://ledger.example.com/oauth/token"),
                Some(&client(None))
            )
            .unwrap(),
            Some(Presenter::ClientCredentials(_))
        ));
        // Elsewhere, only if the operator named it.
        let error = planned(flow("https://evil.example.net/token"), Some(&client(None)))
            .err()
            .unwrap();
        assert!(
            error.contains("on another origin than the agent"),
            "{error}"
        );
        let Some(Presenter::ClientCredentials(source)) = planned(
            flow("https://evil.example.net/token"),
            Some(&client(Some("https://id.example.com/token"))),
        )
        .unwrap() else {
            panic!("a token source")
        };
        assert_eq!(source.token_url.as_str(), "https://id.example.com/token");
        assert_eq!(source.scopes, ["a2a"], "the requirement's scopes");
    }
}
