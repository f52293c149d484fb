//! An in-process authorization server and protected resource for the tests,
//! reached through `HttpFetch` (no sockets, deterministic), checking what
//! the conformance suite's servers check: PKCE, state, `resource`, client
//! authentication, issuer, DPoP proofs and nonces. Every request is
//! recorded for the tests to assert on.

#![allow(dead_code, unreachable_pub)]
#![allow(clippy::result_large_err, reason = "a test fake answers errors with whole responses")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use mcpwire_auth::{
    AuthError, AuthHeaders, AuthRound, Authorizer, Challenge, Challenged, FetchError,
    FollowLocation, HttpFetch,
};
use serde_json::{Value, json};

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
    /// Pre-registered clients: id -> secret.
    pub clients: HashMap<String, String>,
    /// Public keys of `private_key_jwt` clients and workload issuers.
    pub assertion_keys: Vec<(Algorithm, DecodingKey)>,
    /// The token endpoint's answer is this status with `Location` to
    /// another origin (a redirect that must not be followed).
    pub token_redirect: Option<String>,
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
            clients: HashMap::new(),
            assertion_keys: Vec::new(),
            token_redirect: None,
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
}

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

#[derive(Clone, Debug)]
struct Issued {
    issuer: String,
    scopes: Vec<String>,
    jkt: Option<String>,
    valid: bool,
}

#[derive(Default)]
struct World {
    servers: Vec<AsConfig>,
    rs: RsConfig,
    seen: Vec<Seen>,
    /// code -> (issuer, client_id, code_challenge, scopes, redirect_uri)
    codes: HashMap<String, (String, String, String, Vec<String>, String)>,
    tokens: HashMap<String, Issued>,
    refresh: HashMap<String, (String, Vec<String>, Option<String>)>,
    registered: HashMap<String, (String, Option<String>, String)>,
    counter: u64,
    rs_jtis: Vec<String>,
    failures: Vec<String>,
}

/// The fake world: authorization servers and one protected resource.
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
        let uri: http::Uri = url.parse().unwrap();
        let mut round = AuthRound::default();
        loop {
            let sent: AuthHeaders = auth.headers(&Method::POST, &uri).await?;
            let mut req = Request::post(uri.clone())
                .body(Bytes::from(
                    json!({"jsonrpc":"2.0","id":1,"method":method}).to_string(),
                ))
                .unwrap();
            sent.apply(req.headers_mut());
            let resp = self.handle(req);
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let challenges = resp
                    .extensions()
                    .get::<Vec<Challenge>>()
                    .cloned()
                    .unwrap_or_default();
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
                    &mut round,
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
        });
        let parsed = url::Url::parse(&url).unwrap();
        let origin = parsed.origin().ascii_serialization();
        let no_query = format!("{origin}{}", parsed.path());
        if w.rs.prm_at.contains(&no_query) && req.method() == Method::GET {
            let rs = &w.rs;
            let mut doc =
                json!({"resource": rs.resource, "authorization_servers": rs.authorization_servers});
            if let Some(s) = &rs.scopes_supported {
                doc["scopes_supported"] = json!(s);
            }
            return json_response(StatusCode::OK, doc);
        }
        if no_query == SERVER && req.method() == Method::POST {
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
        let resp = self.handle(request);
        Box::pin(async move { Ok(resp) })
    }
}

fn json_response(status: StatusCode, body: Value) -> Response<Bytes> {
    let mut r = Response::new(Bytes::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

fn metadata(s: &AsConfig) -> Value {
    let mut m = json!({
        "issuer": s.claimed_issuer.clone().unwrap_or_else(|| s.issuer.clone()),
        "authorization_endpoint": s.endpoint("authorize"),
        "token_endpoint": s.endpoint("token"),
        "response_types_supported": ["code"],
    });
    if s.registration {
        m["registration_endpoint"] = json!(s.endpoint("register"));
    }
    if s.pkce {
        m["code_challenge_methods_supported"] = json!(["S256"]);
    }
    if let Some(v) = s.iss_supported {
        m["authorization_response_iss_parameter_supported"] = json!(v);
    }
    if let Some(v) = &s.auth_methods {
        m["token_endpoint_auth_methods_supported"] = json!(v);
    }
    if let Some(v) = &s.scopes_supported {
        m["scopes_supported"] = json!(v);
    }
    if s.cimd {
        m["client_id_metadata_document_supported"] = json!(true);
    }
    if s.dpop {
        m["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    m
}

fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

/// RFC 7638 thumbprint of an EC public JWK.
fn thumbprint(jwk: &Value) -> String {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap_or(""),
        jwk["x"].as_str().unwrap_or(""),
        jwk["y"].as_str().unwrap_or("")
    );
    s256(&canonical)
}

/// Verifies a DPoP proof; returns (jkt, claims).
fn verify_proof(proof: &str, method: &str, htu: &str) -> Result<(String, Value), String> {
    let header = jsonwebtoken::decode_header(proof).map_err(|e| format!("proof header: {e}"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err("typ is not dpop+jwt".into());
    }
    let jwk = header.jwk.ok_or("no jwk")?;
    let jwk_json = serde_json::to_value(&jwk).unwrap();
    if jwk_json.get("d").is_some() {
        return Err("private key in jwk".into());
    }
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("jwk: {e}"))?;
    let mut v = Validation::new(Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &v)
        .map_err(|e| format!("signature: {e}"))?
        .claims;
    if claims["htm"] != method {
        return Err(format!("htm {} != {method}", claims["htm"]));
    }
    if claims["htu"] != htu {
        return Err(format!("htu {} != {htu}", claims["htu"]));
    }
    let iat = claims["iat"].as_u64().ok_or("no iat")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if now.abs_diff(iat) > 300 {
        return Err("iat out of window".into());
    }
    if !claims["jti"].is_string() {
        return Err("no jti".into());
    }
    Ok((thumbprint(&jwk_json), claims))
}

fn challenge(
    scheme: &str,
    rs: &RsConfig,
    status: StatusCode,
    error: Option<&str>,
    scope: Option<&str>,
) -> Response<Bytes> {
    let mut c = Challenge::new(scheme);
    if let Some(h) = &rs.prm_hint {
        c = c.resource_metadata(h.clone());
    }
    if let Some(s) = scope {
        c = c.scope(s);
    }
    if let Some(e) = error {
        c = c.error(e);
    }
    let mut r = json_response(status, json!({"error": error.unwrap_or("unauthorized")}));
    r.extensions_mut().insert(vec![c]);
    r
}

impl World {
    fn next(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}-{}", self.counter)
    }

    fn fail(&mut self, what: impl Into<String>) {
        self.failures.push(what.into());
    }

    fn resource(&mut self, req: &Request<Bytes>) -> Response<Bytes> {
        let rs = self.rs.clone();
        let body: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let method = body["method"].as_str().unwrap_or("").to_owned();
        let Some(auth) = req
            .headers()
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned())
        else {
            return challenge(
                "Bearer",
                &rs,
                StatusCode::UNAUTHORIZED,
                None,
                rs.challenge_scope.as_deref(),
            );
        };
        let (scheme, token) = auth.split_once(' ').unwrap_or((auth.as_str(), ""));
        let Some(issued) = self.tokens.get(token).cloned() else {
            self.fail(format!("unknown token presented: {token}"));
            return challenge(
                "Bearer",
                &rs,
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                rs.challenge_scope.as_deref(),
            );
        };
        if !issued.valid || !rs.authorization_servers.contains(&issued.issuer) {
            return challenge(
                "Bearer",
                &rs,
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                rs.challenge_scope.as_deref(),
            );
        }
        if let Some(jkt) = &issued.jkt {
            if !scheme.eq_ignore_ascii_case("dpop") {
                self.fail(format!("DPoP-bound token presented with scheme {scheme}"));
                return challenge(
                    "DPoP",
                    &rs,
                    StatusCode::UNAUTHORIZED,
                    Some("invalid_token"),
                    None,
                );
            }
            let Some(proof) = req
                .headers()
                .get("dpop")
                .map(|v| v.to_str().unwrap().to_owned())
            else {
                self.fail("no DPoP proof at the resource");
                return challenge(
                    "DPoP",
                    &rs,
                    StatusCode::UNAUTHORIZED,
                    Some("invalid_dpop_proof"),
                    None,
                );
            };
            match verify_proof(&proof, "POST", SERVER) {
                Ok((pjkt, claims)) => {
                    let jti = claims["jti"].as_str().unwrap().to_owned();
                    if self.rs_jtis.contains(&jti) {
                        self.fail("DPoP proof replayed (jti reused)");
                    }
                    self.rs_jtis.push(jti);
                    if &pjkt != jkt {
                        self.fail("proof key is not the token's key");
                    }
                    if claims["ath"] != s256(token) {
                        self.fail("ath does not match the token");
                    }
                    if rs.dpop_nonce && claims["nonce"] != RS_NONCE {
                        let mut r = challenge(
                            "DPoP",
                            &rs,
                            StatusCode::UNAUTHORIZED,
                            Some("use_dpop_nonce"),
                            None,
                        );
                        r.headers_mut()
                            .insert("dpop-nonce", RS_NONCE.parse().unwrap());
                        return r;
                    }
                }
                Err(e) => {
                    self.fail(format!("bad resource proof: {e}"));
                    return challenge(
                        "DPoP",
                        &rs,
                        StatusCode::UNAUTHORIZED,
                        Some("invalid_dpop_proof"),
                        None,
                    );
                }
            }
        } else if !scheme.eq_ignore_ascii_case("bearer") {
            self.fail(format!("bearer token presented with scheme {scheme}"));
        }
        if let Some(scope) = &rs.always_403 {
            return challenge(
                "Bearer",
                &rs,
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                Some(scope),
            );
        }
        if let Some(needed) = rs.needs.get(&method) {
            if !needed.iter().all(|s| issued.scopes.contains(s)) {
                return challenge(
                    "Bearer",
                    &rs,
                    StatusCode::FORBIDDEN,
                    Some("insufficient_scope"),
                    Some(&needed.join(" ")),
                );
            }
        }
        json_response(StatusCode::OK, json!({"jsonrpc":"2.0","id":1,"result":{}}))
    }

    fn authorize(&mut self, s: &AsConfig, url: &url::Url) -> Response<Bytes> {
        let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
        if q.get("response_type").map(String::as_str) != Some("code") {
            self.fail("response_type is not code");
        }
        if q.get("code_challenge_method").map(String::as_str) != Some("S256") {
            self.fail("no S256 code challenge");
        }
        if !q.contains_key("resource") {
            self.fail("no resource in the authorization request");
        }
        let client_id = q.get("client_id").cloned().unwrap_or_default();
        let known = s.clients.contains_key(&client_id)
            || self
                .registered
                .get(&client_id)
                .is_some_and(|r| r.2 == s.issuer)
            || (s.cimd && client_id.starts_with("https://"));
        if !known {
            self.fail(format!("unknown client {client_id} at {}", s.issuer));
        }
        let code = self.next("AUTH_CODE_VALUE");
        let scopes = q
            .get("scope")
            .map(|s| s.split(' ').map(str::to_owned).collect())
            .unwrap_or_default();
        let redirect_uri = q.get("redirect_uri").cloned().unwrap_or_default();
        self.codes.insert(
            code.clone(),
            (
                s.issuer.clone(),
                client_id,
                q.get("code_challenge").cloned().unwrap_or_default(),
                scopes,
                redirect_uri.clone(),
            ),
        );
        let mut back = url::Url::parse(&redirect_uri).unwrap();
        {
            let mut qp = back.query_pairs_mut();
            qp.append_pair("code", &code);
            if let Some(st) = q.get("state") {
                qp.append_pair("state", st);
            }
            match s.iss {
                Iss::Correct => {
                    qp.append_pair("iss", &s.issuer);
                }
                Iss::Wrong => {
                    qp.append_pair("iss", "https://evil.example.com");
                }
                Iss::Normalized => {
                    qp.append_pair("iss", &format!("{}/", s.issuer));
                }
                Iss::Omit => {}
            }
        }
        let mut r = Response::new(Bytes::new());
        *r.status_mut() = StatusCode::FOUND;
        r.headers_mut()
            .insert("location", back.as_str().parse().unwrap());
        r
    }

    /// The client of a token request, authenticated; or an error answer.
    fn client_auth(
        &mut self,
        s: &AsConfig,
        req: &Request<Bytes>,
        form: &HashMap<String, String>,
    ) -> Result<String, Response<Bytes>> {
        let deny = |w: &mut World, why: String| {
            w.fail(why);
            Err(json_response(
                StatusCode::UNAUTHORIZED,
                json!({"error":"invalid_client"}),
            ))
        };
        if let Some(basic) = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|a| a.strip_prefix("Basic "))
        {
            let decoded = String::from_utf8(STANDARD.decode(basic).unwrap()).unwrap();
            let (id, secret) = decoded.split_once(':').unwrap();
            let dec = |x: &str| {
                url::form_urlencoded::parse(format!("x={x}").as_bytes())
                    .next()
                    .unwrap()
                    .1
                    .into_owned()
            };
            let (id, secret) = (dec(id), dec(secret));
            let ok = s.clients.get(&id) == Some(&secret)
                || self
                    .registered
                    .get(&id)
                    .is_some_and(|r| r.1.as_deref() == Some(secret.as_str()) && r.2 == s.issuer);
            if !ok {
                return deny(self, format!("bad basic credentials for {id}"));
            }
            if let Some(m) = &s.auth_methods {
                if !m.iter().any(|x| x == "client_secret_basic") {
                    self.fail("client_secret_basic used but not advertised");
                }
            }
            return Ok(id);
        }
        let id = form.get("client_id").cloned().unwrap_or_default();
        if let Some(assertion) = form.get("client_assertion") {
            if form.get("client_assertion_type").map(String::as_str)
                != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            {
                return deny(self, "bad client_assertion_type".into());
            }
            let claims = verify_assertion(s, assertion, &s.issuer).map_err(|e| {
                self.fail(e);
                json_response(StatusCode::UNAUTHORIZED, json!({"error":"invalid_client"}))
            })?;
            let iss = claims["iss"].as_str().unwrap_or("").to_owned();
            if claims["sub"] != iss.as_str() {
                return deny(self, "assertion sub != iss".into());
            }
            return Ok(iss);
        }
        if let Some(secret) = form.get("client_secret") {
            let ok = s.clients.get(&id) == Some(secret)
                || self
                    .registered
                    .get(&id)
                    .is_some_and(|r| r.1.as_deref() == Some(secret.as_str()));
            if !ok {
                return deny(self, format!("bad post credentials for {id}"));
            }
            if let Some(m) = &s.auth_methods {
                if !m.iter().any(|x| x == "client_secret_post") {
                    self.fail("client_secret_post used but not advertised");
                }
            }
            return Ok(id);
        }
        // A public client.
        if let Some(r) = self.registered.get(&id) {
            if r.1.is_some() {
                return deny(self, format!("confidential client {id} sent no secret"));
            }
        }
        if s.clients.get(&id).is_some_and(|sec| !sec.is_empty()) {
            return deny(self, format!("pre-registered client {id} sent no secret"));
        }
        Ok(id)
    }

    fn token(&mut self, s: &AsConfig, req: &Request<Bytes>) -> Response<Bytes> {
        if let Some(loc) = &s.token_redirect {
            let mut r = Response::new(Bytes::new());
            *r.status_mut() = StatusCode::TEMPORARY_REDIRECT;
            r.headers_mut().insert("location", loc.parse().unwrap());
            return r;
        }
        let form: HashMap<String, String> = url::form_urlencoded::parse(req.body())
            .into_owned()
            .collect();
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        if !form.contains_key("resource") {
            self.fail(format!("no resource in the {grant} token request"));
        }
        // DPoP at the token endpoint.
        let mut jkt = None;
        if s.dpop {
            if let Some(proof) = req
                .headers()
                .get("dpop")
                .map(|v| v.to_str().unwrap().to_owned())
            {
                match verify_proof(&proof, "POST", &s.endpoint("token")) {
                    Ok((k, claims)) => {
                        if s.dpop_nonce && claims["nonce"] != AS_NONCE {
                            let mut r = json_response(
                                StatusCode::BAD_REQUEST,
                                json!({"error":"use_dpop_nonce"}),
                            );
                            r.headers_mut()
                                .insert("dpop-nonce", AS_NONCE.parse().unwrap());
                            return r;
                        }
                        jkt = Some(k);
                    }
                    Err(e) => {
                        self.fail(format!("bad token endpoint proof: {e}"));
                        return json_response(
                            StatusCode::BAD_REQUEST,
                            json!({"error":"invalid_dpop_proof"}),
                        );
                    }
                }
            }
        }
        let client = match grant.as_str() {
            "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                // The client may be public here; the assertion is the grant.
                match self.client_auth(s, req, &form) {
                    Ok(c) => c,
                    Err(r) => return r,
                }
            }
            _ => match self.client_auth(s, req, &form) {
                Ok(c) => c,
                Err(r) => return r,
            },
        };
        let (scopes, rt_jkt) = match grant.as_str() {
            "authorization_code" => {
                let code = form.get("code").cloned().unwrap_or_default();
                let Some((issuer, code_client, challenge, scopes, redirect_uri)) =
                    self.codes.remove(&code)
                else {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error":"invalid_grant"}),
                    );
                };
                if issuer != s.issuer {
                    self.fail("code redeemed at another authorization server");
                }
                if code_client != client {
                    self.fail(format!("code issued to {code_client} redeemed by {client}"));
                }
                if form.get("redirect_uri") != Some(&redirect_uri) {
                    self.fail("redirect_uri differs from the authorization request");
                }
                let verifier = form.get("code_verifier").cloned().unwrap_or_default();
                if s256(&verifier) != challenge {
                    self.fail("PKCE verifier does not match the challenge");
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error":"invalid_grant"}),
                    );
                }
                (scopes, None)
            }
            "refresh_token" => {
                let rt = form.get("refresh_token").cloned().unwrap_or_default();
                let Some((issuer, scopes, rjkt)) = self.refresh.get(&rt).cloned() else {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error":"invalid_grant"}),
                    );
                };
                if issuer != s.issuer {
                    self.fail("refresh token sent to another authorization server");
                }
                if s.refresh == Refresh::Rotate {
                    self.refresh.remove(&rt);
                }
                if rjkt.is_some() && rjkt != jkt {
                    self.fail("refresh of a DPoP-bound token without its key");
                }
                (scopes, rjkt)
            }
            "client_credentials" => (
                form.get("scope")
                    .map(|s| s.split(' ').map(str::to_owned).collect())
                    .unwrap_or_default(),
                None,
            ),
            "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                let assertion = form.get("assertion").cloned().unwrap_or_default();
                if let Err(e) = verify_assertion(s, &assertion, &s.issuer) {
                    self.fail(e);
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error":"invalid_grant"}),
                    );
                }
                (
                    form.get("scope")
                        .map(|s| s.split(' ').map(str::to_owned).collect())
                        .unwrap_or_default(),
                    None,
                )
            }
            "urn:ietf:params:oauth:grant-type:token-exchange" => {
                return self.token_exchange(s, &form);
            }
            other => {
                self.fail(format!("unexpected grant {other}"));
                return json_response(
                    StatusCode::BAD_REQUEST,
                    json!({"error":"unsupported_grant_type"}),
                );
            }
        };
        let _ = rt_jkt;
        let token = self.next("ACCESS_TOKEN_VALUE");
        self.tokens.insert(
            token.clone(),
            Issued {
                issuer: s.issuer.clone(),
                scopes: scopes.clone(),
                jkt: jkt.clone(),
                valid: true,
            },
        );
        let mut body = json!({
            "access_token": token,
            "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
            "expires_in": s.expires_in,
        });
        if !scopes.is_empty() {
            body["scope"] = json!(scopes.join(" "));
        }
        let give_refresh = match s.refresh {
            Refresh::None => false,
            Refresh::Rotate => true,
            Refresh::Omit => grant == "authorization_code",
        } && grant != "client_credentials";
        if give_refresh {
            let rt = self.next("REFRESH_TOKEN_VALUE");
            self.refresh
                .insert(rt.clone(), (s.issuer.clone(), scopes, jkt));
            body["refresh_token"] = json!(rt);
        }
        json_response(StatusCode::OK, body)
    }

    fn token_exchange(&mut self, s: &AsConfig, form: &HashMap<String, String>) -> Response<Bytes> {
        for (k, v) in [
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag",
            ),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token",
            ),
        ] {
            if form.get(k).map(String::as_str) != Some(v) {
                self.fail(format!("token exchange: {k} is {:?}", form.get(k)));
            }
        }
        if form.get("subject_token").map(String::as_str) != Some("the-id-token") {
            self.fail("token exchange: wrong subject_token");
        }
        let audience = form.get("audience").cloned().unwrap_or_default();
        let resource = form.get("resource").cloned().unwrap_or_default();
        let _ = s;
        json_response(
            StatusCode::OK,
            json!({
                "access_token": format!("id-jag-for|{audience}|{resource}"),
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "N_A",
            }),
        )
    }

    fn register(&mut self, s: &AsConfig, req: &Request<Bytes>) -> Response<Bytes> {
        let body: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let id = self.next(&format!(
            "client-{}",
            s.issuer.trim_start_matches("https://")
        ));
        let asked = body["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or("client_secret_basic")
            .to_owned();
        let method = s.registered_method.clone().unwrap_or(asked);
        let secret = (s.registered_secret || method != "none").then(|| self.next("CLIENT_SECRET_VALUE"));
        self.registered.insert(
            id.clone(),
            (method.clone(), secret.clone(), s.issuer.clone()),
        );
        let mut out = json!({"client_id": id, "token_endpoint_auth_method": method, "redirect_uris": body["redirect_uris"]});
        if let Some(sec) = secret {
            out["client_secret"] = json!(sec);
        }
        json_response(StatusCode::CREATED, out)
    }
}

/// Verifies an RFC 7523 assertion against the server's known keys, with
/// audience `aud`; returns its claims. An ID-JAG from the fake identity
/// provider (`id-jag-for|aud|resource`) is accepted as is.
fn verify_assertion(s: &AsConfig, assertion: &str, aud: &str) -> Result<Value, String> {
    if let Some(rest) = assertion.strip_prefix("id-jag-for|") {
        let (a, resource) = rest.split_once('|').unwrap();
        if a != aud {
            return Err(format!("ID-JAG audience {a} != {aud}"));
        }
        return Ok(json!({"iss": "idp", "sub": "idp", "resource": resource}));
    }
    let mut last = String::from("no key");
    for (alg, key) in &s.assertion_keys {
        let mut v = Validation::new(*alg);
        v.set_audience(&[aud]);
        v.leeway = 5;
        v.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        match jsonwebtoken::decode::<Value>(assertion, key, &v) {
            Ok(d) => return Ok(d.claims),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("assertion rejected: {last}"))
}

/// A key pair of a client or workload: its signing key, and the server's
/// verification key.
pub struct TestKey {
    pub signing: mcpwire_auth::SigningKey,
    pub verify: DecodingKey,
    pub pem: Vec<u8>,
    pub alg: Algorithm,
}

/// A fresh ES256 key pair.
pub fn es256_keypair() -> TestKey {
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    let verify = DecodingKey::from_ec_components(
        &URL_SAFE_NO_PAD.encode(&point[1..33]),
        &URL_SAFE_NO_PAD.encode(&point[33..]),
    )
    .unwrap();
    let pem = pem_wrap("PRIVATE KEY", doc.as_ref()).into_bytes();
    TestKey {
        signing: mcpwire_auth::SigningKey::from_pem(mcpwire_auth::SigningAlgorithm::Es256, &pem)
            .unwrap(),
        verify,
        pem,
        alg: Algorithm::ES256,
    }
}

/// The fixture RS256 key pair.
pub fn rs256_keypair() -> TestKey {
    let private = include_bytes!("../fixtures/rsa_private.pem");
    let public = include_bytes!("../fixtures/rsa_public.pem");
    TestKey {
        signing: mcpwire_auth::SigningKey::from_pem(mcpwire_auth::SigningAlgorithm::Rs256, private)
            .unwrap(),
        verify: DecodingKey::from_rsa_pem(public).unwrap(),
        pem: private.to_vec(),
        alg: Algorithm::RS256,
    }
}

pub fn pem_wrap(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A workload identity JWT signed with `key` for audience `aud`, valid for
/// `lifetime_secs` (negative: already expired).
pub fn workload_jwt(key: &TestKey, aud: &str, lifetime_secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({"iss": "https://idp.test", "sub": "workload-1", "aud": aud, "iat": now, "exp": now + lifetime_secs, "jti": "w1"});
    let enc = match key.alg {
        Algorithm::ES256 => jsonwebtoken::EncodingKey::from_ec_pem(&key.pem).unwrap(),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(&key.pem).unwrap(),
    };
    jsonwebtoken::encode(&jsonwebtoken::Header::new(key.alg), &claims, &enc).unwrap()
}
