//! A local OpenID Connect issuer for tests: its discovery document and JWKS on 127.0.0.1, and
//! JWTs signed (ES256) with a key made for the run. It counts the fetches of its keys; it stops
//! on drop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

struct SigningKey {
    kid: String,
    pair: EcdsaKeyPair,
}

impl SigningKey {
    fn generate(kid: &str) -> SigningKey {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .expect("making a P-256 key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .expect("reading the key just made");
        SigningKey {
            kid: kid.to_string(),
            pair,
        }
    }

    fn jwk(&self) -> Value {
        let point = self.pair.public_key().as_ref();
        json!({
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])
        })
    }
}

struct Keys {
    current: Mutex<SigningKey>,
    /// Public keys made elsewhere, published beside the issuer's own.
    published: Mutex<Vec<Value>>,
    fetches: AtomicUsize,
    issuer: String,
}

pub struct OidcIssuer {
    pub issuer: String,
    keys: Arc<Keys>,
    task: JoinHandle<()>,
}

impl OidcIssuer {
    pub async fn start() -> OidcIssuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}/realm", listener.local_addr().unwrap());
        let keys = Arc::new(Keys {
            current: Mutex::new(SigningKey::generate("key-1")),
            published: Mutex::new(Vec::new()),
            fetches: AtomicUsize::new(0),
            issuer: issuer.clone(),
        });
        let app = Router::new()
            .route("/realm/.well-known/openid-configuration", get(discovery))
            .route("/realm/keys", get(jwks))
            .with_state(keys.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        OidcIssuer { issuer, keys, task }
    }

    /// A JWT of this issuer for `audience`, with `claims` added (`sub`, …), valid for 5 minutes.
    pub fn token(&self, audience: &str, claims: Value) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut all = json!({"iss": self.issuer, "aud": audience, "iat": now, "exp": now + 300});
        for (name, value) in claims.as_object().expect("claims are an object") {
            all[name] = value.clone();
        }
        let key = self.keys.current.lock().unwrap();
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": key.kid});
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(all.to_string())
        );
        let signature = key
            .pair
            .sign(&SystemRandom::new(), signed.as_bytes())
            .expect("signing");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    /// Publishes `jwks` (public JWKs whose private keys another tool holds) with the issuer's
    /// own key.
    pub fn publish(&self, jwks: &[Value]) {
        self.keys.published.lock().unwrap().extend_from_slice(jwks);
    }

    /// How many times the keys were fetched.
    pub fn key_fetches(&self) -> usize {
        self.keys.fetches.load(Ordering::SeqCst)
    }
}

impl Drop for OidcIssuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn discovery(State(keys): State<Arc<Keys>>) -> axum::Json<Value> {
    axum::Json(json!({
        "issuer": keys.issuer,
        "jwks_uri": format!("{}/keys", keys.issuer),
        "id_token_signing_alg_values_supported": ["ES256"],
    }))
}

async fn jwks(State(keys): State<Arc<Keys>>) -> axum::Json<Value> {
    keys.fetches.fetch_add(1, Ordering::SeqCst);
    let mut all = vec![keys.current.lock().unwrap().jwk()];
    all.extend(keys.published.lock().unwrap().iter().cloned());
    axum::Json(json!({"keys": all}))
}
