//! The redaction sweep of the CLI: every credential flow the CLI can run,
//! each with `-v`, against one scripted server on 127.0.0.1 (the MCP
//! server, its authorization server, and an authorize page that approves
//! at once), then a search of everything the runs printed for every secret
//! the server issued or was sent: a static bearer given with `-H`, a bearer
//! taken from the environment through a configuration file, and OAuth (a
//! `login` with dynamic registration, a client secret and PKCE, then a
//! non-interactive command whose stored token is due and is refreshed).

mod support;

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use support::{Request, mcpwire, read_request, respond, stderr, stdout};

const STATIC_BEARER: &str = "zq-static-bearer-5d1c9e";
const ENV_BEARER: &str = "zq-env-bearer-a83f02";
const CLIENT_SECRET: &str = "zq-client-secret-77b4e1";
const AUTH_CODE: &str = "zq-auth-code-3c9d55";

/// What the server issued and was sent.
#[derive(Default)]
struct State {
    /// Every secret value that went over the wire, either way.
    secrets: Vec<String>,
    /// Access tokens currently accepted at `/mcp`.
    access: Vec<String>,
    /// Refresh tokens that may be used (each once: rotation).
    refresh: Vec<String>,
    /// The `grant_type` of each token request.
    grants: Vec<String>,
    /// Tokens issued so far.
    issued: u32,
}

type Shared = Arc<Mutex<State>>;

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// A token answer with a new access token and a new refresh token, both
/// remembered as secrets. They live 2 s: the next command finds them due.
fn issue(state: &Shared) -> String {
    let mut st = state.lock().unwrap();
    st.issued += 1;
    let n = st.issued;
    let access = format!("zq-access-{n}-0c5e8a1f");
    let refresh = format!("zq-refresh-{n}-9b2d74e6");
    st.access.push(access.clone());
    st.refresh.push(refresh.clone());
    st.secrets.push(access.clone());
    st.secrets.push(refresh.clone());
    json!({"access_token": access, "refresh_token": refresh, "token_type": "Bearer", "expires_in": 2})
        .to_string()
}

fn mcp(stream: &mut TcpStream, req: &Request, base: &str, state: &Shared) {
    let json_type = [("content-type", "application/json".to_owned())];
    let accepted = req
        .headers
        .get("authorization")
        .and_then(|a| a.strip_prefix("Bearer "))
        .is_some_and(|t| {
            t == STATIC_BEARER
                || t == ENV_BEARER
                || state.lock().unwrap().access.iter().any(|a| a == t)
        });
    if !accepted {
        let challenge =
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
        return respond(
            stream,
            "401 Unauthorized",
            &[("www-authenticate", challenge)],
            "",
        );
    }
    let msg: Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let Some(id) = msg.get("id").cloned() else {
        return respond(stream, "202 Accepted", &[], "");
    };
    let result = match msg["method"].as_str() {
        Some("initialize") => {
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "guarded", "version": "1"}})
        }
        Some("tools/list") => {
            json!({"tools": [{"name": "guarded_tool", "inputSchema": {"type": "object"}}]})
        }
        _ => json!({}),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    respond(stream, "200 OK", &json_type, &body);
}

fn token(stream: &mut TcpStream, req: &Request, state: &Shared) {
    let json_type = [("content-type", "application/json".to_owned())];
    let f = form(&req.body);
    let refuse = |stream: &mut TcpStream| {
        respond(
            stream,
            "400 Bad Request",
            &json_type,
            r#"{"error":"invalid_grant"}"#,
        )
    };
    // The registered client authenticates with its secret (Basic).
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("client-1:{CLIENT_SECRET}"));
    if req.headers.get("authorization") != Some(&format!("Basic {basic}")) {
        return refuse(stream);
    }
    let grant = f.get("grant_type").cloned().unwrap_or_default();
    state.lock().unwrap().grants.push(grant.clone());
    match grant.as_str() {
        "authorization_code" => {
            let Some(verifier) = f.get("code_verifier") else {
                return refuse(stream);
            };
            state.lock().unwrap().secrets.push(verifier.clone());
            if f.get("code").map(String::as_str) != Some(AUTH_CODE) {
                return refuse(stream);
            }
        }
        "refresh_token" => {
            let rt = f.get("refresh_token").cloned().unwrap_or_default();
            let mut st = state.lock().unwrap();
            let Some(at) = st.refresh.iter().position(|r| *r == rt) else {
                drop(st);
                return refuse(stream);
            };
            st.refresh.remove(at);
        }
        _ => return refuse(stream),
    }
    let body = issue(state);
    respond(stream, "200 OK", &json_type, &body);
}

fn handle(mut stream: TcpStream, base: &str, state: &Shared) {
    let Some(req) = read_request(&mut stream) else {
        return;
    };
    let json_type = [("content-type", "application/json".to_owned())];
    let path = req.path.split('?').next().unwrap_or_default().to_owned();
    match (req.method.as_str(), path.as_str()) {
        ("POST", "/mcp") => mcp(&mut stream, &req, base, state),
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            let body = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]})
                .to_string();
            respond(&mut stream, "200 OK", &json_type, &body);
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let body = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"]
            })
            .to_string();
            respond(&mut stream, "200 OK", &json_type, &body);
        }
        ("POST", "/register") => {
            let mut reg: Value = serde_json::from_slice(&req.body).unwrap_or_default();
            reg["client_id"] = json!("client-1");
            reg["client_secret"] = json!(CLIENT_SECRET);
            reg["token_endpoint_auth_method"] = json!("client_secret_basic");
            respond(&mut stream, "201 Created", &json_type, &reg.to_string());
        }
        ("GET", "/authorize") => {
            let q: HashMap<String, String> = url::Url::parse(&format!("{base}{}", req.path))
                .map(|u| u.query_pairs().into_owned().collect())
                .unwrap_or_default();
            let location = format!(
                "{}?code={AUTH_CODE}&state={}",
                q["redirect_uri"], q["state"]
            );
            respond(&mut stream, "302 Found", &[("location", location)], "");
        }
        ("POST", "/token") => token(&mut stream, &req, state),
        _ => respond(&mut stream, "404 Not Found", &[], ""),
    }
}

/// Starts the server; returns its base URL and its state.
fn server() -> (String, Shared) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state: Shared = Arc::default();
    let (b, s) = (base.clone(), state.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (b, s) = (b.clone(), s.clone());
            std::thread::spawn(move || handle(stream, &b, &s));
        }
    });
    (base, state)
}

/// Everything a run printed, after checking that it succeeded and that
/// `-v` showed the session.
fn succeeded(what: &str, out: &Output) -> String {
    let text = format!("{}\n{}", stdout(out), stderr(out));
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

#[test]
#[cfg_attr(
    windows,
    ignore = "its browser is a shell script around curl, which Windows cannot run"
)]
fn no_secret_of_any_credential_flow_reaches_the_output_of_verbose_runs() {
    let curl = std::process::Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|o| o.status.success()),
        "curl is not installed (this test's browser is a curl script)"
    );
    let (base, state) = server();
    let url = format!("{base}/mcp");
    let dir = tempfile::tempdir().expect("a temp dir");
    let tokens = dir.path().join("tokens");
    let tokens = tokens.to_str().unwrap();
    let mut printed = Vec::new();

    // A static bearer given with -H.
    let out = mcpwire()
        .args(["-v", "-H"])
        .arg(format!("Authorization: Bearer {STATIC_BEARER}"))
        .args([
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "tools",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = succeeded("-H bearer", &out);
    assert!(
        text.contains("\"tools/list\""),
        "-v shows the frames: {text}"
    );
    assert!(text.contains("authorization: [redacted]"), "{text}");
    printed.push(text);

    // A bearer from the environment, through a configuration file.
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"guarded": {"type": "http", "url": url,
            "headers": {"Authorization": "Bearer ${GUARDED_TOKEN}"}}}})
        .to_string(),
    )
    .unwrap();
    let out = mcpwire()
        .env("GUARDED_TOKEN", ENV_BEARER)
        .arg("-v")
        .arg("--config")
        .arg(&config)
        .args([
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            "guarded",
            "ping",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = succeeded("environment bearer", &out);
    assert!(text.contains("\"ping\""), "{text}");
    printed.push(text);

    // OAuth: a login (registration with a client secret, PKCE, a code),
    // with -v; the "browser" follows the authorization URL with curl.
    let browser = dir.path().join("browser.sh");
    std::fs::write(&browser, "#!/bin/sh\ncurl -s -L -o /dev/null \"$1\" &\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = mcpwire()
        .env("BROWSER", &browser)
        .args(["-v", "--token-dir", tokens, "login", &url])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    printed.push(succeeded("login", &out));
    let grants = state.lock().unwrap().grants.len();

    // Then a non-interactive command: the stored token is due (it lives
    // 2 s), so it is refreshed with the stored refresh token and client.
    std::thread::sleep(Duration::from_millis(1500));
    let out = mcpwire()
        .args([
            "-v",
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "tools",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = succeeded("stored token and refresh", &out);
    assert!(text.contains("guarded_tool"), "{text}");
    printed.push(text);

    let st = state.lock().unwrap();
    assert_eq!(st.grants[0], "authorization_code", "{:?}", st.grants);
    assert!(
        st.grants[grants..].iter().any(|g| g == "refresh_token"),
        "the last run refreshed: {:?}",
        st.grants
    );
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("client-1:{CLIENT_SECRET}"));
    let mut secrets = st.secrets.clone();
    secrets
        .extend([STATIC_BEARER, ENV_BEARER, CLIENT_SECRET, AUTH_CODE, &basic].map(str::to_owned));
    assert!(
        secrets.len() >= 10,
        "two token answers and a verifier at least: {secrets:?}"
    );
    for (run, text) in printed.iter().enumerate() {
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "run {run} printed the secret {secret:?}:\n{text}"
            );
        }
    }
}
