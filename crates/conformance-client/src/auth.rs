//! How the client authorizes in each authorization scenario, from the
//! scenario's name and its `MCP_CONFORMANCE_CONTEXT` (pre-registered and
//! client-credentials secrets, keys, tokens). Everything else is the
//! library's: discovery, registration, the flows, step-up, DPoP.

use mcpwire::HttpClient;
use mcpwire::auth::{
    AssertionSource, Auth, EnterpriseIdp, FollowLocation, OAuthConfig, Secret, SigningAlgorithm,
    SigningKey,
};
use serde_json::Value;

/// The redirect URI the client registers. Nothing listens there: the
/// suite's authorization servers approve at once and redirect, and the
/// client reads the code from the redirect's `Location` (as a browser
/// would follow it).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The client's Client ID Metadata Document URL, which the suite expects
/// where the server accepts such documents.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The authorization setting for scenario `name`.
pub(crate) fn for_scenario(
    name: &str,
    context: Option<&str>,
    http: &HttpClient,
) -> Result<Auth, String> {
    let ctx: Value = match context {
        Some(c) => serde_json::from_str(c).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT: {e}"))?,
        None => Value::Null,
    };
    let field = |key: &str| -> Result<String, String> {
        ctx.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no {key}"))
    };
    let person = || {
        OAuthConfig::new()
            .redirect(FollowLocation::new(http.fetcher(), REDIRECT_URI))
            .client_metadata_url(CLIENT_METADATA_URL)
            .client_name("mcpwire-conformance")
    };
    let config = match name {
        "auth/client-credentials-basic" => OAuthConfig::client_credentials(
            field("client_id")?,
            Secret::new(field("client_secret")?),
        ),
        "auth/client-credentials-jwt" => {
            let alg = ctx
                .get("signing_algorithm")
                .and_then(Value::as_str)
                .unwrap_or("ES256");
            let alg = SigningAlgorithm::from_name(alg)
                .ok_or_else(|| format!("unsupported signing algorithm {alg}"))?;
            let key = SigningKey::from_pem(alg, field("private_key_pem")?.as_bytes())
                .map_err(|e| e.to_string())?;
            OAuthConfig::private_key_jwt(field("client_id")?, key)
        }
        "auth/pre-registration" => person().client(
            field("client_id")?,
            Some(Secret::new(field("client_secret")?)),
        ),
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow" => {
            let idp = EnterpriseIdp::new(
                field("idp_token_endpoint")?,
                field("idp_client_id")?,
                AssertionSource::Value(Secret::new(field("idp_id_token")?)),
            );
            OAuthConfig::enterprise_managed(
                field("client_id")?,
                Some(Secret::new(field("client_secret")?)),
                idp,
            )
        }
        "auth/wif-jwt-bearer" => OAuthConfig::jwt_bearer(
            Some(field("client_id")?),
            AssertionSource::Value(Secret::new(field("valid_jwt")?)),
        ),
        _ => person(),
    };
    Ok(Auth::oauth(config))
}
