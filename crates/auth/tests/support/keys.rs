//! Keys for the tests: ES256 made fresh, RS256 from a fixture, and
//! workload identity JWTs signed with them.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::json;

/// A key pair of a client or workload: its signing key, and the server's
/// verification key.
pub struct TestKey {
    pub signing: mcpwire_auth::SigningKey,
    pub verify: DecodingKey,
    pub pem: Vec<u8>,
    pub alg: Algorithm,
}

/// A fresh ES256 key pair.
pub fn es256_keypair() -> TestKey {
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    let verify = DecodingKey::from_ec_components(
        &URL_SAFE_NO_PAD.encode(&point[1..33]),
        &URL_SAFE_NO_PAD.encode(&point[33..]),
    )
    .unwrap();
    let pem = pem_wrap("PRIVATE KEY", doc.as_ref()).into_bytes();
    TestKey {
        signing: mcpwire_auth::SigningKey::from_pem(mcpwire_auth::SigningAlgorithm::Es256, &pem)
            .unwrap(),
        verify,
        pem,
        alg: Algorithm::ES256,
    }
}

/// The fixture RS256 key pair.
pub fn rs256_keypair() -> TestKey {
    let private = include_bytes!("../fixtures/rsa_private.pem");
    let public = include_bytes!("../fixtures/rsa_public.pem");
    TestKey {
        signing: mcpwire_auth::SigningKey::from_pem(mcpwire_auth::SigningAlgorithm::Rs256, private)
            .unwrap(),
        verify: DecodingKey::from_rsa_pem(public).unwrap(),
        pem: private.to_vec(),
        alg: Algorithm::RS256,
    }
}

pub fn pem_wrap(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A workload identity JWT signed with `key` for audience `aud`, valid for
/// `lifetime_secs` (negative: already expired).
pub fn workload_jwt(key: &TestKey, aud: &str, lifetime_secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({"iss": "https://idp.test", "sub": "workload-1", "aud": aud, "iat": now, "exp": now + lifetime_secs, "jti": "w1"});
    let enc = match key.alg {
        Algorithm::ES256 => jsonwebtoken::EncodingKey::from_ec_pem(&key.pem).unwrap(),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(&key.pem).unwrap(),
    };
    jsonwebtoken::encode(&jsonwebtoken::Header::new(key.alg), &claims, &enc).unwrap()
}
