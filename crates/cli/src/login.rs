//! `login URL|NAME` and `logout URL|NAME`: the OAuth browser flow of the
//! auth crate, with the tokens kept in a [`FileStore`] that every later
//! command reads; `--non-interactive` fails with exit 3 instead of opening
//! a browser.

use mcpwire::auth::{FileStore, LoopbackBrowser, OAuth, TokenStore};
use mcpwire::{HttpClient, HttpConfig};
use serde_json::json;

use crate::args::Global;
use crate::commands::Shown;
use crate::failure::{Exit, Failure};
use crate::target::{self, oauth_config, token_dir};

/// The remote server named by `explicit`, `-s` or `--`, and its URL.
fn remote(
    global: &Global,
    server_command: &[String],
    explicit: Option<&str>,
) -> Result<(target::Target, String), Failure> {
    let chosen = target::select(global, server_command, explicit)?;
    let url = chosen.url().map(str::to_owned).ok_or_else(|| {
        Failure::usage(format!(
            "{} is a local server: login is for remote (HTTP) servers",
            chosen.describe()
        ))
    })?;
    Ok((chosen, url))
}

/// The key the token store files an authorization under: the server's
/// URL without query or fragment, and without a lone trailing slash (the
/// canonical resource URI of RFC 8707, as the auth crate forms it).
pub(crate) fn canonical_resource(url: &str) -> Result<String, Failure> {
    let mut u = url::Url::parse(url)
        .map_err(|e| Failure::caused(Exit::Usage, format!("{url:?} is not a URL"), e))?;
    u.set_fragment(None);
    u.set_query(None);
    let s = u.as_str();
    Ok(if u.path() == "/" {
        s.trim_end_matches('/').to_owned()
    } else {
        s.to_owned()
    })
}

/// Authorizes now, in the browser (or fails with exit 3 when
/// non-interactive), and keeps the tokens.
pub(crate) async fn login(
    global: &Global,
    server_command: &[String],
    explicit: Option<&str>,
) -> Result<Shown, Failure> {
    let (chosen, url) = remote(global, server_command, explicit)?;
    let http = HttpClient::new(HttpConfig::new())
        .map_err(|e| Failure::caused(Exit::Usage, "cannot make an HTTP client", e))?;
    // Logging in is asking for the browser: open it even where stderr is
    // not a terminal (the URL is printed too), unless non-interactive.
    let config = if global.non_interactive {
        oauth_config(global)
    } else {
        oauth_config(global).redirect(LoopbackBrowser::new())
    };
    let oauth = OAuth::new(&url, config, http.fetcher())
        .map_err(|e| Failure::caused(Exit::Auth, format!("cannot authorize with {url}"), e))?;
    oauth.authorize().await.map_err(|e| {
        let failure = Failure::caused(Exit::Auth, format!("login to {url} failed"), e);
        target::auth_failure(global, &chosen, failure)
    })?;
    let issuer = oauth.issuer().unwrap_or_default();
    let dir = token_dir(global);
    Ok(Shown {
        json: json!({"server": url, "issuer": issuer, "tokenDir": dir.display().to_string()}),
        items: None,
        text: format!(
            "logged in to {url} (authorization server {issuer}); tokens kept in {}\n",
            dir.display()
        ),
        failure: None,
    })
}

/// Removes every authorization kept for the server.
pub(crate) async fn logout(
    global: &Global,
    server_command: &[String],
    explicit: Option<&str>,
) -> Result<Shown, Failure> {
    let (_, url) = remote(global, server_command, explicit)?;
    let resource = canonical_resource(&url)?;
    let store = FileStore::new(token_dir(global));
    let kept = store
        .load(&resource)
        .await
        .map_err(|e| Failure::caused(Exit::Usage, "cannot read the token store", e))?;
    for entry in &kept {
        store
            .remove(&entry.issuer, &entry.resource)
            .await
            .map_err(|e| Failure::caused(Exit::Usage, "cannot update the token store", e))?;
    }
    let text = if kept.is_empty() {
        format!("no tokens kept for {url}\n")
    } else {
        format!(
            "logged out of {url} ({} authorization(s) removed)\n",
            kept.len()
        )
    };
    Ok(Shown {
        json: json!({"server": url, "removed": kept.len()}),
        items: None,
        text,
        failure: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_canonical() {
        assert_eq!(
            canonical_resource("HTTPS://Example.com:443/").unwrap(),
            "https://example.com"
        );
        assert_eq!(
            canonical_resource("https://e.com/mcp?x=1#f").unwrap(),
            "https://e.com/mcp"
        );
    }
}
