//! Client assertions (RFC 7523 §2.2, `private_key_jwt`): a short-lived JWT
//! the client signs with its private key to authenticate at the token
//! endpoint instead of sending a secret.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use crate::dpop::random_token;
use crate::error::AuthError;

/// The `client_assertion_type` of a JWT client assertion.
pub(crate) const JWT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is valid.
const ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

/// The signature algorithm of a [`SigningKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl SigningAlgorithm {
    /// The algorithm named `name` (`ES256`, `RS256`), if supported.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(SigningAlgorithm::Es256),
            "RS256" => Some(SigningAlgorithm::Rs256),
            _ => None,
        }
    }

    /// The JOSE name.
    pub fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::Es256 => "ES256",
            SigningAlgorithm::Rs256 => "RS256",
        }
    }
}

/// A private key that signs client assertions.
#[derive(Clone)]
pub struct SigningKey {
    alg: SigningAlgorithm,
    key: EncodingKey,
    key_id: Option<String>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) for ES256; PKCS#1 or
    /// PKCS#8 for RS256.
    pub fn from_pem(alg: SigningAlgorithm, pem: &[u8]) -> Result<Self, AuthError> {
        let key = match alg {
            SigningAlgorithm::Es256 => EncodingKey::from_ec_pem(pem),
            SigningAlgorithm::Rs256 => EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|e| AuthError::Key {
            what: "client assertion signing key",
            source: Box::new(e),
        })?;
        let probe = Self {
            alg,
            key,
            key_id: None,
        };
        // Sign once now, so a key that parses but cannot sign (an RSA key
        // given as ES256) fails at configuration, not at the first request.
        probe.assertion("probe", "probe")?;
        Ok(probe)
    }

    /// Sets the `kid` header, for servers that hold several keys.
    #[must_use]
    pub fn key_id(mut self, kid: impl Into<String>) -> Self {
        self.key_id = Some(kid.into());
        self
    }

    /// The algorithm.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.alg
    }

    /// A client assertion for `client_id` at the authorization server
    /// `audience` (its issuer identifier, RFC 7523bis): `iss` and `sub` are
    /// the client, `exp` a minute away, `jti` unique.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        #[derive(Serialize)]
        struct Claims<'a> {
            iss: &'a str,
            sub: &'a str,
            aud: &'a str,
            jti: String,
            iat: u64,
            exp: u64,
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut header = Header::new(match self.alg {
            SigningAlgorithm::Es256 => Algorithm::ES256,
            SigningAlgorithm::Rs256 => Algorithm::RS256,
        });
        header.kid = self.key_id.clone();
        let claims = Claims {
            iss: client_id,
            sub: client_id,
            aud: audience,
            jti: random_token(16)?,
            iat: now.as_secs(),
            exp: (now + ASSERTION_LIFETIME).as_secs(),
        };
        jsonwebtoken::encode(&header, &claims, &self.key).map_err(|e| AuthError::Key {
            what: "client assertion signing key",
            source: Box::new(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    const RSA_PRIVATE: &[u8] = include_bytes!("../tests/fixtures/rsa_private.pem");
    const RSA_PUBLIC: &[u8] = include_bytes!("../tests/fixtures/rsa_public.pem");

    #[test]
    fn algorithms_go_by_their_jose_names() {
        for alg in [SigningAlgorithm::Es256, SigningAlgorithm::Rs256] {
            assert_eq!(SigningAlgorithm::from_name(alg.name()), Some(alg));
        }
        assert_eq!(SigningAlgorithm::Es256.name(), "ES256");
        assert_eq!(SigningAlgorithm::Rs256.name(), "RS256");
        // JOSE `alg` values are case-sensitive.
        assert_eq!(SigningAlgorithm::from_name("rs256"), None);
        assert_eq!(SigningAlgorithm::from_name("HS256"), None);
    }

    #[test]
    fn an_assertion_names_the_client_and_audience_for_a_minute() {
        let key = SigningKey::from_pem(SigningAlgorithm::Rs256, RSA_PRIVATE)
            .unwrap()
            .key_id("k1");
        assert_eq!(key.algorithm(), SigningAlgorithm::Rs256);
        // The key itself never shows.
        assert_eq!(
            format!("{key:?}"),
            r#"SigningKey { alg: Rs256, key_id: Some("k1"), .. }"#
        );
        let jwt = key.assertion("client-1", "https://as.example").unwrap();
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.alg, Algorithm::RS256);
        assert_eq!(header.kid.as_deref(), Some("k1"));
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_audience(&["https://as.example"]);
        let decoding = DecodingKey::from_rsa_pem(RSA_PUBLIC).unwrap();
        let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &decoding, &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
        assert_eq!(exp.unwrap() - iat.unwrap(), 60);
        let again = key.assertion("client-1", "https://as.example").unwrap();
        let again = jsonwebtoken::decode::<serde_json::Value>(&again, &decoding, &validation)
            .unwrap()
            .claims;
        assert_ne!(again["jti"], claims["jti"]);
        // A key that parses but cannot sign as asked fails at once.
        assert!(matches!(
            SigningKey::from_pem(SigningAlgorithm::Es256, RSA_PRIVATE),
            Err(AuthError::Key { .. })
        ));
    }
}
