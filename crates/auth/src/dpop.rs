//! DPoP (RFC 9449): the client's proof-of-possession key, the proofs signed
//! with it, and the nonces servers hand out.
//!
//! Proofs are JWTs signed by `jsonwebtoken` (ring) with an ES256 key made by
//! ring; only the proof's claims are assembled here. No maintained DPoP
//! crate fits: the `dpop` crate follows a 2023 draft on http 0.2 and pulls
//! in another crypto stack.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
    EllipticCurveKeyType, Jwk,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::Serialize;

use crate::error::AuthError;
use crate::secret::Secret;

/// An ES256 key pair that DPoP-bound tokens are bound to.
pub(crate) struct DpopKey {
    pkcs8: Secret,
    jwk: Jwk,
    signing: EncodingKey,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("jwk", &self.jwk)
            .finish_non_exhaustive()
    }
}

fn key_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::Key {
        what: "DPoP key",
        source: e.to_string().into(),
    }
}

impl DpopKey {
    /// A fresh key.
    pub(crate) fn generate() -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(key_error)?;
        Self::from_pkcs8(doc.as_ref())
    }

    /// The key kept in a store ([`DpopKey::to_secret`]).
    pub(crate) fn from_secret(secret: &Secret) -> Result<Self, AuthError> {
        let der = URL_SAFE_NO_PAD.decode(secret.expose()).map_err(key_error)?;
        Self::from_pkcs8(&der)
    }

    fn from_pkcs8(der: &[u8]) -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(key_error)?;
        // An uncompressed point: 0x04, then x and y (32 bytes each).
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(key_error("unexpected public key encoding"));
        }
        let jwk = Jwk {
            common: CommonParameters::default(),
            algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                key_type: EllipticCurveKeyType::EC,
                curve: EllipticCurve::P256,
                x: URL_SAFE_NO_PAD.encode(&point[1..33]),
                y: URL_SAFE_NO_PAD.encode(&point[33..]),
            }),
        };
        Ok(Self {
            pkcs8: Secret::new(URL_SAFE_NO_PAD.encode(der)),
            jwk,
            signing: EncodingKey::from_ec_der(der),
        })
    }

    /// The private key, for a token store.
    pub(crate) fn to_secret(&self) -> Secret {
        self.pkcs8.clone()
    }

    /// A proof for a `method` request to `htu` (no query, no fragment),
    /// bound to `access_token` (`ath`) when one is presented, carrying the
    /// server's `nonce` when it asked for one.
    pub(crate) fn proof(
        &self,
        method: &http::Method,
        htu: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        #[derive(Serialize)]
        struct Claims<'a> {
            jti: String,
            htm: &'a str,
            htu: &'a str,
            iat: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            ath: Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            nonce: Option<&'a str>,
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        let claims = Claims {
            jti: random_token(16)?,
            htm: method.as_str(),
            htu,
            iat: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
            ath: access_token.map(|t| {
                URL_SAFE_NO_PAD
                    .encode(ring::digest::digest(&ring::digest::SHA256, t.as_bytes()).as_ref())
            }),
            nonce,
        };
        jsonwebtoken::encode(&header, &claims, &self.signing).map_err(key_error)
    }
}

/// `n` random bytes, base64url.
pub(crate) fn random_token(n: usize) -> Result<String, AuthError> {
    let mut bytes = vec![0u8; n];
    ring::rand::SecureRandom::fill(&SystemRandom::new(), &mut bytes)
        .map_err(|_| key_error("no randomness"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The latest DPoP nonce each server (by origin) asked for.
#[derive(Debug, Default)]
pub(crate) struct Nonces {
    by_origin: Mutex<HashMap<String, String>>,
}

impl Nonces {
    pub(crate) fn get(&self, origin: &str) -> Option<String> {
        self.by_origin
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(origin)
            .cloned()
    }

    /// Records `nonce` for `origin`; whether it is new.
    pub(crate) fn set(&self, origin: &str, nonce: &str) -> bool {
        let mut map = self.by_origin.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(origin.to_owned(), nonce.to_owned()).as_deref() != Some(nonce)
    }
}

/// The origin (`scheme://host:port`) of `uri`, the key of [`Nonces`].
pub(crate) fn origin_of(uri: &http::Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or(""),
        uri.authority().map(|a| a.as_str()).unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn proofs_verify_with_the_embedded_key_and_carry_the_claims() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                &http::Method::POST,
                "https://mcp.example/mcp",
                Some("tok"),
                Some("n1"),
            )
            .unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(
            &proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap();
        let c = data.claims;
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example/mcp");
        assert_eq!(c["nonce"], "n1");
        // ath = base64url(sha256("tok"))
        assert_eq!(c["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let second = key
            .proof(&http::Method::POST, "https://mcp.example/mcp", None, None)
            .unwrap();
        let v2 = jsonwebtoken::decode::<serde_json::Value>(
            &second,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_ne!(v2["jti"], c["jti"]);
        assert!(v2.get("ath").is_none() && v2.get("nonce").is_none());
        // The public key has no private part.
        let json = serde_json::to_value(&jwk).unwrap();
        assert!(json.get("d").is_none());
        assert_eq!(json["kty"], "EC");
        assert_eq!(json["crv"], "P-256");
    }

    #[test]
    fn a_stored_key_is_the_same_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_secret(&key.to_secret()).unwrap();
        assert_eq!(key.jwk, again.jwk);
        assert!(format!("{key:?}").contains("DpopKey"));
        assert!(!format!("{key:?}").contains(key.to_secret().expose()));
    }

    #[test]
    fn nonces_are_kept_per_origin() {
        let n = Nonces::default();
        assert!(n.set("https://a", "1"));
        assert!(!n.set("https://a", "1"));
        assert!(n.set("https://a", "2"));
        assert_eq!(n.get("https://a").as_deref(), Some("2"));
        assert_eq!(n.get("https://b"), None);
        assert_eq!(
            origin_of(&"https://a:8443/x?y".parse().unwrap()),
            "https://a:8443"
        );
    }
}
