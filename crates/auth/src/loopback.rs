//! [`LoopbackBrowser`]: the redirect step for command-line and desktop
//! programs: a one-shot HTTP listener on 127.0.0.1 receives the redirect
//! (RFC 8252 §7.3), and the user's browser is opened on the authorization
//! URL.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use url::Url;

use crate::error::AuthError;
use crate::redirect::{PendingRedirect, RedirectStep};

/// How long one browser connection may take to send its request.
const CONNECTION_BOUND: Duration = Duration::from_secs(10);

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Authorized</title>\
<p>Authorization finished. You can close this window and return to the application.</p>";

/// Receives the authorization redirect on `http://127.0.0.1:<port><path>`
/// and opens the user's browser on the authorization URL.
///
/// The listener serves one redirect and closes. The port is chosen by the
/// system unless [`port`](Self::port) fixes one (authorization servers that
/// match loopback redirect URIs port and all need a fixed port, registered
/// beforehand). Where no browser can be opened (a server, a container) the
/// URL is printed to standard error; prefer a
/// [`CallbackRedirect`](crate::CallbackRedirect) there.
#[derive(Debug, Clone)]
#[must_use]
pub struct LoopbackBrowser {
    port: u16,
    path: String,
    open_browser: bool,
}

impl Default for LoopbackBrowser {
    fn default() -> Self {
        Self {
            port: 0,
            path: "/callback".into(),
            open_browser: true,
        }
    }
}

impl LoopbackBrowser {
    /// A listener on a system-chosen port, path `/callback`, opening the
    /// browser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Listens on `port` (0: any free port, the default).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The callback path (default `/callback`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let mut p = path.into();
        if !p.starts_with('/') {
            p.insert(0, '/');
        }
        self.path = p;
        self
    }

    /// Whether to open the browser (default `true`); when `false` the
    /// authorization URL is printed to standard error for the user.
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }
}

struct LoopbackPending {
    listener: TcpListener,
    redirect_uri: String,
    path: String,
    open_browser: bool,
}

impl RedirectStep for LoopbackBrowser {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        Box::pin(async move {
            let listener = TcpListener::bind(("127.0.0.1", self.port))
                .await
                .map_err(|e| AuthError::Redirect(Box::new(e)))?;
            let port = listener
                .local_addr()
                .map_err(|e| AuthError::Redirect(Box::new(e)))?
                .port();
            Ok(Box::new(LoopbackPending {
                listener,
                redirect_uri: format!("http://127.0.0.1:{port}{}", self.path),
                path: self.path.clone(),
                open_browser: self.open_browser,
            }) as Box<dyn PendingRedirect>)
        })
    }
}

impl PendingRedirect for LoopbackPending {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn finish(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>> {
        Box::pin(async move {
            // The flows check the authorization endpoint when they read the
            // metadata; this step checks again, since what it is given is
            // handed to the system's URL opener, which runs `file:` or
            // `javascript:` URLs (or a program's custom scheme) as readily.
            if !matches!(authorization_url.scheme(), "https" | "http") {
                return Err(AuthError::InsecureUrl {
                    what: "authorization URL",
                    url: crate::fetch::without_query(
                        &authorization_url
                            .as_str()
                            .parse()
                            .unwrap_or_else(|_| http::Uri::from_static("/")),
                    ),
                });
            }
            let target = authorization_url.to_string();
            if self.open_browser {
                let t = target.clone();
                let opened = tokio::task::spawn_blocking(move || webbrowser::open(&t)).await;
                if !matches!(opened, Ok(Ok(()))) {
                    eprintln!("Open this URL in a browser to authorize:\n{target}");
                }
            } else {
                eprintln!("Open this URL in a browser to authorize:\n{target}");
            }
            serve_one_redirect(self.listener, &self.redirect_uri, &self.path).await
        })
    }
}

/// Accepts connections one at a time until a request for `path` carries a
/// `code` or an `error`; answers it with a short page and returns its URL.
async fn serve_one_redirect(
    listener: TcpListener,
    redirect_uri: &str,
    path: &str,
) -> Result<Url, AuthError> {
    let base = Url::parse(redirect_uri).map_err(|e| AuthError::Redirect(Box::new(e)))?;
    let (tx, mut rx) = mpsc::channel::<Url>(1);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted.map_err(|e| AuthError::Redirect(Box::new(e)))?,
            Some(url) = rx.recv() => return Ok(url),
        };
        let tx = tx.clone();
        let base = base.clone();
        let path = path.to_owned();
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let tx = tx.clone();
            let base = base.clone();
            let path = path.clone();
            async move {
                let hit = req.uri().path() == path
                    && req.uri().query().is_some_and(|q| {
                        url::form_urlencoded::parse(q.as_bytes())
                            .any(|(k, _)| k == "code" || k == "error")
                    });
                if !hit {
                    let mut not_found = Response::new(Full::new(Bytes::from_static(b"not found")));
                    *not_found.status_mut() = StatusCode::NOT_FOUND;
                    return Ok::<_, Infallible>(not_found);
                }
                let mut url = base.clone();
                url.set_query(req.uri().query());
                let _ = tx.try_send(url);
                let mut page = Response::new(Full::new(Bytes::from_static(DONE_PAGE.as_bytes())));
                page.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("text/html; charset=utf-8"),
                );
                Ok(page)
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .keep_alive(false)
            .serve_connection(TokioIo::new(stream), service);
        // One connection at a time, each bounded: a stray local client cannot
        // hold the listener.
        let _ = tokio::time::timeout(CONNECTION_BOUND, conn).await;
        if let Ok(url) = rx.try_recv() {
            return Ok(url);
        }
    }
}

/// The default redirect step: [`LoopbackBrowser`] where a person is at a
/// terminal (standard error is one); elsewhere (a service, CI, a container)
/// an error saying how to authorize, at once, instead of waiting minutes for
/// a browser nobody sees.
#[derive(Debug, Clone, Default)]
pub(crate) struct DefaultRedirect {
    browser: LoopbackBrowser,
}

impl RedirectStep for DefaultRedirect {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            return self.browser.prepare();
        }
        Box::pin(async { Err(AuthError::InteractionRequired) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: &str, target: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn without_a_terminal_the_default_step_fails_at_once() {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            return; // run by a person: the browser would open
        }
        let err = match DefaultRedirect::default().prepare().await {
            Err(e) => e,
            Ok(_) => panic!("no terminal, yet a browser step"),
        };
        // A variant callers can branch on, not a sentence to match.
        assert!(matches!(err, AuthError::InteractionRequired), "{err:?}");
        assert!(err.to_string().contains("no terminal"), "{err}");
    }

    #[tokio::test]
    async fn the_listener_returns_the_first_redirect_with_a_code() {
        let pending = LoopbackBrowser::new()
            .open_browser(false)
            .prepare()
            .await
            .unwrap();
        let uri = pending.redirect_uri().to_owned();
        assert!(
            uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"),
            "{uri}"
        );
        let addr = uri
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_owned();
        let wait =
            tokio::spawn(pending.finish(Url::parse("https://as.example/authorize").unwrap()));
        assert!(get(&addr, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            get(&addr, "/callback?state=only")
                .await
                .starts_with("HTTP/1.1 404")
        );
        let page = get(&addr, "/callback?code=abc&state=xyz").await;
        assert!(
            page.starts_with("HTTP/1.1 200") && page.contains("close this window"),
            "{page}"
        );
        let url = wait.await.unwrap().unwrap();
        assert_eq!(url.as_str(), format!("{uri}?code=abc&state=xyz"));
    }

    #[tokio::test]
    async fn an_authorization_url_other_than_http_or_https_is_never_opened() {
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,x",
            "vscode://open?x=1",
        ] {
            // Refused at once, instead of printed (or, with the browser on,
            // opened) and waited on.
            let pending = LoopbackBrowser::new()
                .open_browser(false)
                .prepare()
                .await
                .unwrap();
            let finished = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                pending.finish(Url::parse(bad).unwrap()),
            )
            .await
            .expect("the step waited for a redirect");
            assert!(
                matches!(finished, Err(AuthError::InsecureUrl { .. })),
                "{bad}: {finished:?}"
            );
        }
    }
}
