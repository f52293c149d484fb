//! The metadata documents discovery reads: Protected Resource Metadata (RFC
//! 9728) and authorization server metadata (RFC 8414, OpenID Connect
//! Discovery). Members not named here are kept in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier.
    pub resource: String,
    /// Issuer identifiers of the authorization servers for this resource.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource knows (the minimal set for basic use, per MCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Whether the resource requires DPoP-bound tokens (RFC 9449 §5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
    /// Every other member, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 §2), also read from
/// OpenID Connect Discovery documents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// The authorization endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The dynamic client registration endpoint (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types the server supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods of the token endpoint; absent means
    /// `client_secret_basic` (RFC 8414 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Signing algorithms for `private_key_jwt` assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods; absent means no PKCE support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Whether Client ID Metadata Documents are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// DPoP proof algorithms the server accepts (RFC 9449 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Every other member, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// Whether `scopes_supported` lists `scope`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }

    /// Whether PKCE with `S256` is advertised.
    pub fn supports_pkce_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"))
    }

    /// Whether the token endpoint accepts client authentication `method`
    /// (an absent list means `client_secret_basic` only).
    pub fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// Whether DPoP proofs with ES256 are accepted.
    pub fn supports_dpop_es256(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|a| a.iter().any(|x| x == "ES256"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_members_are_kept() {
        let doc = r#"{"issuer":"https://as","token_endpoint":"https://as/t","x_custom":{"a":1},
                      "code_challenge_methods_supported":["S256"]}"#;
        let m: AuthorizationServerMetadata = serde_json::from_str(doc).unwrap();
        assert_eq!(m.extra["x_custom"]["a"], 1);
        assert!(m.supports_pkce_s256());
        assert!(m.supports_auth_method("client_secret_basic"));
        assert!(!m.supports_auth_method("none"));
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["x_custom"]["a"], 1);
        let prm: ProtectedResourceMetadata =
            serde_json::from_str(r#"{"resource":"https://r","authorization_servers":["https://as"],"bearer_methods_supported":["header"]}"#)
                .unwrap();
        assert_eq!(prm.extra["bearer_methods_supported"][0], "header");
    }
}
