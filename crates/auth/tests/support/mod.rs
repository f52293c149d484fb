//! An in-process authorization server and protected resource for the tests,
//! reached through `HttpFetch` (no sockets, deterministic), checking what
//! the conformance suite's servers check: PKCE, state, `resource`, client
//! authentication, issuer, DPoP proofs and nonces. Every request is
//! recorded for the tests to assert on.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use jsonwebtoken::{Algorithm, DecodingKey};
use mcpwire_auth::{
    AuthError, AuthHeaders, AuthRound, Authorizer, Challenge, Challenged, FetchError,
    FollowLocation, HttpFetch, PublicAddressesOnly,
};
use serde_json::json;

mod keys;
mod verify;
mod world;

#[allow(unused_imports, reason = "not every test binary signs")]
pub use keys::*;
use world::{World, json_response, metadata};

pub const SERVER: &str = "https://mcp.test/mcp";
pub const RS_ORIGIN: &str = "https://mcp.test";
pub const AS1: &str = "https://as.test";
pub const AS2: &str = "https://as2.test";
pub const PRM_PATH_URL: &str = "https://mcp.test/.well-known/oauth-protected-resource/mcp";
pub const PRM_ROOT_URL: &str = "https://mcp.test/.well-known/oauth-protected-resource";
pub const REDIRECT: &str = "http://127.0.0.1:33418/callback";

/// What the authorization server puts in `iss` on its redirect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iss {
    Correct,
    Wrong,
    Omit,
    Normalized,
}

/// What a refresh answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refresh {
    /// No refresh tokens at all.
    None,
    /// A new refresh token on every refresh (rotation).
    Rotate,
    /// A refresh token on the first grant only; refreshes omit it.
    Omit,
}

#[derive(Clone)]
pub struct AsConfig {
    pub issuer: String,
    /// Where the metadata is served (full URLs).
    pub metadata_at: Vec<String>,
    /// The `issuer` the document claims (default: `issuer`).
    pub claimed_issuer: Option<String>,
    /// Prefix of the endpoints' paths.
    pub prefix: String,
    pub scopes_supported: Option<Vec<String>>,
    pub auth_methods: Option<Vec<String>>,
    pub pkce: bool,
    pub iss_supported: Option<bool>,
    pub iss: Iss,
    pub registration: bool,
    pub cimd: bool,
    pub dpop: bool,
    pub dpop_nonce: bool,
    pub refresh: Refresh,
    pub expires_in: u64,
    /// The method dynamic registration answers with (default: the one asked).
    pub registered_method: Option<String>,
    /// Issue a client secret on registration.
    pub registered_secret: bool,
    /// Leave `token_endpoint_auth_method` out of the registration answer
    /// (RFC 7591 §3.2.1 lets a server do so).
    pub omit_registered_method: bool,
    /// Pre-registered clients: id -> secret.
    pub clients: HashMap<String, String>,
    /// Public keys of `private_key_jwt` clients and workload issuers.
    pub assertion_keys: Vec<(Algorithm, DecodingKey)>,
    /// The token endpoint's answer is this status with `Location` to
    /// another origin (a redirect that must not be followed).
    pub token_redirect: Option<String>,
    /// Demand a fresh DPoP nonce on every token request, forever (a hostile
    /// server; the fake gives up after `ENDLESS_CAP` demands so that a
    /// client without a bound fails its test instead of hanging it).
    pub dpop_nonce_endless: bool,
    /// Endpoint URLs the metadata claims instead of the real ones, by
    /// metadata field (`token_endpoint`, ...).
    pub claimed_endpoints: HashMap<String, String>,
}

impl AsConfig {
    pub fn new(issuer: &str) -> Self {
        let url = url::Url::parse(issuer).unwrap();
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/').to_owned();
        let metadata_at = if path.is_empty() {
            vec![format!("{origin}/.well-known/oauth-authorization-server")]
        } else {
            vec![format!(
                "{origin}/.well-known/oauth-authorization-server{path}"
            )]
        };
        Self {
            issuer: issuer.to_owned(),
            metadata_at,
            claimed_issuer: None,
            prefix: path,
            scopes_supported: None,
            auth_methods: Some(vec!["none".into()]),
            pkce: true,
            iss_supported: Some(true),
            iss: Iss::Correct,
            registration: true,
            cimd: false,
            dpop: false,
            dpop_nonce: false,
            refresh: Refresh::Rotate,
            expires_in: 3600,
            registered_method: None,
            registered_secret: false,
            omit_registered_method: false,
            clients: HashMap::new(),
            assertion_keys: Vec::new(),
            token_redirect: None,
            dpop_nonce_endless: false,
            claimed_endpoints: HashMap::new(),
        }
    }

    fn origin(&self) -> String {
        url::Url::parse(&self.issuer)
            .unwrap()
            .origin()
            .ascii_serialization()
    }

    pub fn endpoint(&self, name: &str) -> String {
        format!("{}{}/{name}", self.origin(), self.prefix)
    }
}

#[derive(Clone, Debug)]
pub struct RsConfig {
    /// Where the PRM is served.
    pub prm_at: Vec<String>,
    /// `resource_metadata` in the challenge.
    pub prm_hint: Option<String>,
    pub resource: String,
    pub scopes_supported: Option<Vec<String>>,
    pub authorization_servers: Vec<String>,
    /// `scope` in the 401 challenge.
    pub challenge_scope: Option<String>,
    /// Scopes a request's body method needs; missing ones get a 403.
    pub needs: HashMap<String, Vec<String>>,
    /// Answer every authorized request with 403 insufficient_scope.
    pub always_403: Option<String>,
    pub dpop_nonce: bool,
    /// Demand a fresh DPoP nonce on every request, forever.
    pub dpop_nonce_endless: bool,
    /// Answer every request 401 `invalid_token`, whatever it carries.
    pub always_401: bool,
    /// The unauthenticated 401 carries this challenge instead of `Bearer`
    /// (a server behind a gateway that speaks Basic, say).
    pub other_challenge: Option<String>,
    /// The metadata URLs answer with a redirect to this URL.
    pub prm_redirect: Option<String>,
}

/// How many endless demands the fake makes before it gives up (far more
/// than any bounded client tries).
pub const ENDLESS_CAP: u64 = 50;

impl Default for RsConfig {
    fn default() -> Self {
        Self {
            prm_at: vec![PRM_PATH_URL.into()],
            prm_hint: Some(PRM_PATH_URL.into()),
            resource: SERVER.into(),
            scopes_supported: None,
            authorization_servers: vec![AS1.into()],
            challenge_scope: None,
            needs: HashMap::new(),
            always_403: None,
            dpop_nonce: false,
            dpop_nonce_endless: false,
            always_401: false,
            other_challenge: None,
            prm_redirect: None,
        }
    }
}

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Whether the request carried the address policy for URLs learned
    /// from a server (the fetch must then resolve and check the name).
    pub public_only: bool,
}

impl Seen {
    pub fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(&self.body)
            .into_owned()
            .collect()
    }

    pub fn query(&self) -> HashMap<String, String> {
        url::Url::parse(&self.url)
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect()
    }

    pub fn path(&self) -> String {
        url::Url::parse(&self.url).unwrap().path().to_owned()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }

    /// The client of a token request: from Basic auth, else the body.
    pub fn client_id(&self) -> Option<String> {
        if let Some(b) = self
            .header("authorization")
            .and_then(|a| a.strip_prefix("Basic ").map(str::to_owned))
        {
            let decoded = String::from_utf8(STANDARD.decode(b).unwrap()).unwrap();
            let id = decoded.split(':').next().unwrap();
            return Some(
                url::form_urlencoded::parse(format!("x={id}").as_bytes())
                    .next()
                    .unwrap()
                    .1
                    .into_owned(),
            );
        }
        self.form().get("client_id").cloned()
    }
}

#[derive(Clone)]
pub struct Fake {
    world: Arc<Mutex<World>>,
}

pub const AS_NONCE: &str = "as-nonce-1";
pub const RS_NONCE: &str = "rs-nonce-1";

impl Fake {
    pub fn new(rs: RsConfig, servers: Vec<AsConfig>) -> Self {
        Self {
            world: Arc::new(Mutex::new(World {
                servers,
                rs,
                ..World::default()
            })),
        }
    }

    /// The default arrangement: PRM at the path-suffixed URL and in the
    /// challenge, one authorization server at `AS1` with DCR and PKCE.
    pub fn standard() -> Self {
        Self::new(RsConfig::default(), vec![AsConfig::new(AS1)])
    }

    pub fn arc(&self) -> Arc<dyn HttpFetch> {
        Arc::new(self.clone())
    }

    pub fn with_rs(&self, f: impl FnOnce(&mut RsConfig)) {
        f(&mut self.world.lock().unwrap().rs)
    }

    pub fn with_as(&self, issuer: &str, f: impl FnOnce(&mut AsConfig)) {
        let mut w = self.world.lock().unwrap();
        f(w.servers
            .iter_mut()
            .find(|s| s.issuer == issuer)
            .expect("no such AS"))
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.world.lock().unwrap().seen.clone()
    }

    /// Requests whose URL starts with `prefix`.
    pub fn seen_at(&self, prefix: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.url.starts_with(prefix))
            .collect()
    }

    /// Requests to an endpoint path (`/authorize`, `/token`, ...) of any server.
    pub fn seen_path(&self, origin: &str, path: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.url.starts_with(origin) && s.path() == path)
            .collect()
    }

    /// Protocol violations the fake noticed (a wrong PKCE verifier, a
    /// missing resource, a bad proof...). Tests assert it is empty.
    pub fn failures(&self) -> Vec<String> {
        self.world.lock().unwrap().failures.clone()
    }

    /// Every access token stops working (as after expiry or revocation).
    pub fn revoke_access_tokens(&self) {
        for t in self.world.lock().unwrap().tokens.values_mut() {
            t.valid = false;
        }
    }

    /// Every refresh token stops working: refreshes are refused
    /// (`invalid_grant`).
    pub fn revoke_refresh_tokens(&self) {
        self.world.lock().unwrap().refresh.clear();
    }

    /// Requests to URLs starting with `prefix` fail to connect.
    pub fn unreachable(&self, prefix: &str) {
        self.world.lock().unwrap().unreachable.push(prefix.into());
    }

    /// Undoes [`Fake::unreachable`] for `prefix`.
    pub fn reachable(&self, prefix: &str) {
        self.world
            .lock()
            .unwrap()
            .unreachable
            .retain(|p| p != prefix);
    }

    pub fn rs_jtis(&self) -> Vec<String> {
        self.world.lock().unwrap().rs_jtis.clone()
    }

    /// The authorization redirect step the tests use: the fake's
    /// authorization endpoint approves at once.
    pub fn redirect(&self) -> FollowLocation {
        FollowLocation::new(self.arc(), REDIRECT)
    }

    /// Sends an MCP request (a POST with `{"method": method}`) the way the
    /// HTTP transport will: headers from the authorizer, and the challenge
    /// loop. Returns the final status.
    pub async fn call(&self, auth: &dyn Authorizer, method: &str) -> Result<StatusCode, AuthError> {
        self.call_at(auth, SERVER, method).await
    }

    pub async fn call_at(
        &self,
        auth: &dyn Authorizer,
        url: &str,
        method: &str,
    ) -> Result<StatusCode, AuthError> {
        self.call_in_round(auth, url, method, &mut AuthRound::default())
            .await
    }

    /// [`Fake::call_at`] in a round the caller keeps: a test can challenge
    /// the authorizer by hand first, then let the request go on.
    pub async fn call_in_round(
        &self,
        auth: &dyn Authorizer,
        url: &str,
        method: &str,
        round: &mut AuthRound,
    ) -> Result<StatusCode, AuthError> {
        let uri: http::Uri = url.parse().unwrap();
        loop {
            let sent: AuthHeaders = auth.headers(&Method::POST, &uri).await?;
            let mut req = Request::post(uri.clone())
                .body(Bytes::from(
                    json!({"jsonrpc":"2.0","id":1,"method":method}).to_string(),
                ))
                .unwrap();
            sent.apply(req.headers_mut());
            // The resource answers after a yield, as a real one answers
            // after a round trip: concurrent calls interleave here.
            tokio::task::yield_now().await;
            let resp = self.handle(req);
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let challenges = Challenge::parse_all(
                    resp.headers()
                        .get_all("www-authenticate")
                        .iter()
                        .map(|v| v.as_bytes()),
                );
                let nonce = resp
                    .headers()
                    .get("dpop-nonce")
                    .map(|v| v.to_str().unwrap().to_owned());
                auth.challenged(
                    Challenged::new(
                        status,
                        &challenges,
                        nonce.as_deref(),
                        &Method::POST,
                        &uri,
                        &sent,
                    ),
                    round,
                )
                .await?;
                assert!(
                    round.retries() < 10,
                    "the authorizer does not bound its retries"
                );
                continue;
            }
            return Ok(status);
        }
    }

    fn handle(&self, req: Request<Bytes>) -> Response<Bytes> {
        let mut w = self.world.lock().unwrap();
        let url = req.uri().to_string();
        w.seen.push(Seen {
            method: req.method().clone(),
            url: url.clone(),
            headers: req.headers().clone(),
            body: req.body().clone(),
            public_only: req.extensions().get::<PublicAddressesOnly>().is_some(),
        });
        let parsed = url::Url::parse(&url).unwrap();
        let origin = parsed.origin().ascii_serialization();
        let no_query = format!("{origin}{}", parsed.path());
        if w.rs.prm_at.contains(&no_query) && req.method() == Method::GET {
            let rs = &w.rs;
            if let Some(to) = &rs.prm_redirect {
                let mut r = Response::new(Bytes::new());
                *r.status_mut() = StatusCode::FOUND;
                r.headers_mut().insert("location", to.parse().unwrap());
                return r;
            }
            let mut doc =
                json!({"resource": rs.resource, "authorization_servers": rs.authorization_servers});
            if let Some(s) = &rs.scopes_supported {
                doc["scopes_supported"] = json!(s);
            }
            return json_response(StatusCode::OK, doc);
        }
        // The resource answers on any origin at /mcp (tests of other origins).
        if parsed.path() == "/mcp" && req.method() == Method::POST {
            return w.resource(&req);
        }
        let servers = w.servers.clone();
        for s in &servers {
            if s.metadata_at.contains(&no_query) && req.method() == Method::GET {
                return json_response(StatusCode::OK, metadata(s));
            }
            if no_query == s.endpoint("authorize") {
                return w.authorize(s, &parsed);
            }
            if no_query == s.endpoint("token") && req.method() == Method::POST {
                return w.token(s, &req);
            }
            if s.registration && no_query == s.endpoint("register") && req.method() == Method::POST
            {
                return w.register(s, &req);
            }
        }
        json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"}))
    }
}

impl HttpFetch for Fake {
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        // Answered after a yield, as a real server answers after a round
        // trip, so that concurrent flows interleave instead of running one
        // after another inside a single poll.
        Box::pin(async move {
            tokio::task::yield_now().await;
            let url = request.uri().to_string();
            let down = {
                let w = self.world.lock().unwrap();
                w.unreachable.iter().any(|p| url.starts_with(p.as_str()))
            };
            if down {
                return Err(FetchError::new(
                    mcpwire_auth::FetchErrorKind::Connect,
                    "connection refused",
                ));
            }
            Ok(self.handle(request))
        })
    }
}
