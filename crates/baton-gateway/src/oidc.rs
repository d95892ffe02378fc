//! OpenID Connect: a caller's bearer JWT, verified against the issuer's published keys (JWKS).
//! The token's form, signature and registered claims are checked by `jsonwebtoken` (on
//! aws-lc-rs, the crypto stack rustls and tonic already use); this module picks the key, says
//! which algorithms are taken and why a token was refused. Only asymmetric signatures are taken
//! (RS*, PS*, ES256, ES384, EdDSA): `none` and the HMAC algorithms are refused, since a key
//! anyone can fetch must never be a verification secret.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use baton_config::OidcSettings;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, KeyOperations, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::identity::is_valid_id;

/// Tokens are taken up to this far past `exp` and before `nbf`, for clocks that disagree.
const LEEWAY_SECS: u64 = 60;
/// The algorithms a token may be signed with: the asymmetric ones.
const TAKEN: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// When keys are fetched, and how long they serve while no new ones can be had.
#[derive(Debug, Clone, Copy)]
struct KeyTiming {
    /// Keys are fetched again after this long.
    max_age: Duration,
    /// And at most this often for an unknown key id, or after a fetch that failed.
    refetch_every: Duration,
    /// How long keys are still used, from their fetch, while the issuer cannot be reached for
    /// new ones: an outage of the issuer refuses no caller until then.
    kept_while_unreachable: Duration,
}

const KEY_TIMING: KeyTiming = KeyTiming {
    max_age: Duration::from_secs(15 * 60),
    refetch_every: Duration::from_secs(30),
    kept_while_unreachable: Duration::from_secs(60 * 60),
};
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Why a JWT was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwtRefusal {
    /// The token was refused: the caller should get a new one (401).
    Invalid(String),
    /// The issuer's keys could not be read: try again later (503).
    KeysUnavailable(String),
}

#[derive(Deserialize)]
struct JwkSet {
    keys: Vec<Value>,
}

/// What a verified token must say.
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub audience: &'a str,
    pub participant_claim: &'a str,
}

/// The spellings of the issuer `configured` names that a token's `iss` or a discovery
/// document's `issuer` may use: exactly the configured one, as OpenID Connect asks. The one
/// spelling the configured URL cannot tell apart is an issuer with no path, written with or
/// without its final `/`.
fn issuer_spellings(configured: &str) -> Vec<&str> {
    let bare_origin = configured.strip_suffix('/').filter(|origin| {
        !origin
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .contains('/')
    });
    std::iter::once(configured).chain(bare_origin).collect()
}

fn names_issuer(named: &str, configured: &str) -> bool {
    issuer_spellings(configured).contains(&named)
}

/// The participant `token` proves, if it is a JWT signed by one of `keys` that `expected` takes
/// now.
pub fn check_jwt(token: &str, keys: &[Jwk], expected: &Expected<'_>) -> Result<String, JwtRefusal> {
    let invalid = |why: String| JwtRefusal::Invalid(why);
    let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
        ErrorKind::Json(e) => invalid(format!(
            "the JWT header is not one this agent reads: {}",
            baton_core::display::one_line_capped(&e.to_string(), 160)
        )),
        _ => invalid("the bearer token is not a JWT".to_string()),
    })?;
    if !TAKEN.contains(&header.alg) {
        return Err(invalid(format!(
            "the JWT is signed with {:?}: this agent takes RS256, RS384, RS512, PS256, PS384, \
             PS512, ES256, ES384 or EdDSA",
            header.alg
        )));
    }
    let key = pick_key(keys, header.kid.as_deref(), header.alg).ok_or_else(|| {
        invalid("no key of the issuer matches the JWT's key id and algorithm".to_string())
    })?;
    let key = DecodingKey::from_jwk(key)
        .map_err(|e| invalid(format!("the issuer's key for the JWT cannot be read: {e}")))?;
    let mut validation = Validation::new(header.alg);
    validation.leeway = LEEWAY_SECS;
    validation.validate_nbf = true;
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.set_issuer(&issuer_spellings(expected.issuer));
    validation.set_audience(&[expected.audience]);
    let claims = jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &validation)
        .map_err(|e| invalid(refusal_reason(e.kind(), expected)))?
        .claims;
    let claim = expected.participant_claim;
    match claims.get(claim).and_then(Value::as_str) {
        Some(id) if is_valid_id(id) => Ok(id.to_string()),
        Some(_) => Err(invalid(format!(
            "the JWT's {claim:?} is not a participant id (1 to 256 printable ASCII characters)"
        ))),
        None => Err(invalid(format!("the JWT has no {claim:?} claim"))),
    }
}

/// Why `jsonwebtoken` refused a token whose key was found, in the caller's terms.
fn refusal_reason(kind: &ErrorKind, expected: &Expected<'_>) -> String {
    let audience = || format!("the JWT is not for audience {:?}", expected.audience);
    match kind {
        ErrorKind::InvalidSignature => "the JWT's signature does not verify".to_string(),
        ErrorKind::ExpiredSignature => "the JWT has expired".to_string(),
        ErrorKind::ImmatureSignature => "the JWT is not valid yet".to_string(),
        ErrorKind::InvalidIssuer => "the JWT was issued by another issuer".to_string(),
        ErrorKind::InvalidAudience => audience(),
        ErrorKind::MissingRequiredClaim(claim) if claim == "aud" => audience(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the JWT has no {claim}"),
        ErrorKind::InvalidClaimFormat(claim) => {
            format!("the JWT's {claim} is not in the form RFC 7519 asks")
        }
        ErrorKind::InvalidToken => {
            "the JWT's header asks for an extension this agent does not take (crit, b64)"
                .to_string()
        }
        ErrorKind::Base64(_) | ErrorKind::Json(_) | ErrorKind::Utf8(_) => {
            "the JWT's parts are not base64url JSON".to_string()
        }
        other => format!("the JWT is refused: {other:?}"),
    }
}

/// Whether `key` may check a signature of `algorithm`: of its family and curve, meant for
/// signatures, and not meant for another algorithm.
fn fits(key: &Jwk, algorithm: Algorithm) -> bool {
    let family = match (&key.algorithm, algorithm) {
        (AlgorithmParameters::RSA(_), _) => algorithm.family() == AlgorithmFamily::Rsa,
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => {
            ec.curve == EllipticCurve::P256
        }
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES384) => {
            ec.curve == EllipticCurve::P384
        }
        (AlgorithmParameters::OctetKeyPair(okp), Algorithm::EdDSA) => {
            okp.curve == EllipticCurve::Ed25519
        }
        _ => false,
    };
    let common = &key.common;
    family
        && common
            .key_algorithm
            .is_none_or(|alg| alg == KeyAlgorithm::from(algorithm))
        && common
            .public_key_use
            .as_ref()
            .is_none_or(|usage| *usage == PublicKeyUse::Signature)
        && common
            .key_operations
            .as_ref()
            .is_none_or(|operations| operations.contains(&KeyOperations::Verify))
}

/// The key the token names by `kid`, or the one key that fits when it names none.
fn pick_key<'k>(keys: &'k [Jwk], kid: Option<&str>, algorithm: Algorithm) -> Option<&'k Jwk> {
    let mut fitting = keys.iter().filter(|key| fits(key, algorithm));
    match kid {
        Some(kid) => fitting.find(|key| key.common.key_id.as_deref() == Some(kid)),
        None => match (fitting.next(), fitting.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        },
    }
}

/// The issuer's keys, fetched when first needed, again when they are old, and again (at most
/// every 30 s) when a token names a key they lack: a rotation is picked up without a restart.
/// Tokens are checked against the keys as they are, with no lock held: one caller at a time
/// fetches new keys while the others go on with the old ones, which are kept for an hour from
/// their fetch while the issuer cannot be reached.
pub struct OidcVerifier {
    settings: OidcSettings,
    http: reqwest::Client,
    keys: RwLock<Arc<KeySet>>,
    /// Held by the one fetch under way.
    fetching: Mutex<()>,
    timing: KeyTiming,
}

#[derive(Default)]
struct KeySet {
    keys: Vec<Jwk>,
    fetched: Option<Instant>,
    /// When the last fetch that failed ended: the next waits `refetch_every`.
    failed: Option<Instant>,
    jwks_url: Option<url::Url>,
}

impl KeySet {
    /// Whether a fetch may be tried now: keys `older` than they should be, and no fetch
    /// failed in the last `timing.refetch_every`.
    fn due(&self, older: Duration, timing: &KeyTiming) -> bool {
        self.fetched.is_none_or(|at| at.elapsed() >= older)
            && self
                .failed
                .is_none_or(|at| at.elapsed() >= timing.refetch_every)
    }

    /// Whether the keys may still be used while no new ones can be had.
    fn usable(&self, kept: Duration) -> bool {
        self.fetched.is_some_and(|at| at.elapsed() < kept)
    }
}

impl OidcVerifier {
    pub fn new(settings: OidcSettings, http: reqwest::Client) -> OidcVerifier {
        Self::timed(settings, http, KEY_TIMING)
    }

    fn timed(settings: OidcSettings, http: reqwest::Client, timing: KeyTiming) -> Self {
        let jwks_url = settings.jwks_url.clone();
        OidcVerifier {
            settings,
            http,
            keys: RwLock::new(Arc::new(KeySet {
                jwks_url,
                ..KeySet::default()
            })),
            fetching: Mutex::new(()),
            timing,
        }
    }

    /// The participant `token` proves.
    pub async fn verify(&self, token: &str) -> Result<String, JwtRefusal> {
        let expected = Expected {
            issuer: self.settings.issuer.as_str(),
            audience: &self.settings.audience,
            participant_claim: &self.settings.participant_claim,
        };
        let timing = &self.timing;
        let mut set = self.current();
        if set.due(timing.max_age, timing) {
            set = self.fetch(set).await?;
        }
        if !set.usable(timing.kept_while_unreachable) {
            return Err(JwtRefusal::KeysUnavailable(
                "the issuer's keys cannot be read right now".to_string(),
            ));
        }
        match check_jwt(token, &set.keys, &expected) {
            Err(JwtRefusal::Invalid(_))
                if set.due(timing.refetch_every, timing) && names_unknown_key(token, &set.keys) =>
            {
                let set = self.fetch(set).await?;
                check_jwt(token, &set.keys, &expected)
            }
            outcome => outcome,
        }
    }

    /// The keys as they are now.
    fn current(&self) -> Arc<KeySet> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn replace(&self, set: KeySet) -> Arc<KeySet> {
        let set = Arc::new(set);
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = set.clone();
        set
    }

    /// The keys to check with after fetching new ones, when `seen` are due: the new keys, the
    /// ones another fetch got meanwhile, or, when the issuer cannot be reached, `seen` while
    /// they are usable. A caller that has keys does not wait for another's fetch.
    async fn fetch(&self, seen: Arc<KeySet>) -> Result<Arc<KeySet>, JwtRefusal> {
        let _fetching = if seen.fetched.is_none() {
            self.fetching.lock().await
        } else {
            match self.fetching.try_lock() {
                Ok(fetching) => fetching,
                Err(_) => return Ok(seen),
            }
        };
        let latest = self.current();
        if latest.fetched != seen.fetched || latest.failed != seen.failed {
            return Ok(latest);
        }
        match self.fetch_keys(latest.jwks_url.clone()).await {
            Ok((keys, jwks_url)) => Ok(self.replace(KeySet {
                keys,
                fetched: Some(Instant::now()),
                failed: None,
                jwks_url: Some(jwks_url),
            })),
            Err(refusal) => {
                let kept = self.replace(KeySet {
                    keys: latest.keys.clone(),
                    fetched: latest.fetched,
                    failed: Some(Instant::now()),
                    jwks_url: latest.jwks_url.clone(),
                });
                if kept.usable(self.timing.kept_while_unreachable) {
                    tracing::warn!(
                        "the OIDC issuer's keys cannot be fetched again; the keys fetched {}s ago \
                         are used until they are {}s old",
                        kept.fetched.map_or(0, |at| at.elapsed().as_secs()),
                        self.timing.kept_while_unreachable.as_secs()
                    );
                    Ok(kept)
                } else {
                    Err(refusal)
                }
            }
        }
    }

    /// The issuer's usable keys (a key of a kind this agent cannot use is skipped, not a reason
    /// to refuse the rest), from `jwks_url`, or from the URL its discovery document names.
    async fn fetch_keys(
        &self,
        jwks_url: Option<url::Url>,
    ) -> Result<(Vec<Jwk>, url::Url), JwtRefusal> {
        let jwks_url = match jwks_url {
            Some(url) => url,
            None => self.discover().await?,
        };
        let set: JwkSet = self.fetch_json(&jwks_url).await?;
        let keys = set
            .keys
            .into_iter()
            .filter_map(|key| serde_json::from_value(key).ok())
            .collect();
        Ok((keys, jwks_url))
    }

    async fn discover(&self) -> Result<url::Url, JwtRefusal> {
        let issuer = self.settings.issuer.as_str().trim_end_matches('/');
        let url = url::Url::parse(&format!("{issuer}/.well-known/openid-configuration"))
            .map_err(|e| JwtRefusal::KeysUnavailable(e.to_string()))?;
        let document: Value = self.fetch_json(&url).await?;
        if !document["issuer"]
            .as_str()
            .is_some_and(|named| names_issuer(named, self.settings.issuer.as_str()))
        {
            return Err(JwtRefusal::KeysUnavailable(format!(
                "the discovery document at {url} names another issuer"
            )));
        }
        document["jwks_uri"]
            .as_str()
            .and_then(|uri| url::Url::parse(uri).ok())
            .ok_or_else(|| {
                JwtRefusal::KeysUnavailable(format!(
                    "the discovery document at {url} has no jwks_uri"
                ))
            })
    }

    async fn fetch_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &url::Url,
    ) -> Result<T, JwtRefusal> {
        let unavailable = |why: String| {
            tracing::warn!(url = %url, "the OIDC issuer's keys cannot be read: {why}");
            JwtRefusal::KeysUnavailable(format!(
                "the issuer's keys cannot be read right now: {why}"
            ))
        };
        let mut response = self
            .http
            .get(url.clone())
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(unavailable(format!("HTTP {}", response.status())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unavailable(e.to_string()))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_DOCUMENT_BYTES {
                return Err(unavailable("the document is over 1 MiB".to_string()));
            }
        }
        serde_json::from_slice(&body)
            .map_err(|e| unavailable(format!("not the JSON expected: {e}")))
    }
}

/// Whether the token's header names a key id the keys lack.
fn names_unknown_key(token: &str, keys: &[Jwk]) -> bool {
    jsonwebtoken::decode_header(token)
        .ok()
        .and_then(|header| header.kid)
        .is_some_and(|kid| {
            !keys
                .iter()
                .any(|k| k.common.key_id.as_deref() == Some(kid.as_str()))
        })
}

#[cfg(test)]
mod tests;
