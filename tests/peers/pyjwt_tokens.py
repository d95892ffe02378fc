"""JWTs as another stack mints them: keys made with `cryptography`, published as JWKs and signed
with PyJWT, for the gateway's OIDC tests (Baton's own test issuer signs with aws-lc-rs, the
library its verifier is built on, so it cannot show that tokens from elsewhere are read).

    pyjwt_tokens.py --issuer URL --audience AUD --sub ID

Prints one JSON object and exits:
  keys:      the public JWKs to publish, one per algorithm, each with its `kid` and `alg`
  tokens:    {alg: a token for `sub`, valid for five minutes, naming its key by `kid`}
  forgeries: {what: a token an attacker could make, which the verifier must refuse}
"""

import argparse
import json
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--audience", required=True)
    parser.add_argument("--sub", required=True)
    args = parser.parse_args()

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signers = {
        "RS256": (rsa_key, RSAAlgorithm),
        "RS512": (rsa_key, RSAAlgorithm),
        "PS256": (rsa_key, RSAAlgorithm),
        "ES256": (ec.generate_private_key(ec.SECP256R1()), ECAlgorithm),
        "ES384": (ec.generate_private_key(ec.SECP384R1()), ECAlgorithm),
        "EdDSA": (ed25519.Ed25519PrivateKey.generate(), OKPAlgorithm),
    }
    now = int(time.time())
    claims = {
        "iss": args.issuer,
        "aud": args.audience,
        "sub": args.sub,
        "iat": now,
        "exp": now + 300,
    }
    keys, tokens = [], {}
    for alg, (key, algorithm) in signers.items():
        kid = f"pyjwt-{alg}"
        jwk = algorithm.to_jwk(key.public_key(), as_dict=True)
        keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        tokens[alg] = jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})

    # The published key itself as an HMAC secret: a verifier that let the token pick its
    # algorithm would check this signature with the public key's bytes and take it.
    public_numbers = rsa_key.public_key().public_numbers()
    confused = jwt.encode(
        {**claims, "sub": "mallory"},
        public_numbers.n.to_bytes(256, "big"),
        algorithm="HS256",
        headers={"kid": "pyjwt-RS256"},
    )
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forgeries = {
        "hmac with the public key": confused,
        "signed by a key the issuer never published": jwt.encode(
            {**claims, "sub": "mallory"},
            other_key,
            algorithm="RS256",
            headers={"kid": "pyjwt-RS256"},
        ),
        "expired an hour ago": jwt.encode(
            {**claims, "iat": now - 7200, "exp": now - 3600},
            signers["ES256"][0],
            algorithm="ES256",
            headers={"kid": "pyjwt-ES256"},
        ),
        "for another audience": jwt.encode(
            {**claims, "aud": "another-agent"},
            signers["EdDSA"][0],
            algorithm="EdDSA",
            headers={"kid": "pyjwt-EdDSA"},
        ),
    }
    print(json.dumps({"keys": keys, "tokens": tokens, "forgeries": forgeries}))


if __name__ == "__main__":
    main()
