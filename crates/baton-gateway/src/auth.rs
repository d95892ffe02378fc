//! Who is calling, decided once per request before any A2A route reads it. A credential (a
//! bearer token or an API key from `[[server.auth.tokens]]`, an OIDC JWT, or this deployment's
//! own token) proves a participant; without one, `server.auth.mode` says whether an asserted
//! `X-Participant-Id` is taken, the caller is anonymous, or the call is refused. The routes then
//! see `X-Participant-Id` set to the proven participant and `X-Baton-Caller` to how it is known;
//! both are removed from what the caller sent first, so neither can be forged.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use baton_config::{ANONYMOUS_PARTICIPANT, AuthMode, AuthSettings};
use baton_core::deployment_key::DeploymentKey;
use sha2::{Digest, Sha256};

use crate::identity::{CALLER_KIND_HEADER, CallerKind, PARTICIPANT_HEADER};
use crate::oidc::{JwtRefusal, OidcVerifier};

/// How the gateway checks callers.
pub struct Authenticator {
    mode: AuthMode,
    /// SHA-256 of each granted token, with the participant it proves: the tokens themselves are
    /// not kept.
    grants: Vec<([u8; 32], String)>,
    api_key_header: HeaderName,
    oidc: Option<OidcVerifier>,
    deployment: Arc<DeploymentKey>,
    /// This agent's own id: never taken as asserted, since this agent tells it to every peer.
    agent_id: String,
}

/// A credential that proved nothing, or a claim that is not taken.
struct Refused {
    status: StatusCode,
    message: String,
}

impl Refused {
    fn unauthenticated(message: impl Into<String>) -> Refused {
        Refused {
            status: StatusCode::UNAUTHORIZED,
            message: message.into(),
        }
    }
}

/// A credential the request carries.
enum Credential<'a> {
    Bearer(&'a str),
    ApiKey(&'a str),
}

impl Authenticator {
    /// Checks callers by `server.auth`. `agent_id` is this agent's own id, `deployment` proves
    /// the deployment's own token, and `http` fetches the OIDC issuer's keys.
    pub fn new(
        settings: &AuthSettings,
        agent_id: &str,
        deployment: Arc<DeploymentKey>,
        http: reqwest::Client,
    ) -> Authenticator {
        Authenticator {
            mode: settings.mode,
            grants: settings
                .tokens
                .iter()
                .map(|grant| (digest(grant.secret.expose()), grant.participant.clone()))
                .collect(),
            api_key_header: HeaderName::try_from(settings.api_key_header.as_str())
                .expect("the settings check the API key header name"),
            oidc: settings
                .oidc
                .clone()
                .map(|oidc| OidcVerifier::new(oidc, http)),
            deployment,
            agent_id: agent_id.to_string(),
        }
    }

    /// The header an API key comes in.
    pub fn api_key_header(&self) -> &HeaderName {
        &self.api_key_header
    }

    /// The participant of a request, and how it is known.
    async fn identify(&self, headers: &HeaderMap) -> Result<(Option<String>, CallerKind), Refused> {
        let asserted = headers
            .get(PARTICIPANT_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        let Some(credential) = credential_of(headers, &self.api_key_header)? else {
            return self.without_credential(asserted);
        };
        // A self-call token proves the one agent of this deployment it was made for: the one
        // `X-Participant-Id` names, else this agent.
        let claimed = asserted.as_deref().unwrap_or(&self.agent_id);
        let (proven, kind) = self.prove(credential, claimed).await?;
        if let Some(asserted) = asserted
            && asserted != proven
        {
            return Err(Refused {
                status: StatusCode::FORBIDDEN,
                message: format!(
                    "X-Participant-Id names {asserted:?}, but the credential is {proven:?}'s: \
                     send the participant the credential proves, or none"
                ),
            });
        }
        Ok((Some(proven), kind))
    }

    fn without_credential(
        &self,
        asserted: Option<String>,
    ) -> Result<(Option<String>, CallerKind), Refused> {
        match self.mode {
            AuthMode::Authenticated => Err(Refused::unauthenticated(
                "this agent needs a credential: see securitySchemes on its agent card",
            )),
            AuthMode::Anonymous if asserted.is_some() => Err(Refused::unauthenticated(
                "this agent takes no asserted X-Participant-Id: present a credential (see its \
                 agent card), or send none to act anonymously",
            )),
            AuthMode::Anonymous => Ok((
                Some(ANONYMOUS_PARTICIPANT.to_string()),
                CallerKind::Anonymous,
            )),
            AuthMode::Asserted => match asserted {
                Some(id) if self.is_reserved(&id) => Err(Refused::unauthenticated(format!(
                    "X-Participant-Id {id:?} is reserved: this agent's own calls prove \
                     themselves with its deployment secret"
                ))),
                asserted => Ok((asserted, CallerKind::Asserted)),
            },
        }
    }

    /// Whether an asserted id is one nobody may claim: this agent's own, or the anonymous one.
    pub fn is_reserved(&self, id: &str) -> bool {
        id == self.agent_id || id == ANONYMOUS_PARTICIPANT
    }

    async fn prove(
        &self,
        credential: Credential<'_>,
        claimed: &str,
    ) -> Result<(String, CallerKind), Refused> {
        let presented = match credential {
            Credential::Bearer(token) | Credential::ApiKey(token) => token,
        };
        if matches!(credential, Credential::Bearer(_))
            && self.deployment.is_self_call_token(claimed, presented)
        {
            return Ok((claimed.to_string(), CallerKind::Deployment));
        }
        let presented_digest = digest(presented);
        let mut granted = None;
        for (grant, participant) in &self.grants {
            // Every grant is compared, each in constant time, so timing tells nothing.
            if constant_time_eq(grant, &presented_digest) {
                granted = Some(participant.clone());
            }
        }
        if let Some(participant) = granted {
            return Ok((participant, CallerKind::Authenticated));
        }
        match (&self.oidc, credential) {
            (Some(oidc), Credential::Bearer(token)) if token.matches('.').count() == 2 => {
                match oidc.verify(token).await {
                    Ok(participant) if self.is_reserved(&participant) => Err(Refused {
                        status: StatusCode::FORBIDDEN,
                        message: format!(
                            "the token's participant {participant:?} is reserved on this agent"
                        ),
                    }),
                    Ok(participant) => Ok((participant, CallerKind::Authenticated)),
                    Err(JwtRefusal::Invalid(why)) => Err(Refused::unauthenticated(why)),
                    Err(JwtRefusal::KeysUnavailable(why)) => Err(Refused {
                        status: StatusCode::SERVICE_UNAVAILABLE,
                        message: why,
                    }),
                }
            }
            _ => Err(Refused::unauthenticated(
                "the credential is not one this agent accepts",
            )),
        }
    }
}

/// The one credential of a request: an `Authorization: Bearer` or the API key header. Two of
/// them, or an Authorization of another scheme, is refused rather than guessed at.
fn credential_of<'h>(
    headers: &'h HeaderMap,
    api_key_header: &HeaderName,
) -> Result<Option<Credential<'h>>, Refused> {
    let one = |name: &HeaderName| -> Result<Option<&'h str>, Refused> {
        let mut values = headers.get_all(name).iter();
        match (values.next(), values.next()) {
            (None, _) => Ok(None),
            (Some(value), None) => value
                .to_str()
                .map(|v| Some(v.trim()))
                .map_err(|_| Refused::unauthenticated(format!("{name} is not readable text"))),
            (Some(_), Some(_)) => Err(Refused::unauthenticated(format!(
                "{name} is given more than once"
            ))),
        }
    };
    let authorization = one(&header::AUTHORIZATION)?;
    let api_key = one(api_key_header)?;
    match (authorization, api_key) {
        (Some(_), Some(_)) => Err(Refused::unauthenticated(format!(
            "send one credential: Authorization or {api_key_header}, not both"
        ))),
        (Some(authorization), None) => {
            let (scheme, token) = authorization.split_once(' ').unwrap_or((authorization, ""));
            if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
                return Err(Refused::unauthenticated(
                    "Authorization must be \"Bearer <token>\"",
                ));
            }
            Ok(Some(Credential::Bearer(token.trim())))
        }
        (None, Some(key)) if !key.is_empty() => Ok(Some(Credential::ApiKey(key))),
        (None, Some(_)) => Err(Refused::unauthenticated(format!(
            "{api_key_header} is empty"
        ))),
        (None, None) => Ok(None),
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The middleware: identifies the caller, or refuses the request with 401 (and
/// `WWW-Authenticate: Bearer`), 403 or 503, before any route reads it.
pub async fn authenticate(
    State(authenticator): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller_kind = HeaderName::from_static(CALLER_KIND_HEADER);
    request.headers_mut().remove(&caller_kind);
    match authenticator.identify(request.headers()).await {
        Ok((participant, kind)) => {
            let headers = request.headers_mut();
            headers.remove(PARTICIPANT_HEADER);
            if let Some(participant) = participant {
                let value = HeaderValue::from_str(&participant)
                    .expect("a participant id is printable ASCII");
                headers.insert(HeaderName::from_static(PARTICIPANT_HEADER), value);
            }
            headers.insert(caller_kind, HeaderValue::from_static(kind.as_str()));
            next.run(request).await
        }
        Err(refused) => {
            let mut response = (refused.status, refused.message).into_response();
            if refused.status == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"a2a\""),
                );
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use baton_config::{Secret, TokenGrant};

    use super::*;

    fn authenticator(mode: AuthMode) -> Authenticator {
        let settings = AuthSettings {
            mode,
            tokens: vec![TokenGrant {
                participant: "alice".into(),
                variable: "T".into(),
                secret: Secret::new("alice-token-0123456789"),
            }],
            api_key_header: "X-API-Key".into(),
            oidc: None,
            deployment_secret: None,
        };
        Authenticator::new(
            &settings,
            "front-desk",
            Arc::new(DeploymentKey::from_secret("deployment secret")),
            reqwest::Client::new(),
        )
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::try_from(*name).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    async fn identify(
        mode: AuthMode,
        pairs: &[(&str, &str)],
    ) -> Result<(Option<String>, CallerKind), (StatusCode, String)> {
        authenticator(mode)
            .identify(&headers(pairs))
            .await
            .map_err(|r| (r.status, r.message))
    }

    #[tokio::test]
    async fn a_granted_token_proves_its_participant_as_bearer_or_api_key_in_every_mode() {
        for mode in [
            AuthMode::Asserted,
            AuthMode::Authenticated,
            AuthMode::Anonymous,
        ] {
            for pairs in [
                vec![("authorization", "Bearer alice-token-0123456789")],
                vec![("authorization", "bearer alice-token-0123456789")],
                vec![("x-api-key", "alice-token-0123456789")],
                vec![
                    ("x-api-key", "alice-token-0123456789"),
                    ("x-participant-id", "alice"),
                ],
            ] {
                assert_eq!(
                    identify(mode, &pairs).await,
                    Ok((Some("alice".into()), CallerKind::Authenticated)),
                    "{mode:?} {pairs:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_self_call_token_proves_the_one_agent_it_was_made_for() {
        let key = DeploymentKey::from_secret("deployment secret");
        let bearer = |agent: &str| format!("Bearer {}", key.self_call_token(agent));
        assert_eq!(
            identify(
                AuthMode::Authenticated,
                &[("authorization", &bearer("front-desk"))]
            )
            .await,
            Ok((Some("front-desk".into()), CallerKind::Deployment))
        );
        assert_eq!(
            identify(
                AuthMode::Anonymous,
                &[
                    ("authorization", &bearer("ledger")),
                    ("x-participant-id", "ledger")
                ]
            )
            .await,
            Ok((Some("ledger".into()), CallerKind::Deployment))
        );
        // One agent's token names no other participant: not a stranger, not another agent.
        for (token, claimed) in [
            (bearer("front-desk"), "alice"),
            (bearer("front-desk"), "ledger"),
            (bearer("ledger"), "front-desk"),
        ] {
            for mode in [
                AuthMode::Asserted,
                AuthMode::Anonymous,
                AuthMode::Authenticated,
            ] {
                let refused = identify(
                    mode,
                    &[("authorization", &token), ("x-participant-id", claimed)],
                )
                .await
                .unwrap_err();
                assert_eq!(refused.0, StatusCode::UNAUTHORIZED, "{mode:?} {claimed}");
            }
        }
        // Without X-Participant-Id, another agent's token is not this agent's.
        assert_eq!(
            identify(AuthMode::Asserted, &[("authorization", &bearer("ledger"))])
                .await
                .unwrap_err()
                .0,
            StatusCode::UNAUTHORIZED
        );
        let other = format!(
            "Bearer {}",
            DeploymentKey::from_secret("other").self_call_token("front-desk")
        );
        assert_eq!(
            identify(AuthMode::Asserted, &[("authorization", &other)])
                .await
                .unwrap_err()
                .0,
            StatusCode::UNAUTHORIZED
        );
    }

    #[tokio::test]
    async fn without_a_credential_each_mode_does_what_it_says() {
        assert_eq!(
            identify(AuthMode::Asserted, &[("x-participant-id", "bob")]).await,
            Ok((Some("bob".into()), CallerKind::Asserted))
        );
        assert_eq!(
            identify(AuthMode::Asserted, &[]).await,
            Ok((None, CallerKind::Asserted))
        );
        assert_eq!(
            identify(AuthMode::Anonymous, &[]).await,
            Ok((Some(ANONYMOUS_PARTICIPANT.into()), CallerKind::Anonymous))
        );
        let (status, message) = identify(AuthMode::Anonymous, &[("x-participant-id", "bob")])
            .await
            .unwrap_err();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(
            message.contains("no asserted X-Participant-Id"),
            "{message}"
        );
        let (status, message) = identify(AuthMode::Authenticated, &[("x-participant-id", "bob")])
            .await
            .unwrap_err();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(message.contains("needs a credential"), "{message}");
    }

    #[tokio::test]
    async fn nobody_may_claim_this_agents_id_or_the_anonymous_one() {
        for claimed in ["front-desk", ANONYMOUS_PARTICIPANT] {
            let (status, message) = identify(AuthMode::Asserted, &[("x-participant-id", claimed)])
                .await
                .unwrap_err();
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{claimed}");
            assert!(message.contains("reserved"), "{message}");
        }
    }

    #[tokio::test]
    async fn a_wrong_mixed_or_disagreeing_credential_is_refused_never_ignored() {
        for (pairs, status, said) in [
            (
                vec![("authorization", "Bearer wrong-token-0123456789")],
                StatusCode::UNAUTHORIZED,
                "not one this agent accepts",
            ),
            (
                vec![("x-api-key", "wrong")],
                StatusCode::UNAUTHORIZED,
                "not one this agent accepts",
            ),
            (
                vec![("authorization", "Basic YWxpY2U6cHc=")],
                StatusCode::UNAUTHORIZED,
                "must be \"Bearer <token>\"",
            ),
            (
                vec![("authorization", "Bearer")],
                StatusCode::UNAUTHORIZED,
                "must be \"Bearer <token>\"",
            ),
            (
                vec![("x-api-key", "")],
                StatusCode::UNAUTHORIZED,
                "is empty",
            ),
            (
                vec![
                    ("authorization", "Bearer alice-token-0123456789"),
                    ("authorization", "Bearer x"),
                ],
                StatusCode::UNAUTHORIZED,
                "more than once",
            ),
            (
                vec![
                    ("authorization", "Bearer alice-token-0123456789"),
                    ("x-api-key", "alice-token-0123456789"),
                ],
                StatusCode::UNAUTHORIZED,
                "send one credential",
            ),
            (
                vec![
                    ("authorization", "Bearer alice-token-0123456789"),
                    ("x-participant-id", "bob"),
                ],
                StatusCode::FORBIDDEN,
                "names \"bob\", but the credential is \"alice\"'s",
            ),
        ] {
            for mode in [AuthMode::Asserted, AuthMode::Anonymous] {
                let (got, message) = identify(mode, &pairs).await.unwrap_err();
                assert_eq!(got, status, "{pairs:?}");
                assert!(message.contains(said), "{said:?} not in {message:?}");
            }
        }
    }
}
