//! Name resolution of the connector, with the address policy of an
//! authorizer's requests to URLs learned from a server
//! ([`PublicAddressesOnly`]): the name is looked up once, the addresses
//! the policy refuses are dropped, and the connector connects only to
//! those left, so the address checked is the address connected to (a
//! second lookup could answer differently: DNS rebinding).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use mcpwire_auth::PublicAddressesOnly;

use crate::error::BoxError;

/// The system resolver, with or without the policy.
#[derive(Clone)]
pub(crate) struct Resolver {
    gai: GaiResolver,
    public_only: bool,
}

impl Resolver {
    /// Any address the system resolver gives.
    pub(crate) fn any() -> Self {
        Self {
            gai: GaiResolver::new(),
            public_only: false,
        }
    }

    /// Public addresses only.
    pub(crate) fn public_only() -> Self {
        Self {
            gai: GaiResolver::new(),
            public_only: true,
        }
    }
}

type Addrs = std::vec::IntoIter<SocketAddr>;

impl tower_service::Service<Name> for Resolver {
    type Response = Addrs;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let mut gai = self.gai.clone();
        let public_only = self.public_only;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = gai.call(name).await?.collect();
            if !public_only {
                return Ok(found.into_iter());
            }
            keep_public(&host, found).map(Vec::into_iter)
        })
    }
}

/// The public addresses among `found`; the policy's refusal of the first
/// address when none is public.
fn keep_public(host: &str, found: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, BoxError> {
    let mut refused = None;
    let kept: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| match PublicAddressesOnly.check(host, a.ip()) {
            Ok(()) => true,
            Err(e) => {
                refused.get_or_insert(e);
                false
            }
        })
        .collect();
    match (kept.is_empty(), refused) {
        (true, Some(e)) => Err(Box::new(e)),
        _ => Ok(kept),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter()
            .map(|a| SocketAddr::new(a.parse().unwrap(), 443))
            .collect()
    }

    #[test]
    fn only_public_addresses_are_kept_and_none_left_is_the_policys_refusal() {
        let kept = keep_public(
            "mixed.example",
            addrs(&["10.0.0.1", "93.184.216.34", "::1", "2606:4700::1111"]),
        )
        .unwrap();
        assert_eq!(kept, addrs(&["93.184.216.34", "2606:4700::1111"]));
        let err = keep_public("meta.example", addrs(&["169.254.169.254", "10.0.0.1"])).unwrap_err();
        let blocked = err.downcast_ref::<mcpwire_auth::BlockedAddress>().unwrap();
        assert_eq!(blocked.address.to_string(), "169.254.169.254");
        assert_eq!(blocked.host, "meta.example");
    }
}
