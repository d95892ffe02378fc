//! OpenID Connect: a caller's bearer JWT, verified against the issuer's published keys (JWKS).
//! Only asymmetric signatures are taken (RS*, PS*, ES256, ES384): `none` and the HMAC algorithms
//! are refused, since a key anyone can fetch must never be a verification secret.

use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use baton_config::OidcSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::identity::is_valid_id;

/// Tokens are taken up to this far past `exp` and before `nbf`, for clocks that disagree.
const LEEWAY_SECS: i64 = 60;
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

/// One public key of a JWKS.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Jwk {
    kty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alg: Option<String>,
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    usage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    crv: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    y: Option<String>,
}

#[derive(Deserialize)]
struct JwkSet {
    keys: Vec<Value>,
}

#[derive(Deserialize)]
struct JwtHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// What a verified token must say.
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub audience: &'a str,
    pub participant_claim: &'a str,
}

/// Whether `named` (a token's `iss`, a discovery document's `issuer`) is the issuer `configured`
/// names, compared exactly as OpenID Connect asks. The one spelling the configured URL cannot
/// tell apart is an issuer with no path, written with or without its final `/`.
fn names_issuer(named: &str, configured: &str) -> bool {
    let bare_origin = configured.strip_suffix('/').filter(|origin| {
        !origin
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .contains('/')
    });
    named == configured || Some(named) == bare_origin
}

/// The participant `token` proves, if it is a JWT signed by one of `keys` that `expected` takes
/// at `now` (seconds since the epoch).
pub fn check_jwt(
    token: &str,
    keys: &[Jwk],
    now: i64,
    expected: &Expected<'_>,
) -> Result<String, JwtRefusal> {
    let invalid = |why: &str| JwtRefusal::Invalid(why.to_string());
    let mut segments = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) = (
        segments.next(),
        segments.next(),
        segments.next(),
        segments.next(),
    ) else {
        return Err(invalid("the bearer token is not a JWT"));
    };
    let decode = |segment: &str| URL_SAFE_NO_PAD.decode(segment).ok();
    let header: JwtHeader = decode(header)
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| invalid("the JWT header is not base64url JSON"))?;
    let claims: serde_json::Map<String, Value> = decode(payload)
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| invalid("the JWT claims are not base64url JSON"))?;
    let signature =
        decode(signature).ok_or_else(|| invalid("the JWT signature is not base64url"))?;
    let algorithm = Algorithm::named(&header.alg).ok_or_else(|| {
        JwtRefusal::Invalid(format!(
            "the JWT is signed with {:?}: this agent takes RS256, RS384, RS512, PS256, PS384, PS512, ES256 or ES384",
            baton_core::display::one_line_capped(&header.alg, 32)
        ))
    })?;
    let key = pick_key(keys, &header, algorithm)
        .ok_or_else(|| invalid("no key of the issuer matches the JWT's key id and algorithm"))?;
    let signed = token
        .rsplit_once('.')
        .map(|(signed, _)| signed)
        .unwrap_or_default();
    if !algorithm.verify(key, signed.as_bytes(), &signature) {
        return Err(invalid("the JWT's signature does not verify"));
    }
    check_claims(&claims, now, expected)
}

fn check_claims(
    claims: &serde_json::Map<String, Value>,
    now: i64,
    expected: &Expected<'_>,
) -> Result<String, JwtRefusal> {
    let invalid = |why: String| JwtRefusal::Invalid(why);
    let issuer = claims
        .get("iss")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !names_issuer(issuer, expected.issuer) {
        return Err(invalid("the JWT was issued by another issuer".to_string()));
    }
    let for_us = match claims.get("aud") {
        Some(Value::String(audience)) => audience == expected.audience,
        Some(Value::Array(audiences)) => audiences.iter().any(|a| a == expected.audience),
        _ => false,
    };
    if !for_us {
        return Err(invalid(format!(
            "the JWT is not for audience {:?}",
            expected.audience
        )));
    }
    let Some(expires) = claims.get("exp").and_then(Value::as_i64) else {
        return Err(invalid("the JWT has no exp".to_string()));
    };
    if now > expires + LEEWAY_SECS {
        return Err(invalid("the JWT has expired".to_string()));
    }
    if let Some(not_before) = claims.get("nbf").and_then(Value::as_i64)
        && now + LEEWAY_SECS < not_before
    {
        return Err(invalid("the JWT is not valid yet".to_string()));
    }
    let claim = expected.participant_claim;
    match claims.get(claim).and_then(Value::as_str) {
        Some(id) if is_valid_id(id) => Ok(id.to_string()),
        Some(_) => Err(invalid(format!(
            "the JWT's {claim:?} is not a participant id (1 to 256 printable ASCII characters)"
        ))),
        None => Err(invalid(format!("the JWT has no {claim:?} claim"))),
    }
}

#[derive(Debug, Clone, Copy)]
enum Algorithm {
    Rsa(&'static signature::RsaParameters, &'static str),
    Ec(&'static signature::EcdsaVerificationAlgorithm, &'static str),
}

impl Algorithm {
    fn named(alg: &str) -> Option<Algorithm> {
        Some(match alg {
            "RS256" => Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA256, "RS256"),
            "RS384" => Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA384, "RS384"),
            "RS512" => Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA512, "RS512"),
            "PS256" => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA256, "PS256"),
            "PS384" => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA384, "PS384"),
            "PS512" => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA512, "PS512"),
            "ES256" => Algorithm::Ec(&signature::ECDSA_P256_SHA256_FIXED, "ES256"),
            "ES384" => Algorithm::Ec(&signature::ECDSA_P384_SHA384_FIXED, "ES384"),
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Algorithm::Rsa(_, name) | Algorithm::Ec(_, name) => name,
        }
    }

    /// Whether `key` is of this algorithm's family (and curve).
    fn fits(self, key: &Jwk) -> bool {
        match self {
            Algorithm::Rsa(..) => key.kty == "RSA",
            Algorithm::Ec(_, "ES256") => key.kty == "EC" && key.crv.as_deref() == Some("P-256"),
            Algorithm::Ec(..) => key.kty == "EC" && key.crv.as_deref() == Some("P-384"),
        }
    }

    fn verify(self, key: &Jwk, message: &[u8], signature: &[u8]) -> bool {
        let decode = |field: &Option<String>| {
            field
                .as_deref()
                .and_then(|f| URL_SAFE_NO_PAD.decode(f).ok())
        };
        match self {
            Algorithm::Rsa(parameters, _) => {
                let (Some(n), Some(e)) = (decode(&key.n), decode(&key.e)) else {
                    return false;
                };
                RsaPublicKeyComponents { n, e }
                    .verify(parameters, message, signature)
                    .is_ok()
            }
            Algorithm::Ec(algorithm, _) => {
                let (Some(x), Some(y)) = (decode(&key.x), decode(&key.y)) else {
                    return false;
                };
                let point = [&[0x04], x.as_slice(), y.as_slice()].concat();
                UnparsedPublicKey::new(algorithm, point)
                    .verify(message, signature)
                    .is_ok()
            }
        }
    }
}

/// The key the token names by `kid`, or the one key that fits when it names none.
fn pick_key<'k>(keys: &'k [Jwk], header: &JwtHeader, algorithm: Algorithm) -> Option<&'k Jwk> {
    let usable = |key: &&Jwk| {
        algorithm.fits(key)
            && key.alg.as_deref().is_none_or(|alg| alg == algorithm.name())
            && key.usage.as_deref().is_none_or(|usage| usage == "sig")
    };
    match &header.kid {
        Some(kid) => keys
            .iter()
            .filter(usable)
            .find(|key| key.kid.as_deref() == Some(kid.as_str())),
        None => {
            let mut fitting = keys.iter().filter(usable);
            match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        }
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
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
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
        match check_jwt(token, &set.keys, now, &expected) {
            Err(JwtRefusal::Invalid(_))
                if set.due(timing.refetch_every, timing) && names_unknown_key(token, &set.keys) =>
            {
                let set = self.fetch(set).await?;
                check_jwt(token, &set.keys, now, &expected)
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
    let header = token
        .split('.')
        .next()
        .and_then(|h| URL_SAFE_NO_PAD.decode(h).ok())
        .and_then(|bytes| serde_json::from_slice::<JwtHeader>(&bytes).ok());
    header
        .and_then(|h| h.kid)
        .is_some_and(|kid| !keys.iter().any(|k| k.kid.as_deref() == Some(kid.as_str())))
}

#[cfg(test)]
mod tests;
