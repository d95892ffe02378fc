//! `agents[].auth`: how Baton proves itself to an agent whose card asks for a credential. The
//! secrets come from the environment; the card says how to present them.

use url::Url;

use crate::error::Errors;
use crate::secret::{Secret, secret_from_env};
use crate::walk::{Field, Section};

/// One agent's credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentAuth {
    /// A token, sent as `Authorization: Bearer`: for a card's HTTP bearer, OAuth2 or OpenID
    /// Connect scheme (a token issued ahead of time).
    Bearer(EnvSecret),
    /// An API key, sent where the card's API key scheme says (a header).
    ApiKey(EnvSecret),
    /// OAuth2 client credentials: access tokens fetched from the token endpoint, kept until
    /// shortly before they expire.
    ClientCredentials(ClientCredentials),
}

/// A secret and the variable it was read from, to name in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSecret {
    /// The environment variable's name.
    pub variable: String,
    /// Its value.
    pub secret: Secret,
}

/// OAuth2 client credentials (`client_id`, `client_secret_env`, `token_url`, `scopes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The client secret, from the variable `client_secret_env` names.
    pub client_secret: EnvSecret,
    /// The token endpoint. Without it, the card's `tokenUrl` is used only when it is on the
    /// agent's own origin: a card must not be able to send the client secret elsewhere.
    pub token_url: Option<Url>,
    /// The scopes asked for; none asks for the client's default.
    pub scopes: Vec<String>,
}

const KEYS: [&str; 6] = [
    "bearer_env",
    "api_key_env",
    "client_id",
    "client_secret_env",
    "token_url",
    "scopes",
];

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Option<AgentAuth> {
    if !field.is_set() {
        return None;
    }
    let section = field.section("a table like { bearer_env = \"LEDGER_TOKEN\" }", errors);
    section.refuse_unknown_explained(
        &KEYS,
        |key| {
            matches!(key, "token" | "bearer" | "api_key" | "client_secret").then(|| {
                format!(
                    "not allowed in the settings file: secrets are read from the environment \
                     (name the variable in {key}_env)",
                    key = if key == "token" { "bearer" } else { key }
                )
            })
        },
        errors,
    );
    let kinds: Vec<&str> = ["bearer_env", "api_key_env", "client_secret_env"]
        .into_iter()
        .filter(|key| section.field(key).is_set())
        .collect();
    match kinds.as_slice() {
        ["bearer_env"] => {
            refuse_client_fields(&section, errors);
            read_secret(&section.field("bearer_env"), env, errors).map(AgentAuth::Bearer)
        }
        ["api_key_env"] => {
            refuse_client_fields(&section, errors);
            read_secret(&section.field("api_key_env"), env, errors).map(AgentAuth::ApiKey)
        }
        ["client_secret_env"] => read_client_credentials(&section, env, errors),
        [] => {
            field.fail(
                errors,
                "needs one credential: bearer_env, api_key_env, or client_id with client_secret_env",
            );
            None
        }
        several => {
            field.fail(
                errors,
                format!("give one credential, not {}", several.join(" and ")),
            );
            None
        }
    }
}

fn refuse_client_fields(section: &Section<'_>, errors: &mut Errors) {
    for key in ["client_id", "token_url", "scopes"] {
        let field = section.field(key);
        if field.is_set() {
            field.fail(errors, "belongs to client credentials (client_secret_env)");
        }
    }
}

fn read_client_credentials(
    section: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Option<AgentAuth> {
    let client_id = section
        .field("client_id")
        .required_text("the OAuth2 client id, like \"baton-front-desk\"", errors);
    let client_secret = read_secret(&section.field("client_secret_env"), env, errors);
    let token_url_field = section.field("token_url");
    let token_url = token_url_field
        .string("a URL like \"https://id.example.com/oauth2/token\"", errors)
        .and_then(|text| match Url::parse(text) {
            Ok(url) if url.scheme() == "https" || is_loopback_http(&url) => Some(url),
            _ => {
                token_url_field.fail(
                    errors,
                    format!(
                        "must be an https URL (http only on 127.0.0.1 or localhost) (got {text:?})"
                    ),
                );
                None
            }
        });
    let scopes = section
        .field("scopes")
        .strings("an array of strings like [\"a2a\"]", errors);
    Some(AgentAuth::ClientCredentials(ClientCredentials {
        client_id: client_id?.to_string(),
        client_secret: client_secret?,
        token_url,
        scopes,
    }))
}

fn is_loopback_http(url: &Url) -> bool {
    url.scheme() == "http" && matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"))
}

pub(crate) fn read_secret(
    field: &Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Option<EnvSecret> {
    let variable = field.required_text("an environment variable like \"LEDGER_TOKEN\"", errors)?;
    match secret_from_env(env, &[variable]) {
        Some(secret) => Some(EnvSecret {
            variable: variable.to_string(),
            secret,
        }),
        None => {
            field.fail(errors, format!("{variable} is not set"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn auth_of(auth: &str, env: &[(&str, &str)]) -> Result<Option<AgentAuth>, String> {
        let text = format!(
            "[[agents]]\nid = \"ledger\"\nurl = \"https://ledger.example.com\"\nauth = {auth}"
        );
        parse_with_env(&text, env)
            .map(|s| s.agents[0].auth.clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn no_auth_by_default() {
        let settings =
            parse("[[agents]]\nid = \"ledger\"\nurl = \"https://ledger.example.com\"").unwrap();
        assert_eq!(settings.agents[0].auth, None);
    }

    #[test]
    fn each_credential_is_read_from_the_environment() {
        let env = [("T", "token-1"), ("K", "key-1"), ("S", "secret-1")];
        assert_eq!(
            auth_of("{ bearer_env = \"T\" }", &env).unwrap(),
            Some(AgentAuth::Bearer(EnvSecret {
                variable: "T".into(),
                secret: Secret::new("token-1")
            }))
        );
        assert_eq!(
            auth_of("{ api_key_env = \"K\" }", &env).unwrap(),
            Some(AgentAuth::ApiKey(EnvSecret {
                variable: "K".into(),
                secret: Secret::new("key-1")
            }))
        );
        assert_eq!(
            auth_of(
                "{ client_id = \"desk\", client_secret_env = \"S\", token_url = \"https://id.example.com/token\", scopes = [\"a2a\"] }",
                &env
            )
            .unwrap(),
            Some(AgentAuth::ClientCredentials(ClientCredentials {
                client_id: "desk".into(),
                client_secret: EnvSecret {
                    variable: "S".into(),
                    secret: Secret::new("secret-1")
                },
                token_url: Some(Url::parse("https://id.example.com/token").unwrap()),
                scopes: vec!["a2a".into()],
            }))
        );
    }

    #[test]
    fn each_mistake_is_named_with_what_to_change() {
        let env = [("T", "token-1"), ("S", "secret-1")];
        for (auth, said) in [
            ("{}", "agents[0].auth: needs one credential"),
            (
                "{ bearer_env = \"T\", api_key_env = \"T\" }",
                "give one credential, not bearer_env and api_key_env",
            ),
            (
                "{ bearer_env = \"UNSET\" }",
                "agents[0].auth.bearer_env: UNSET is not set",
            ),
            (
                "{ token = \"abc\" }",
                "agents[0].auth.token: not allowed in the settings file",
            ),
            (
                "{ bearer_env = \"T\", scopes = [\"a\"] }",
                "agents[0].auth.scopes: belongs to client credentials",
            ),
            (
                "{ client_secret_env = \"S\" }",
                "agents[0].auth.client_id: required",
            ),
            (
                "{ client_id = \"d\", client_secret_env = \"S\", token_url = \"http://id.example.com/t\" }",
                "agents[0].auth.token_url: must be an https URL",
            ),
        ] {
            let error = auth_of(auth, &env).unwrap_err();
            assert!(error.contains(said), "{said:?} not in {error}");
        }
    }
}
