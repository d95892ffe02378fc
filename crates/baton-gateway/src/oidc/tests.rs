use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use super::*;

/// Seconds since the epoch: `jsonwebtoken` checks `exp` and `nbf` against the clock.
fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
const RSA_TEST_KEY: &[u8] = include_bytes!("../../testdata/rsa-2048-test-only.der");

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn expected() -> Expected<'static> {
    Expected {
        issuer: "https://id.example.com",
        audience: "baton",
        participant_claim: "sub",
    }
}

fn claims() -> Value {
    json!({"iss": "https://id.example.com", "aud": "baton", "sub": "alice", "exp": now() + 300})
}

type Sign = Box<dyn Fn(&[u8]) -> Vec<u8>>;

struct Signer {
    sign: Sign,
    jwk: Jwk,
    alg: &'static str,
}

fn rsa() -> Signer {
    let pair = RsaKeyPair::from_der(RSA_TEST_KEY).unwrap();
    let public = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public_key());
    let jwk = serde_json::from_value(json!({
        "kty": "RSA", "kid": "r1", "use": "sig", "n": b64(&public.n), "e": b64(&public.e)
    }))
    .unwrap();
    Signer {
        sign: Box::new(move |message| {
            let mut signature = vec![0; pair.public_key().modulus_len()];
            pair.sign(
                &signature::RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                message,
                &mut signature,
            )
            .unwrap();
            signature
        }),
        jwk,
        alg: "RS256",
    }
}

fn ec() -> Signer {
    let random = SystemRandom::new();
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .unwrap();
    let point = pair.public_key().as_ref().to_vec();
    let jwk = serde_json::from_value(json!({
        "kty": "EC", "kid": "e1", "crv": "P-256", "alg": "ES256",
        "x": b64(&point[1..33]), "y": b64(&point[33..])
    }))
    .unwrap();
    Signer {
        sign: Box::new(move |message| {
            pair.sign(&SystemRandom::new(), message)
                .unwrap()
                .as_ref()
                .to_vec()
        }),
        jwk,
        alg: "ES256",
    }
}

fn ed25519() -> Signer {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let jwk = serde_json::from_value(json!({
        "kty": "OKP", "kid": "d1", "crv": "Ed25519", "x": b64(pair.public_key().as_ref())
    }))
    .unwrap();
    Signer {
        sign: Box::new(move |message| pair.sign(message).as_ref().to_vec()),
        jwk,
        alg: "EdDSA",
    }
}

fn token(signer: &Signer, header: Value, claims: &Value) -> String {
    let signed = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    format!("{signed}.{}", b64(&(signer.sign)(signed.as_bytes())))
}

fn signed(signer: &Signer, claims: &Value) -> String {
    let kid = signer.jwk.common.key_id.clone().unwrap();
    token(
        signer,
        json!({"alg": signer.alg, "kid": kid, "typ": "JWT"}),
        claims,
    )
}

#[test]
fn an_issuer_is_named_exactly_but_for_the_final_slash_of_a_bare_origin() {
    for (named, configured) in [
        (
            "https://id.example.com/realms/x",
            "https://id.example.com/realms/x",
        ),
        ("https://id.example.com", "https://id.example.com/"),
        ("https://id.example.com/", "https://id.example.com/"),
    ] {
        assert!(names_issuer(named, configured), "{named} for {configured}");
    }
    for (named, configured) in [
        (
            "https://id.example.com/realms/x/",
            "https://id.example.com/realms/x",
        ),
        (
            "https://id.example.com/realms",
            "https://id.example.com/realms/x",
        ),
        ("https://id.example.com//", "https://id.example.com/"),
        ("https://id.example.com.evil.com", "https://id.example.com/"),
        ("http://id.example.com", "https://id.example.com/"),
    ] {
        assert!(!names_issuer(named, configured), "{named} for {configured}");
    }
}

#[test]
fn a_token_signed_by_an_issuer_key_proves_its_subject() {
    let decoy = |mut key: Jwk, kid: &str| {
        key.common.key_id = Some(kid.into());
        key
    };
    for signer in [rsa(), ec(), ed25519()] {
        let keys = vec![
            decoy(rsa().jwk, "old-rsa"),
            decoy(ec().jwk, "old-ec"),
            signer.jwk.clone(),
        ];
        assert_eq!(
            check_jwt(&signed(&signer, &claims()), &keys, &expected()),
            Ok("alice".to_string()),
            "{}",
            signer.alg
        );
    }
}

#[test]
fn a_configured_claim_and_a_list_of_audiences_are_read() {
    let signer = ec();
    let mut claims = claims();
    claims["aud"] = json!(["other", "baton"]);
    claims["email"] = json!("alice@example.com");
    let expected = Expected {
        participant_claim: "email",
        ..expected()
    };
    assert_eq!(
        check_jwt(
            &signed(&signer, &claims),
            std::slice::from_ref(&signer.jwk),
            &expected
        ),
        Ok("alice@example.com".to_string())
    );
}

#[test]
fn every_forgery_and_every_wrong_claim_is_refused_with_its_reason() {
    let signer = rsa();
    let keys = [signer.jwk.clone()];
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = claims();
        change(&mut claims);
        signed(&signer, &claims)
    };
    let good = signed(&signer, &claims());
    let (head, rest) = good.split_once('.').unwrap();
    let (_, signature) = rest.split_once('.').unwrap();
    let mallory = json!({"iss": "https://id.example.com", "aud": "baton", "sub": "mallory", "exp": now() + 300});
    let hmac_header = b64(json!({"alg": "HS256", "kid": "r1"}).to_string().as_bytes());
    let none_header = b64(json!({"alg": "none"}).to_string().as_bytes());
    for (token, said) in [
        ("abc".to_string(), "not a JWT"),
        (
            format!("{head}.{}.{signature}", b64(mallory.to_string().as_bytes())),
            "signature does not verify",
        ),
        (
            format!("{none_header}.{}.", b64(mallory.to_string().as_bytes())),
            "header is not one this agent reads",
        ),
        (
            format!(
                "{hmac_header}.{}.{signature}",
                b64(mallory.to_string().as_bytes())
            ),
            "signed with HS256",
        ),
        (signed(&ec(), &claims()), "no key of the issuer matches"),
        (
            format!(
                "{}.{}.{signature}",
                b64(json!({"alg": "RS256\nINFO forged"}).to_string().as_bytes()),
                b64(mallory.to_string().as_bytes())
            ),
            "header is not one this agent reads",
        ),
        (
            token(
                &signer,
                json!({"alg": "RS256", "kid": "r1", "crit": ["exp"], "exp": 0}),
                &claims(),
            ),
            "asks for an extension",
        ),
        (
            {
                let signed = format!("{head}.{}", b64(b"not json"));
                format!("{signed}.{}", b64(&(signer.sign)(signed.as_bytes())))
            },
            "parts are not base64url JSON",
        ),
        (
            with(&|c| c["iss"] = json!("https://evil.example.com")),
            "another issuer",
        ),
        (
            with(&|c| c["iss"] = json!("https://id.example.com/")),
            "another issuer",
        ),
        (
            with(&|c| c["iss"] = json!("https://ID.example.com")),
            "another issuer",
        ),
        (
            with(&|c| c["aud"] = json!("someone-else")),
            "not for audience \"baton\"",
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
            "not for audience",
        ),
        (with(&|c| c["exp"] = json!(now() - 90)), "has expired"),
        (with(&|c| c["exp"] = json!("tomorrow")), "has no exp"),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("iss");
            }),
            "has no iss",
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            "has no exp",
        ),
        (with(&|c| c["nbf"] = json!(now() + 90)), "not valid yet"),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            }),
            "has no \"sub\" claim",
        ),
        (
            with(&|c| c["sub"] = json!("al ice\n")),
            "not a participant id",
        ),
    ] {
        match check_jwt(&token, &keys, &expected()) {
            Err(JwtRefusal::Invalid(why)) => {
                assert!(why.contains(said), "{said:?} not in {why:?}");
                assert!(!why.contains('\n'), "a forged log line: {why:?}");
            }
            other => panic!("{said}: {other:?}"),
        }
    }
}

#[test]
fn clocks_may_disagree_by_a_minute() {
    let signer = ec();
    let mut claims = claims();
    claims["exp"] = json!(now() - 45);
    claims["nbf"] = json!(now() + 45);
    assert!(
        check_jwt(
            &signed(&signer, &claims),
            std::slice::from_ref(&signer.jwk),
            &expected()
        )
        .is_ok()
    );
}

#[test]
fn a_key_is_picked_by_id_or_as_the_only_one_that_fits() {
    let signer = ec();
    let no_kid = token(&signer, json!({"alg": "ES256"}), &claims());
    assert!(check_jwt(&no_kid, &[rsa().jwk, signer.jwk.clone()], &expected()).is_ok());
    let other_ec = ec().jwk;
    assert!(check_jwt(&no_kid, &[other_ec, signer.jwk.clone()], &expected()).is_err());
    let mut encryption_key = signer.jwk.clone();
    encryption_key.common.public_key_use = Some(PublicKeyUse::Encryption);
    assert!(check_jwt(&signed(&signer, &claims()), &[encryption_key], &expected()).is_err());
    let mut encrypting_key = signer.jwk.clone();
    encrypting_key.common.key_operations = Some(vec![KeyOperations::Encrypt]);
    assert!(check_jwt(&signed(&signer, &claims()), &[encrypting_key], &expected()).is_err());
    assert!(names_unknown_key(&signed(&signer, &claims()), &[rsa().jwk]));
    assert!(!names_unknown_key(
        &signed(&signer, &claims()),
        std::slice::from_ref(&signer.jwk)
    ));
}

/// The issuer's keys server down after the first fetch: callers are still served with the keys
/// fetched, until they are as old as the bound, then refused as unavailable (503, not 401); once
/// the server is back its keys are fetched again.
#[tokio::test]
async fn keys_serve_through_an_issuer_outage_for_their_bound_then_callers_are_refused() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let signer = rsa();
    let jwks = json!({"keys": [serde_json::to_value(&signer.jwk).unwrap()]});
    let up = Arc::new(AtomicBool::new(true));
    let serving = up.clone();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let (up, jwks) = (serving.load(Ordering::SeqCst), jwks.clone());
            async move {
                if up {
                    (axum::http::StatusCode::OK, axum::Json(jwks))
                } else {
                    (
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        axum::Json(json!({})),
                    )
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let settings = OidcSettings {
        issuer: "https://id.example.com".parse().unwrap(),
        audience: "baton".into(),
        participant_claim: "sub".into(),
        jwks_url: Some(format!("http://{address}/jwks").parse().unwrap()),
    };
    // Keys fetched again on every call, and kept 500 ms while the server is down.
    let kept = Duration::from_millis(500);
    let verifier = OidcVerifier::timed(
        settings,
        reqwest::Client::new(),
        KeyTiming {
            max_age: Duration::ZERO,
            refetch_every: Duration::ZERO,
            kept_while_unreachable: kept,
        },
    );
    let claims = json!({"iss": "https://id.example.com", "aud": "baton", "sub": "alice",
        "exp": SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + 300});
    let token = signed(&signer, &claims);

    assert_eq!(verifier.verify(&token).await, Ok("alice".into()));
    let fetched = Instant::now();
    up.store(false, Ordering::SeqCst);
    assert_eq!(verifier.verify(&token).await, Ok("alice".into()));
    assert!(fetched.elapsed() < kept, "the check took the whole bound");

    tokio::time::sleep_until(fetched + kept).await;
    assert!(
        matches!(
            verifier.verify(&token).await,
            Err(JwtRefusal::KeysUnavailable(_))
        ),
        "keys past their bound are not used"
    );
    up.store(true, Ordering::SeqCst);
    assert_eq!(verifier.verify(&token).await, Ok("alice".into()));
    server.abort();
}
