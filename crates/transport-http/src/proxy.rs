//! Which requests go through a proxy.

use std::net::IpAddr;

use http::Uri;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};

/// The proxy rules of one [`HttpClient`](crate::HttpClient): a matcher (from
/// the environment or explicit), and whether loopback destinations bypass it.
///
/// Proxies taken from the environment never see loopback destinations
/// (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`): a proxy on another host
/// cannot reach this machine's loopback, and a local MCP server is the common
/// case (Go's `ProxyFromEnvironment` does the same). An explicit proxy applies
/// to every destination its `no_proxy` list does not exempt.
#[derive(Debug)]
pub(crate) struct ProxyRules {
    matcher: Matcher,
    bypass_loopback: bool,
}

impl ProxyRules {
    /// Rules from the environment: loopback destinations bypass them.
    pub(crate) fn from_env() -> Self {
        Self::new(Matcher::from_env(), true)
    }

    pub(crate) fn new(matcher: Matcher, bypass_loopback: bool) -> Self {
        Self {
            matcher,
            bypass_loopback,
        }
    }

    /// The proxy for `dst`, if it goes through one.
    pub(crate) fn intercept(&self, dst: &Uri) -> Option<Intercept> {
        if self.bypass_loopback && dst.host().is_some_and(is_loopback) {
            return None;
        }
        self.matcher.intercept(dst)
    }
}

/// True for a host name or address that means this machine.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<IpAddr>() {
        return ip.is_loopback();
    }
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(bypass_loopback: bool) -> ProxyRules {
        let matcher = Matcher::builder()
            .all("http://proxy.example:3128".to_owned())
            .build();
        ProxyRules::new(matcher, bypass_loopback)
    }

    fn proxied(rules: &ProxyRules, url: &str) -> bool {
        rules.intercept(&url.parse().unwrap()).is_some()
    }

    #[test]
    fn loopback_destinations_bypass_environment_proxies() {
        let env = rules(true);
        for url in [
            "http://localhost:3000/mcp",
            "http://LOCALHOST./mcp",
            "http://mcp.localhost/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://127.1.2.3/mcp",
            "http://[::1]:8080/mcp",
            "https://localhost/mcp",
        ] {
            assert!(!proxied(&env, url), "{url} went through the proxy");
        }
        for url in [
            "http://example.com/mcp",
            "https://10.0.0.1/mcp",
            "http://localhost.example.com/mcp",
            "http://[::2]/mcp",
        ] {
            assert!(proxied(&env, url), "{url} bypassed the proxy");
        }
    }

    #[test]
    fn an_explicit_proxy_also_applies_to_loopback() {
        assert!(proxied(&rules(false), "http://127.0.0.1:8080/mcp"));
        assert!(proxied(&rules(false), "http://localhost/mcp"));
    }
}
