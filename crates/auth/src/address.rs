//! The address policy for URLs learned from a server: metadata documents,
//! registration and token endpoints named by a server must not make the
//! client reach a loopback, private, link-local or unspecified address (a
//! hostile MCP server could otherwise point it at a cloud metadata service
//! or at a port on the user's own machine). The policy holds unless the MCP
//! server is itself on such an address, or the user allows it with
//! [`OAuthConfig::allow_private_addresses`](crate::OAuthConfig::allow_private_addresses).
//!
//! An address written in the URL is checked here, before anything is sent.
//! A name is checked by the [`HttpFetch`](crate::HttpFetch) that resolves
//! it: the requests carry the [`PublicAddressesOnly`] extension, and the
//! fetch must connect only to addresses that pass
//! [`PublicAddressesOnly::check`], from the one lookup it makes.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The setting that lifts the policy, as error messages name it.
pub const ALLOW_SETTING: &str = "OAuthConfig::allow_private_addresses";

/// Why an address is not for URLs learned from a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressKind {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, the shared
    /// `100.64.0.0/10`, and IPv6 unique local `fc00::/7`.
    Private,
    /// `169.254.0.0/16` (where cloud metadata services answer), `fe80::/10`.
    LinkLocal,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressKind::Loopback => "loopback",
            AddressKind::Private => "private",
            AddressKind::LinkLocal => "link-local",
            AddressKind::Unspecified => "unspecified",
        })
    }
}

impl AddressKind {
    /// The kind of `ip` when it is not a public address; `None` when it
    /// is. An IPv4-mapped IPv6 address is judged as its IPv4 address.
    pub fn of(ip: IpAddr) -> Option<AddressKind> {
        match ip {
            IpAddr::V4(v4) => of_v4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => of_v4(v4),
                None => of_v6(v6),
            },
        }
    }
}

fn of_v4(ip: Ipv4Addr) -> Option<AddressKind> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some(AddressKind::Loopback)
    } else if a == 0 {
        Some(AddressKind::Unspecified)
    } else if ip.is_private() || (a == 100 && (b & 0xc0) == 64) {
        Some(AddressKind::Private)
    } else if ip.is_link_local() {
        Some(AddressKind::LinkLocal)
    } else {
        None
    }
}

fn of_v6(ip: Ipv6Addr) -> Option<AddressKind> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some(AddressKind::Loopback)
    } else if ip.is_unspecified() {
        Some(AddressKind::Unspecified)
    } else if first & 0xfe00 == 0xfc00 {
        Some(AddressKind::Private)
    } else if first & 0xffc0 == 0xfe80 {
        Some(AddressKind::LinkLocal)
    } else {
        None
    }
}

/// A request extension: the request is for a URL learned from a server,
/// and may reach public addresses only. An [`HttpFetch`](crate::HttpFetch)
/// that resolves names checks every address it would connect to with
/// [`check`](Self::check), and connects only to those that pass, from the
/// same lookup (a second lookup could answer differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicAddressesOnly;

impl PublicAddressesOnly {
    /// `Ok` when `address`, which `host` resolved to, is public.
    pub fn check(&self, host: &str, address: IpAddr) -> Result<(), BlockedAddress> {
        match AddressKind::of(address) {
            None => Ok(()),
            Some(kind) => Err(BlockedAddress {
                host: host.to_owned(),
                address,
                kind,
            }),
        }
    }
}

/// A URL learned from a server leads to an address the policy refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{host} is at {address}, a {kind} address, which a URL learned from a server may not reach ({ALLOW_SETTING} allows it)"
)]
pub struct BlockedAddress {
    /// The host of the URL.
    pub host: String,
    /// The address refused.
    pub address: IpAddr,
    /// Why it is refused.
    pub kind: AddressKind,
}

/// The address of `host` (a URI host, IPv6 in brackets) when it is written
/// as an address, or a `localhost` name (RFC 6761: always loopback).
pub(crate) fn literal_address(host: &str) -> Option<IpAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(ip);
    }
    let name = bare.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost")).then_some(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// Whether the MCP server at `host` is itself on an address the policy
/// refuses (then the servers it names may be too: a local deployment).
pub(crate) fn is_non_public_host(host: &str) -> bool {
    literal_address(host).is_some_and(|ip| AddressKind::of(ip).is_some())
}

/// The [`BlockedAddress`] in `e`'s chain of causes, if any.
pub(crate) fn blocked_in<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a BlockedAddress> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(b) = err.downcast_ref::<BlockedAddress>() {
            return Some(b);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<AddressKind> {
        AddressKind::of(s.parse().unwrap())
    }

    #[test]
    fn non_public_ranges_are_named_and_public_ones_pass() {
        use AddressKind::*;
        for (ip, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("100.127.255.255", Some(Private)),
            ("fd00::1", Some(Private)),
            ("fc00::1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("172.15.255.255", None),
            ("100.128.0.1", None),
            ("100.63.255.255", None),
            ("169.253.0.1", None),
            ("11.0.0.1", None),
            ("2001:db8::1", None),
            ("2606:4700::1111", None),
            ("fec0::1", None),
            ("fbff::1", None),
        ] {
            assert_eq!(kind(ip), want, "{ip}");
        }
    }

    #[test]
    fn hosts_written_as_addresses_or_localhost_are_read_without_a_lookup() {
        assert_eq!(literal_address("[::1]"), Some("::1".parse().unwrap()));
        assert_eq!(
            literal_address("169.254.169.254"),
            Some("169.254.169.254".parse().unwrap())
        );
        assert!(literal_address("LocalHost.").is_some());
        assert!(literal_address("app.localhost").is_some());
        assert_eq!(literal_address("example.com"), None);
        assert_eq!(literal_address("localhost.example.com"), None);
        assert!(is_non_public_host("10.0.0.5"));
        assert!(!is_non_public_host("203.0.113.9"));
        assert!(!is_non_public_host("mcp.example.com"));
    }

    #[test]
    fn a_refusal_names_the_address_and_the_setting() {
        let e = PublicAddressesOnly
            .check("metadata.internal", "169.254.169.254".parse().unwrap())
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("169.254.169.254"), "{text}");
        assert!(text.contains("link-local"), "{text}");
        assert!(text.contains(ALLOW_SETTING), "{text}");
        assert!(
            PublicAddressesOnly
                .check("example.com", "93.184.216.34".parse().unwrap())
                .is_ok()
        );
        let wrapped = crate::FetchError::new(crate::FetchErrorKind::Connect, e.clone());
        assert_eq!(blocked_in(&wrapped), Some(&e));
    }
}
