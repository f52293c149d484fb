//! URL rules of the flows: which URLs may carry authorization traffic, when
//! two URLs share an origin, what a server's canonical resource URI is, and
//! where the well-known metadata documents are.

use std::net::IpAddr;

use url::Url;

use crate::error::AuthError;

/// Whether `url`'s host is a loopback address or a `localhost` name.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.');
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        None => false,
    }
}

/// Parses `raw` and requires `https`, or `http` on a loopback address
/// (OAuth 2.1 §1.5).
pub(crate) fn secure_url(what: &'static str, raw: &str) -> Result<Url, AuthError> {
    let url = Url::parse(raw).map_err(|_| AuthError::InsecureUrl {
        what,
        url: raw.to_owned(),
    })?;
    require_secure(what, &url)?;
    Ok(url)
}

/// Requires `https`, or `http` on a loopback address.
pub(crate) fn require_secure(what: &'static str, url: &Url) -> Result<(), AuthError> {
    let ok = match url.scheme() {
        "https" => url.host().is_some(),
        "http" => is_loopback(url),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(AuthError::InsecureUrl {
            what,
            url: url.as_str().to_owned(),
        })
    }
}

/// Whether `a` and `b` have the same scheme, host and port (the default port
/// of the scheme when none is written).
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `http::Uri` form of [`same_origin`].
pub(crate) fn same_origin_uri(a: &Url, b: &http::Uri) -> bool {
    let Some(scheme) = b.scheme_str() else {
        return false;
    };
    let Some(host) = b.host() else { return false };
    let default = match scheme {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let a_host = match a.host() {
        Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return false,
    };
    let b_host = match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    };
    a.scheme().eq_ignore_ascii_case(scheme)
        && a_host == b_host
        && a.port_or_known_default() == b.port_u16().or(default)
}

/// The canonical resource URI of the MCP server at `server` (RFC 8707 §2, as
/// the MCP specification profiles it): lowercase scheme and host, no
/// fragment, no query, and no trailing slash on an empty path.
pub(crate) fn canonical_resource(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    u.set_query(None);
    let s = u.as_str();
    if u.path() == "/" {
        s.trim_end_matches('/').to_owned()
    } else {
        s.to_owned()
    }
}

/// Whether the metadata's `resource` identifies the server at `server`: the
/// same origin, and its path is the server's path or a parent of it (RFC
/// 9728 §3.3, allowing the root metadata a server publishes for all its
/// paths). Scheme and host compare case-insensitively, default ports are
/// implied, a trailing slash is ignored.
pub(crate) fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.fragment().is_some() || !same_origin(&r, server) {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    rp.is_empty()
        || rp == sp
        || sp
            .strip_prefix(rp)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The Protected Resource Metadata URLs to try for `server`, in order: the
/// path-suffixed well-known URL (when the server has a path), then the root.
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<String> {
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    let mut urls = Vec::with_capacity(2);
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls
}

/// The authorization server metadata URLs to try for `issuer`, in the order
/// the MCP specification gives: with a path, RFC 8414 path insertion, OpenID
/// Connect path insertion, OpenID Connect path appending; without one,
/// `oauth-authorization-server` then `openid-configuration`.
pub(crate) fn authorization_server_metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// `scheme://authority/path` of `uri`: the `htu` of a DPoP proof (RFC 9449
/// §4.2: no query, no fragment).
pub(crate) fn htu(uri: &http::Uri) -> String {
    crate::fetch::without_query(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_https_or_loopback_is_secure() {
        for ok in [
            "https://as.example/token",
            "http://127.0.0.1:9/x",
            "http://127.9.9.9/x",
            "http://[::1]:8080/x",
            "http://localhost:3000/cb",
            "http://app.localhost/x",
        ] {
            assert!(require_secure("token endpoint", &u(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example/token",
            "http://10.0.0.1/x",
            "ftp://as.example/x",
            "http://localhost.evil.com/x",
        ] {
            assert!(
                matches!(
                    require_secure("token endpoint", &u(bad)),
                    Err(AuthError::InsecureUrl { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn canonical_resource_drops_what_does_not_identify_the_server() {
        assert_eq!(
            canonical_resource(&u("HTTPS://MCP.Example.com:443/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_resource(&u("https://mcp.example.com/mcp?x=1#f")),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_resource(&u("http://localhost:3000/mcp")),
            "http://localhost:3000/mcp"
        );
    }

    #[test]
    fn resource_must_be_the_server_or_a_parent_on_the_same_origin() {
        let server = u("https://mcp.example.com/public/mcp");
        assert!(resource_covers(
            "https://mcp.example.com/public/mcp",
            &server
        ));
        assert!(resource_covers(
            "https://MCP.example.com:443/public/mcp/",
            &server
        ));
        assert!(resource_covers("https://mcp.example.com/public", &server));
        assert!(resource_covers("https://mcp.example.com", &server));
        assert!(!resource_covers("https://mcp.example.com/pub", &server));
        assert!(!resource_covers(
            "https://mcp.example.com/public/mcp/other",
            &server
        ));
        assert!(!resource_covers(
            "https://evil.example.com/public/mcp",
            &server
        ));
        assert!(!resource_covers(
            "http://mcp.example.com/public/mcp",
            &server
        ));
        assert!(!resource_covers(
            "https://mcp.example.com:8443/public/mcp",
            &server
        ));
        assert!(!resource_covers(
            "https://mcp.example.com/public/mcp#x",
            &server
        ));
        assert!(!resource_covers("not a url", &server));
    }

    #[test]
    fn well_known_urls_follow_the_specified_order() {
        assert_eq!(
            resource_metadata_urls(&u("https://ex.com/public/mcp?q=1")),
            [
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls(&u("https://ex.com/")),
            ["https://ex.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            authorization_server_metadata_urls(&u("https://auth.example.com/tenant1")),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls(&u("https://auth.example.com")),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let a = u("https://mcp.example.com/mcp");
        assert!(same_origin_uri(
            &a,
            &"https://MCP.example.com:443/other".parse().unwrap()
        ));
        assert!(!same_origin_uri(
            &a,
            &"https://mcp.example.com:444/mcp".parse().unwrap()
        ));
        assert!(!same_origin_uri(
            &a,
            &"http://mcp.example.com/mcp".parse().unwrap()
        ));
        assert!(!same_origin_uri(
            &a,
            &"https://evil.example.com/mcp".parse().unwrap()
        ));
        assert!(!same_origin_uri(&a, &"/relative".parse().unwrap()));
        // A port left out is the scheme's default, on either side.
        assert!(same_origin_uri(
            &a,
            &"https://mcp.example.com/other".parse().unwrap()
        ));
        let plain = u("http://127.0.0.1/mcp");
        assert!(same_origin_uri(
            &plain,
            &"http://127.0.0.1/x".parse().unwrap()
        ));
        assert!(same_origin_uri(
            &plain,
            &"http://127.0.0.1:80/x".parse().unwrap()
        ));
        assert!(!same_origin_uri(
            &plain,
            &"http://127.0.0.1:443/x".parse().unwrap()
        ));
        let v6 = u("http://[::1]:8080/mcp");
        assert!(same_origin_uri(
            &v6,
            &"http://[::1]:8080/x".parse().unwrap()
        ));
    }
}
