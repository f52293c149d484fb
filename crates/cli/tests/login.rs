//! `login` / `logout` against a scripted local OAuth-protected server (one
//! HTTP server on 127.0.0.1 playing the MCP server, its authorization
//! server and an authorize page that approves at once); the "browser" is
//! a script that fetches the URL it is given (`$BROWSER`).

mod support;

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::{mcpwire, read_request, respond, stderr, stdout};

const TOKEN: &str = "access-7f3a";

/// What the fake has seen: request lines.
type Seen = Arc<Mutex<Vec<String>>>;

fn query(path: &str) -> HashMap<String, String> {
    let q = path.split_once('?').map(|(_, q)| q).unwrap_or_default();
    url::form_urlencoded::parse(q.as_bytes())
        .into_owned()
        .collect()
}

fn handle(mut stream: TcpStream, base: &str, seen: &Seen) {
    let Some(req) = read_request(&mut stream) else {
        return;
    };
    seen.lock().unwrap().push(format!(
        "{} {}",
        req.method,
        req.path.split('?').next().unwrap()
    ));
    let json_type = [("content-type", "application/json".to_owned())];
    match (req.method.as_str(), req.path.split('?').next().unwrap()) {
        ("POST", "/mcp") => {
            if req.headers.get("authorization").map(String::as_str)
                != Some(&format!("Bearer {TOKEN}"))
            {
                let challenge = format!(
                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                );
                return respond(
                    &mut stream,
                    "401 Unauthorized",
                    &[("www-authenticate", challenge)],
                    "",
                );
            }
            let msg: Value = serde_json::from_slice(&req.body).unwrap_or_default();
            let Some(id) = msg.get("id").cloned() else {
                return respond(&mut stream, "202 Accepted", &[], "");
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
            respond(&mut stream, "200 OK", &json_type, &body);
        }
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
                "token_endpoint_auth_methods_supported": ["none"]
            })
            .to_string();
            respond(&mut stream, "200 OK", &json_type, &body);
        }
        ("POST", "/register") => {
            let mut reg: Value = serde_json::from_slice(&req.body).unwrap_or_default();
            reg["client_id"] = json!("client-1");
            respond(&mut stream, "201 Created", &json_type, &reg.to_string());
        }
        ("GET", "/authorize") => {
            // Approves at once: back to the client's redirect URI.
            let q = query(&req.path);
            let location = format!("{}?code=code-1&state={}", q["redirect_uri"], q["state"]);
            respond(&mut stream, "302 Found", &[("location", location)], "");
        }
        ("POST", "/token") => {
            let form: HashMap<String, String> = url::form_urlencoded::parse(&req.body)
                .into_owned()
                .collect();
            if form.get("code").map(String::as_str) != Some("code-1")
                || !form.contains_key("code_verifier")
            {
                return respond(
                    &mut stream,
                    "400 Bad Request",
                    &json_type,
                    r#"{"error":"invalid_grant"}"#,
                );
            }
            let body = json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600})
                .to_string();
            respond(&mut stream, "200 OK", &json_type, &body);
        }
        _ => respond(&mut stream, "404 Not Found", &[], ""),
    }
}

/// Starts the fake; returns its base URL and what it saw.
fn fake() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let (b, s) = (base.clone(), seen.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (b, s) = (b.clone(), s.clone());
            std::thread::spawn(move || handle(stream, &b, &s));
        }
    });
    (base, seen)
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the browser this test plays is a /bin/sh script around curl"
)]
fn login_keeps_tokens_later_commands_use_them_logout_forgets_them() {
    let curl = std::process::Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|o| o.status.success()),
        "curl is not installed (this test's browser is a curl script)"
    );
    let (base, seen) = fake();
    let url = format!("{base}/mcp");
    let dir = tempfile::tempdir().expect("a temp dir");
    let tokens = dir.path().join("tokens");
    let tokens = tokens.to_str().unwrap();
    // The "browser": fetches the authorization URL, following the
    // redirect to mcpwire's loopback listener.
    let browser = dir.path().join("browser.sh");
    std::fs::write(&browser, "#!/bin/sh\ncurl -s -L -o /dev/null \"$1\" &\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    // Before login: a non-interactive command fails with 3, naming login.
    let out = mcpwire()
        .args([
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "tools",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "mcpwire: cannot connect to {url}: this server needs you to sign in with a browser, \
             and --non-interactive is set\n  hint: run `mcpwire login {url}` first (at a terminal), \
             or pass a token with -H 'Authorization: Bearer …'\n"
        )
    );
    // Without a terminal (these tests have none), the same advice.
    let out = mcpwire()
        .args(["--token-dir", tokens, "-s", &url, "tools"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "sign in with a browser, and no terminal is attached\n  hint: run `mcpwire login"
        ),
        "{}",
        stderr(&out)
    );
    // login --non-interactive: 3 as well, no browser.
    mcpwire()
        .args(["--non-interactive", "--token-dir", tokens, "login", &url])
        .assert()
        .code(3);

    let out = mcpwire()
        .env("BROWSER", &browser)
        .args(["--token-dir", tokens, "login", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("logged in to {url} (authorization server {base})")),
        "{}",
        stdout(&out)
    );
    let kept = std::fs::read_dir(tokens).unwrap().count();
    assert_eq!(kept, 1, "one token file");
    // The token never reaches the output.
    assert!(!stdout(&out).contains(TOKEN) && !stderr(&out).contains(TOKEN));

    // A later command uses the kept token, without a browser.
    let out = mcpwire()
        .args([
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "tools",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["tools"][0]["name"], "guarded_tool");
    // -v shows the messages, never the token.
    let out = mcpwire()
        .args([
            "-v",
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "ping",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("\"ping\""));
    assert!(!stderr(&out).contains(TOKEN), "{}", stderr(&out));

    // logout forgets it: the next non-interactive command fails with 3.
    let out = mcpwire()
        .args(["--token-dir", tokens, "logout", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("logged out of {url} (1 authorization(s) removed)\n")
    );
    mcpwire()
        .args([
            "--non-interactive",
            "--token-dir",
            tokens,
            "-s",
            &url,
            "tools",
        ])
        .assert()
        .code(3);
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains(&"POST /token".to_owned()), "{seen:?}");
}

#[test]
fn login_refuses_a_local_server() {
    mcpwire()
        .args(["login", "--", "some-server"])
        .assert()
        .code(1);
}
