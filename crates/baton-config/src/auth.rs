//! `[server.auth]`: how the gateway knows who is calling.

use url::Url;

use crate::error::Errors;
use crate::secret::{Secret, secret_from_env};
use crate::walk::{Field, Section};

/// What the gateway does with a caller who presents no credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// `X-Participant-Id` is taken as said: for a gateway behind a perimeter that authenticates.
    Asserted,
    /// A credential is required; without one the call is refused (401).
    Authenticated,
    /// Without a credential the caller is anonymous: its tasks are reached by their ids alone
    /// and listed to nobody. An asserted id without a credential is refused.
    Anonymous,
}

/// The participant id every anonymous caller acts as. No credential may grant it.
pub const ANONYMOUS_PARTICIPANT: &str = "anonymous";

/// The environment variable that holds the deployment secret.
pub const DEPLOYMENT_SECRET_VARIABLE: &str = "BATON_DEPLOYMENT_SECRET";
const MIN_SECRET_CHARS: usize = 32;
const MIN_TOKEN_CHARS: usize = 16;

/// A static credential: whoever presents the secret is `participant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    /// The participant id the token proves.
    pub participant: String,
    /// The environment variable the secret was read from, to name it in messages.
    pub variable: String,
    /// The token.
    pub secret: Secret,
}

/// OpenID Connect: JWTs signed by `issuer`'s keys, for `audience`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcSettings {
    /// The issuer URL, which a token's `iss` must match.
    pub issuer: Url,
    /// The `aud` tokens must be issued for.
    pub audience: String,
    /// The claim whose value is the participant id; default `sub`.
    pub participant_claim: String,
    /// Where the keys are; default the `jwks_uri` of the issuer's discovery document.
    pub jwks_url: Option<Url>,
}

/// `[server.auth]`: who is calling the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSettings {
    /// What a caller without a credential gets; default asserted.
    pub mode: AuthMode,
    /// `[[server.auth.tokens]]`: each accepted as `Authorization: Bearer` or in the API key header.
    pub tokens: Vec<TokenGrant>,
    /// The header an API key is sent in; default `X-API-Key`.
    pub api_key_header: String,
    /// `[server.auth.oidc]`: the OpenID Connect issuer whose JWTs are accepted, if any.
    pub oidc: Option<OidcSettings>,
    /// `BATON_DEPLOYMENT_SECRET`: what Baton's calls to itself prove themselves with, and the key
    /// of the push tokens kept in history. Unset, each process makes its own.
    pub deployment_secret: Option<Secret>,
}

impl AuthSettings {
    /// Whether a caller can present a credential at all.
    pub fn has_credentials(&self) -> bool {
        !self.tokens.is_empty() || self.oidc.is_some()
    }
}

const KEYS: [&str; 4] = ["mode", "tokens", "api_key_header", "oidc"];
const TOKEN_KEYS: [&str; 2] = ["participant", "secret_env"];
const OIDC_KEYS: [&str; 4] = ["issuer", "audience", "participant_claim", "jwks_url"];

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> AuthSettings {
    let section = field.section("a table like [server.auth]", errors);
    section.refuse_unknown_explained(
        &KEYS,
        |key| {
            (key == "secret" || key == "token").then(|| {
                "not allowed in the settings file: secrets are read from the environment \
                 (name the variable in tokens[].secret_env)"
                    .to_string()
            })
        },
        errors,
    );
    let mode = section
        .field("mode")
        .choice(
            &[
                ("asserted", AuthMode::Asserted),
                ("authenticated", AuthMode::Authenticated),
                ("anonymous", AuthMode::Anonymous),
            ],
            errors,
        )
        .unwrap_or(AuthMode::Asserted);
    let tokens = read_tokens(&section.field("tokens"), env, errors);
    let api_key_header = read_header_name(&section.field("api_key_header"), errors)
        .unwrap_or_else(|| "X-API-Key".to_string());
    let oidc_field = section.field("oidc");
    let oidc = oidc_field
        .is_set()
        .then(|| {
            read_oidc(
                oidc_field.section("a table like [server.auth.oidc]", errors),
                errors,
            )
        })
        .flatten();
    let settings = AuthSettings {
        mode,
        tokens,
        api_key_header,
        oidc,
        deployment_secret: read_deployment_secret(env, errors),
    };
    if mode == AuthMode::Authenticated && !settings.has_credentials() {
        section.field("mode").fail(
            errors,
            "\"authenticated\" needs a credential to check: add [[server.auth.tokens]] or \
             [server.auth.oidc]",
        );
    }
    settings
}

fn read_tokens(
    field: &Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Vec<TokenGrant> {
    let mut grants: Vec<TokenGrant> = Vec::new();
    for table in field.tables(
        "an array of tables like [[server.auth.tokens]]",
        "a table with participant and secret_env",
        errors,
    ) {
        table.refuse_unknown(&TOKEN_KEYS, errors);
        let participant = read_participant(&table.field("participant"), errors);
        let variable_field = table.field("secret_env");
        let variable = variable_field
            .required_text("an environment variable like \"BATON_TOKEN_ALICE\"", errors);
        let (Some(participant), Some(variable)) = (participant, variable) else {
            continue;
        };
        let Some(secret) = secret_from_env(env, &[variable]) else {
            variable_field.fail(
                errors,
                format!("{variable} is not set: set it to the token {participant:?} presents"),
            );
            continue;
        };
        if secret.expose().chars().count() < MIN_TOKEN_CHARS {
            variable_field.fail(
                errors,
                format!("{variable} is too short to be a secret: use at least {MIN_TOKEN_CHARS} random characters"),
            );
            continue;
        }
        if let Some(same) = grants.iter().find(|g| g.secret == secret) {
            variable_field.fail(
                errors,
                format!(
                    "{variable} holds the same token as {}: each grant needs its own",
                    same.variable
                ),
            );
            continue;
        }
        grants.push(TokenGrant {
            participant,
            variable: variable.to_string(),
            secret,
        });
    }
    grants
}

/// A participant id a credential may grant: not the anonymous participant.
fn read_participant(field: &Field<'_>, errors: &mut Errors) -> Option<String> {
    let id = field.required_text("a participant id like \"alice\"", errors)?;
    if !(1..=256).contains(&id.len()) || !id.bytes().all(|b| b.is_ascii_graphic()) {
        field.fail(
            errors,
            "must be 1 to 256 printable ASCII characters, no spaces",
        );
        return None;
    }
    if id == ANONYMOUS_PARTICIPANT {
        field.fail(
            errors,
            format!("{id:?} is the id of callers without a credential; grant another"),
        );
        return None;
    }
    Some(id.to_string())
}

fn read_header_name(field: &Field<'_>, errors: &mut Errors) -> Option<String> {
    let name = field.optional_text("a header name like \"X-API-Key\"", errors)?;
    let reserved = [
        "authorization",
        "x-participant-id",
        "a2a-version",
        "a2a-extensions",
    ];
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        field.fail(
            errors,
            format!("must be a header name of letters, digits and '-' (got {name:?})"),
        );
        return None;
    }
    if reserved.contains(&name.to_ascii_lowercase().as_str()) {
        field.fail(
            errors,
            format!("{name:?} already means something else to the gateway"),
        );
        return None;
    }
    Some(name.to_string())
}

fn read_oidc(section: Section<'_>, errors: &mut Errors) -> Option<OidcSettings> {
    section.refuse_unknown(&OIDC_KEYS, errors);
    let issuer = read_https_url(&section.field("issuer"), true, errors);
    let audience = section
        .field("audience")
        .required_text("the audience tokens are issued for, like \"baton\"", errors)
        .map(str::to_string);
    let participant_claim = section
        .field("participant_claim")
        .optional_text("a claim name like \"sub\" or \"email\"", errors)
        .unwrap_or("sub")
        .to_string();
    let jwks_url = read_https_url(&section.field("jwks_url"), false, errors);
    Some(OidcSettings {
        issuer: issuer?,
        audience: audience?,
        participant_claim,
        jwks_url,
    })
}

/// An http(s) URL; `http` only for a loopback host (a local issuer in a test or a sidecar).
fn read_https_url(field: &Field<'_>, required: bool, errors: &mut Errors) -> Option<Url> {
    let expected = "a URL like \"https://id.example.com\"";
    if required && !field.require(expected, errors) {
        return None;
    }
    let text = field.string(expected, errors)?;
    let Ok(url) = Url::parse(text) else {
        field.fail(errors, format!("must be {expected} (got {text:?})"));
        return None;
    };
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        field.fail(
            errors,
            format!("must be https (http only on 127.0.0.1 or localhost) (got {text:?})"),
        );
        return None;
    }
    Some(url)
}

fn read_deployment_secret(
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Option<Secret> {
    let secret = secret_from_env(env, &[DEPLOYMENT_SECRET_VARIABLE])?;
    if secret.expose().chars().count() < MIN_SECRET_CHARS {
        errors.push(
            DEPLOYMENT_SECRET_VARIABLE.to_string(),
            format!("must be at least {MIN_SECRET_CHARS} random characters (e.g. `openssl rand -hex 32`)"),
        );
        return None;
    }
    Some(secret)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn auth_of(text: &str, env: &[(&str, &str)]) -> Result<AuthSettings, String> {
        parse_with_env(text, env)
            .map(|s| s.server.auth)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_take_asserted_ids_and_hold_no_credentials() {
        let auth = auth_of("", &[]).unwrap();
        assert_eq!(auth.mode, AuthMode::Asserted);
        assert!(auth.tokens.is_empty() && auth.oidc.is_none());
        assert_eq!(auth.api_key_header, "X-API-Key");
        assert_eq!(auth.deployment_secret, None);
    }

    #[test]
    fn every_field_is_read_and_secrets_come_from_the_environment() {
        let text = r#"
[server.auth]
mode = "authenticated"
api_key_header = "X-Key"
tokens = [{ participant = "alice", secret_env = "TOKEN_ALICE" }]
[server.auth.oidc]
issuer = "https://id.example.com"
audience = "baton"
participant_claim = "email"
jwks_url = "https://id.example.com/keys"
"#;
        let secret = "x".repeat(40);
        let auth = auth_of(
            text,
            &[
                ("TOKEN_ALICE", "alice-token-0123456789"),
                (DEPLOYMENT_SECRET_VARIABLE, &secret),
            ],
        )
        .unwrap();
        assert_eq!(auth.mode, AuthMode::Authenticated);
        assert_eq!(auth.api_key_header, "X-Key");
        assert_eq!(auth.tokens[0].participant, "alice");
        assert_eq!(auth.tokens[0].secret.expose(), "alice-token-0123456789");
        let oidc = auth.oidc.unwrap();
        assert_eq!(oidc.issuer.as_str(), "https://id.example.com/");
        assert_eq!(oidc.participant_claim, "email");
        assert_eq!(
            oidc.jwks_url.unwrap().as_str(),
            "https://id.example.com/keys"
        );
        assert_eq!(auth.deployment_secret.unwrap().expose(), secret);
    }

    #[test]
    fn each_mistake_is_named_with_what_to_change() {
        for (text, env, said) in [
            (
                r#"[server.auth]
mode = "authenticated""#,
                vec![],
                "server.auth.mode: \"authenticated\" needs a credential",
            ),
            (
                r#"[server.auth]
mode = "open""#,
                vec![],
                "server.auth.mode: must be \"asserted\", \"authenticated\" or \"anonymous\"",
            ),
            (
                r#"[server.auth]
token = "abc""#,
                vec![],
                "server.auth.token: not allowed in the settings file",
            ),
            (
                r#"[[server.auth.tokens]]
participant = "alice"
secret_env = "UNSET""#,
                vec![],
                "server.auth.tokens[0].secret_env: UNSET is not set",
            ),
            (
                r#"[[server.auth.tokens]]
participant = "alice"
secret_env = "SHORT""#,
                vec![("SHORT", "abc")],
                "SHORT is too short to be a secret",
            ),
            (
                r#"[[server.auth.tokens]]
participant = "anonymous"
secret_env = "T""#,
                vec![("T", "0123456789abcdef")],
                "server.auth.tokens[0].participant: \"anonymous\" is the id of callers without a credential",
            ),
            (
                r#"[[server.auth.tokens]]
participant = "al ice"
secret_env = "T""#,
                vec![("T", "0123456789abcdef")],
                "tokens[0].participant: must be 1 to 256 printable ASCII",
            ),
            (
                r#"[[server.auth.tokens]]
participant = "a"
secret_env = "T"
[[server.auth.tokens]]
participant = "b"
secret_env = "U""#,
                vec![("T", "0123456789abcdef"), ("U", "0123456789abcdef")],
                "U holds the same token as T",
            ),
            (
                r#"[server.auth]
api_key_header = "Authorization""#,
                vec![],
                "already means something else",
            ),
            (
                r#"[server.auth.oidc]
issuer = "http://id.example.com"
audience = "baton""#,
                vec![],
                "server.auth.oidc.issuer: must be https",
            ),
            (
                r#"[server.auth.oidc]
issuer = "https://id.example.com""#,
                vec![],
                "server.auth.oidc.audience: required",
            ),
            (
                r#"[agent]
id = "desk"
[[server.auth.tokens]]
participant = "desk"
secret_env = "T""#,
                vec![("T", "0123456789abcdef")],
                "server.auth.tokens[0].participant: \"desk\" is this agent's own id",
            ),
            (
                "",
                vec![(DEPLOYMENT_SECRET_VARIABLE, "short")],
                "BATON_DEPLOYMENT_SECRET: must be at least 32",
            ),
        ] {
            let error = auth_of(text, &env).unwrap_err();
            assert!(error.contains(said), "{said:?} not in {error}");
        }
    }

    #[test]
    fn a_local_issuer_may_be_plain_http() {
        let auth = auth_of(
            "[server.auth.oidc]\nissuer = \"http://127.0.0.1:9000/realm\"\naudience = \"baton\"",
            &[],
        )
        .unwrap();
        assert_eq!(
            auth.oidc.unwrap().issuer.as_str(),
            "http://127.0.0.1:9000/realm"
        );
    }
}
