//! Discovery, in the order the MCP specification gives: the Protected
//! Resource Metadata (from `resource_metadata`, else the path-suffixed
//! well-known URL, else the root one), then the authorization server's
//! metadata (RFC 8414 and OpenID Connect well-known URLs), each validated
//! before use. Every URL tried is recorded for the error message.

use bytes::Bytes;
use http::Response;
use url::Url;

use crate::error::{Attempt, AttemptOutcome, Attempts, AuthError, DiscoveryStage};
use crate::fetch::Fetcher;
use crate::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use crate::url_rules::{
    authorization_server_metadata_urls, canonical_resource, require_secure, resource_covers,
    resource_metadata_urls, secure_url,
};

/// What the resource told us about itself.
#[derive(Debug, Clone)]
pub(crate) struct ResourceInfo {
    /// The resource identifier to send as RFC 8707 `resource`.
    pub(crate) resource: String,
    /// The authorization servers it names (one, the server's origin, for a
    /// 2025-03-26 server without metadata).
    pub(crate) authorization_servers: Vec<String>,
    /// `scopes_supported`.
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// Whether there was no metadata (the 2025-03-26 arrangement, where the
    /// server's origin is its authorization server).
    pub(crate) legacy: bool,
}

/// An authorization server, as discovered.
#[derive(Debug, Clone)]
pub(crate) struct AuthServer {
    /// Its metadata (made up from the default endpoints when `defaulted`).
    pub(crate) metadata: AuthorizationServerMetadata,
    /// Whether no metadata was found and the 2025-03-26 default endpoints
    /// (`/authorize`, `/token`, `/register` at the origin) are used.
    pub(crate) defaulted: bool,
}

/// What one discovery GET gave.
enum Got {
    Document(Response<Bytes>),
    Missed,
}

async fn get(fetcher: &Fetcher, url: &str, attempts: &mut Vec<Attempt>) -> Result<Got, AuthError> {
    let req = Fetcher::get(url)?;
    match fetcher.send_raw(req).await {
        Ok(resp) if resp.status().is_success() => Ok(Got::Document(resp)),
        Ok(resp) => {
            attempts.push(Attempt {
                url: url.to_owned(),
                outcome: AttemptOutcome::Status(resp.status().as_u16()),
            });
            Ok(Got::Missed)
        }
        Err(e) if crate::address::blocked_in(&e).is_some() => Err(AuthError::fetch(url, e)),
        Err(e) => {
            let mut why = e.to_string();
            if let Some(src) = std::error::Error::source(&e) {
                why.push_str(": ");
                why.push_str(&src.to_string());
            }
            attempts.push(Attempt {
                url: url.to_owned(),
                outcome: AttemptOutcome::Failed(why),
            });
            Ok(Got::Missed)
        }
    }
}

fn rejected(attempts: &mut Vec<Attempt>, url: &str, why: impl Into<String>) {
    attempts.push(Attempt {
        url: url.to_owned(),
        outcome: AttemptOutcome::Rejected(why.into()),
    });
}

/// Finds and validates the Protected Resource Metadata of the MCP server at
/// `server`. `hint` is the challenge's `resource_metadata`.
pub(crate) async fn discover_resource(
    fetcher: &Fetcher,
    server: &Url,
    hint: Option<&str>,
) -> Result<ResourceInfo, AuthError> {
    let mut urls = Vec::new();
    if let Some(h) = hint {
        urls.push(h.to_owned());
    }
    for u in resource_metadata_urls(server) {
        if !urls.contains(&u) {
            urls.push(u);
        }
    }
    let mut attempts = Vec::new();
    for url in &urls {
        if let Err(e) = secure_url("protected resource metadata URL", url) {
            rejected(&mut attempts, url, e.to_string());
            continue;
        }
        let Got::Document(resp) = get(fetcher, url, &mut attempts).await? else {
            continue;
        };
        let prm: ProtectedResourceMetadata = match serde_json::from_slice(resp.body()) {
            Ok(m) => m,
            Err(e) => {
                rejected(
                    &mut attempts,
                    url,
                    format!("not protected resource metadata ({e})"),
                );
                continue;
            }
        };
        // A document for another resource must not be used at all (RFC 9728
        // §3.3): stop here rather than look further.
        if !resource_covers(&prm.resource, server) {
            return Err(AuthError::ResourceMismatch {
                server: server.as_str().to_owned(),
                resource: prm.resource,
            });
        }
        if prm.authorization_servers.is_empty() {
            rejected(&mut attempts, url, "no authorization_servers");
            continue;
        }
        tracing::debug!(url, resource = %prm.resource, "protected resource metadata found");
        return Ok(ResourceInfo {
            resource: prm.resource,
            authorization_servers: prm.authorization_servers,
            scopes_supported: prm.scopes_supported,
            legacy: false,
        });
    }
    // A server that answers but publishes no metadata is a 2025-03-26
    // server: its origin is its authorization server. A server we could not
    // reach is an error.
    let answered = !attempts.is_empty()
        && attempts.iter().all(|a| {
            matches!(
                a.outcome,
                AttemptOutcome::Status(404 | 405 | 400 | 401 | 403 | 410)
            )
        });
    if answered {
        tracing::debug!(server = %server, "no protected resource metadata; using the server's origin as its authorization server");
        return Ok(ResourceInfo {
            resource: canonical_resource(server),
            authorization_servers: vec![server.origin().ascii_serialization()],
            scopes_supported: None,
            legacy: true,
        });
    }
    Err(AuthError::Discovery {
        stage: DiscoveryStage::ResourceMetadata,
        attempts: Attempts(attempts),
    })
}

/// Finds and validates the metadata of the authorization server `issuer`.
/// `legacy` allows the 2025-03-26 default endpoints when none is found.
pub(crate) async fn discover_issuer(
    fetcher: &Fetcher,
    issuer: &str,
    legacy: bool,
) -> Result<AuthServer, AuthError> {
    let issuer_url = secure_url("authorization server", issuer)?;
    let mut attempts = Vec::new();
    for url in authorization_server_metadata_urls(&issuer_url) {
        let Got::Document(resp) = get(fetcher, &url, &mut attempts).await? else {
            continue;
        };
        let metadata: AuthorizationServerMetadata = match serde_json::from_slice(resp.body()) {
            Ok(m) => m,
            Err(e) => {
                rejected(
                    &mut attempts,
                    &url,
                    format!("not authorization server metadata ({e})"),
                );
                continue;
            }
        };
        // RFC 8414 §3.3: the issuer must be identical to the one the URL was
        // built from, or the document must not be used. A 2025-03-26 server
        // (no resource metadata) named no issuer: the origin is our guess,
        // and its own metadata, from its own origin, may name an issuer on
        // that origin with a path; that one is then the issuer.
        if metadata.issuer != issuer {
            let same_origin_path = legacy
                && url::Url::parse(&metadata.issuer)
                    .is_ok_and(|found| crate::url_rules::same_origin(&found, &issuer_url));
            if !same_origin_path {
                return Err(AuthError::IssuerMismatch {
                    expected: issuer.to_owned(),
                    found: metadata.issuer,
                });
            }
            tracing::debug!(issuer = %metadata.issuer, "a 2025-03-26 server names its own issuer");
        }
        for (what, endpoint) in [
            ("authorization endpoint", &metadata.authorization_endpoint),
            ("token endpoint", &metadata.token_endpoint),
            ("registration endpoint", &metadata.registration_endpoint),
        ] {
            if let Some(e) = endpoint {
                secure_url(what, e)?;
            }
        }
        // The endpoints the client itself will reach (the authorization
        // endpoint is the browser's).
        for endpoint in [&metadata.token_endpoint, &metadata.registration_endpoint]
            .into_iter()
            .flatten()
        {
            fetcher.check_learned(endpoint)?;
        }
        tracing::debug!(url, issuer, "authorization server metadata found");
        return Ok(AuthServer {
            metadata,
            defaulted: false,
        });
    }
    if legacy {
        let origin = issuer_url.origin().ascii_serialization();
        require_secure("authorization server", &issuer_url)?;
        tracing::debug!(
            issuer,
            "no authorization server metadata; using the 2025-03-26 default endpoints"
        );
        return Ok(AuthServer {
            metadata: AuthorizationServerMetadata {
                issuer: issuer.to_owned(),
                authorization_endpoint: Some(format!("{origin}/authorize")),
                token_endpoint: Some(format!("{origin}/token")),
                registration_endpoint: Some(format!("{origin}/register")),
                ..AuthorizationServerMetadata::default()
            },
            defaulted: true,
        });
    }
    Err(AuthError::Discovery {
        stage: DiscoveryStage::AuthorizationServerMetadata,
        attempts: Attempts(attempts),
    })
}

/// What went wrong with a server that publishes no metadata, said plainly.
///
/// The MCP revisions since 2025-06-18 send every client through the
/// Protected Resource Metadata and the authorization server's own metadata;
/// only the 2025-03-26 revision had clients guess `/register`, `/authorize`
/// and `/token` at the server's origin when both are missing, and servers
/// of that revision still exist (the conformance suite's endpoint-fallback
/// scenario), so the guess stays. Most servers that answer 401 with no
/// metadata at all, though, want a token given beforehand (an API key, a
/// personal access token) and have no OAuth. So, for such a server only
/// ([`AuthServer::defaulted`]), a refusal of the guessed registration that
/// means "no such endpoint" (401, 403, 404, 405 or 501), or no person to
/// try the guessed endpoints with, becomes [`AuthError::TokenRequired`],
/// which callers can recognise, rather than a refused registration at an
/// endpoint the user never heard of. `resource` names the MCP server.
pub(crate) fn explain_guess(server: &AuthServer, resource: &str, error: AuthError) -> AuthError {
    let settles_it = matches!(
        error,
        AuthError::RegistrationRefused {
            status: 401 | 403 | 404 | 405 | 501,
            ..
        } | AuthError::InteractionRequired
    );
    if server.defaulted && settles_it {
        return AuthError::TokenRequired {
            server: resource.to_owned(),
            source: Box::new(error),
        };
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(defaulted: bool) -> AuthServer {
        AuthServer {
            metadata: AuthorizationServerMetadata::default(),
            defaulted,
        }
    }

    fn refused(status: u16) -> AuthError {
        AuthError::RegistrationRefused {
            endpoint: "http://127.0.0.1:9/register".into(),
            status,
            error: None,
        }
    }

    #[test]
    fn a_missing_guessed_registration_endpoint_means_the_server_wants_a_token() {
        let e = explain_guess(&server(true), "http://127.0.0.1:9/mcp", refused(404));
        assert!(matches!(e, AuthError::TokenRequired { .. }), "{e:?}");
        assert!(e.to_string().starts_with("http://127.0.0.1:9/mcp "), "{e}");
        // The refusal stays the cause.
        let cause = std::error::Error::source(&e).unwrap().to_string();
        assert!(cause.contains("HTTP 404"), "{cause}");
    }

    #[test]
    fn a_refusal_at_a_published_or_working_endpoint_stays_a_refusal() {
        let url = "http://127.0.0.1:9/mcp";
        let e = explain_guess(&server(false), url, refused(404));
        assert!(matches!(e, AuthError::RegistrationRefused { .. }), "{e:?}");
        // 400 is a registration endpoint that read the request and refused it.
        let e = explain_guess(&server(true), url, refused(400));
        assert!(matches!(e, AuthError::RegistrationRefused { .. }), "{e:?}");
        let e = explain_guess(&server(false), url, AuthError::InteractionRequired);
        assert!(matches!(e, AuthError::InteractionRequired), "{e:?}");
    }

    #[test]
    fn no_person_to_try_the_guessed_endpoints_with_means_the_server_wants_a_token() {
        let e = explain_guess(
            &server(true),
            "http://127.0.0.1:9/mcp",
            AuthError::InteractionRequired,
        );
        assert!(matches!(e, AuthError::TokenRequired { .. }), "{e:?}");
    }
}
