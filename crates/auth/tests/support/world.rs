//! The fake's servers: the authorization server endpoints (metadata,
//! authorize, token, register) and the protected resource, with the checks
//! the conformance suite makes.

#![allow(
    clippy::result_large_err,
    reason = "a test fake answers errors with whole responses"
)]

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use serde_json::{Value, json};

use super::verify::{s256, verify_assertion, verify_proof};
use super::{AS_NONCE, AsConfig, Iss, RS_NONCE, Refresh, RsConfig, SERVER, Seen};

#[derive(Clone, Debug)]
pub(super) struct Issued {
    pub(super) issuer: String,
    pub(super) scopes: Vec<String>,
    pub(super) jkt: Option<String>,
    pub(super) valid: bool,
}

#[derive(Default)]
pub(super) struct World {
    pub(super) servers: Vec<AsConfig>,
    pub(super) rs: RsConfig,
    pub(super) seen: Vec<Seen>,
    /// code -> (issuer, client_id, code_challenge, scopes, redirect_uri)
    pub(super) codes: HashMap<String, (String, String, String, Vec<String>, String)>,
    pub(super) tokens: HashMap<String, Issued>,
    pub(super) refresh: HashMap<String, (String, Vec<String>, Option<String>)>,
    pub(super) registered: HashMap<String, (String, Option<String>, String)>,
    pub(super) counter: u64,
    pub(super) rs_jtis: Vec<String>,
    pub(super) failures: Vec<String>,
    /// Endless DPoP nonce demands made so far.
    pub(super) endless_demands: u64,
    /// URL prefixes no connection reaches.
    pub(super) unreachable: Vec<String>,
}

/// The fake world: authorization servers and one protected resource.
pub(super) fn json_response(status: StatusCode, body: Value) -> Response<Bytes> {
    let mut r = Response::new(Bytes::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

pub(super) fn metadata(s: &AsConfig) -> Value {
    let mut m = json!({
        "issuer": s.claimed_issuer.clone().unwrap_or_else(|| s.issuer.clone()),
        "authorization_endpoint": s.endpoint("authorize"),
        "token_endpoint": s.endpoint("token"),
        "response_types_supported": ["code"],
    });
    if s.registration {
        m["registration_endpoint"] = json!(s.endpoint("register"));
    }
    for (field, url) in &s.claimed_endpoints {
        m[field.as_str()] = json!(url);
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

fn challenge(
    scheme: &str,
    rs: &RsConfig,
    status: StatusCode,
    error: Option<&str>,
    scope: Option<&str>,
) -> Response<Bytes> {
    // A real header, parsed by the client side as the transport does.
    let mut params = Vec::new();
    if let Some(h) = &rs.prm_hint {
        params.push(format!("resource_metadata=\"{h}\""));
    }
    if let Some(s) = scope {
        params.push(format!("scope=\"{s}\""));
    }
    if let Some(e) = error {
        params.push(format!("error=\"{e}\""));
    }
    let header = if params.is_empty() {
        scheme.to_owned()
    } else {
        format!("{scheme} {}", params.join(", "))
    };
    let mut r = json_response(status, json!({"error": error.unwrap_or("unauthorized")}));
    r.headers_mut()
        .insert("www-authenticate", header.parse().unwrap());
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

    pub(super) fn resource(&mut self, req: &Request<Bytes>) -> Response<Bytes> {
        let rs = self.rs.clone();
        let body: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let method = body["method"].as_str().unwrap_or("").to_owned();
        if rs.always_401 && req.headers().contains_key("authorization") {
            return challenge(
                "Bearer",
                &rs,
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                None,
            );
        }
        let Some(auth) = req
            .headers()
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned())
        else {
            if let Some(other) = &rs.other_challenge {
                let mut r =
                    json_response(StatusCode::UNAUTHORIZED, json!({"error": "unauthorized"}));
                r.headers_mut()
                    .insert("www-authenticate", other.parse().unwrap());
                return r;
            }
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
                    if rs.dpop_nonce_endless && self.endless_demands < super::ENDLESS_CAP {
                        self.endless_demands += 1;
                        let nonce = self.next("rs-endless-nonce");
                        let mut r = challenge(
                            "DPoP",
                            &rs,
                            StatusCode::UNAUTHORIZED,
                            Some("use_dpop_nonce"),
                            None,
                        );
                        r.headers_mut().insert("dpop-nonce", nonce.parse().unwrap());
                        return r;
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
        if let Some(needed) = rs.needs.get(&method)
            && !needed.iter().all(|s| issued.scopes.contains(s))
        {
            return challenge(
                "Bearer",
                &rs,
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                Some(&needed.join(" ")),
            );
        }
        json_response(StatusCode::OK, json!({"jsonrpc":"2.0","id":1,"result":{}}))
    }

    pub(super) fn authorize(&mut self, s: &AsConfig, url: &url::Url) -> Response<Bytes> {
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
            if let Some(m) = &s.auth_methods
                && !m.iter().any(|x| x == "client_secret_basic")
            {
                self.fail("client_secret_basic used but not advertised");
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
            if let Some(m) = &s.auth_methods
                && !m.iter().any(|x| x == "client_secret_post")
            {
                self.fail("client_secret_post used but not advertised");
            }
            return Ok(id);
        }
        // A public client.
        if let Some(r) = self.registered.get(&id)
            && r.1.is_some()
        {
            return deny(self, format!("confidential client {id} sent no secret"));
        }
        if s.clients.get(&id).is_some_and(|sec| !sec.is_empty()) {
            return deny(self, format!("pre-registered client {id} sent no secret"));
        }
        Ok(id)
    }

    pub(super) fn token(&mut self, s: &AsConfig, req: &Request<Bytes>) -> Response<Bytes> {
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
        if s.dpop
            && let Some(proof) = req
                .headers()
                .get("dpop")
                .map(|v| v.to_str().unwrap().to_owned())
        {
            match verify_proof(&proof, "POST", &s.endpoint("token")) {
                Ok((k, claims)) => {
                    if s.dpop_nonce_endless && self.endless_demands < super::ENDLESS_CAP {
                        self.endless_demands += 1;
                        let nonce = self.next("as-endless-nonce");
                        let mut r = json_response(
                            StatusCode::BAD_REQUEST,
                            json!({"error":"use_dpop_nonce"}),
                        );
                        r.headers_mut().insert("dpop-nonce", nonce.parse().unwrap());
                        return r;
                    }
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

    pub(super) fn register(&mut self, s: &AsConfig, req: &Request<Bytes>) -> Response<Bytes> {
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
        let secret =
            (s.registered_secret || method != "none").then(|| self.next("CLIENT_SECRET_VALUE"));
        self.registered.insert(
            id.clone(),
            (method.clone(), secret.clone(), s.issuer.clone()),
        );
        let mut out = json!({"client_id": id, "redirect_uris": body["redirect_uris"]});
        if !s.omit_registered_method {
            out["token_endpoint_auth_method"] = json!(method);
        }
        if let Some(sec) = secret {
            out["client_secret"] = json!(sec);
        }
        json_response(StatusCode::CREATED, out)
    }
}
