//! Why a command failed, and the exit code that says so: 1 usage or
//! internal error, 3 authorization, 4 unreachable or transport failure,
//! 5 tool error, 6 blocked by the pins, 130 interrupted.

use std::error::Error as StdError;
use std::fmt;

use mcpwire::ErrorKind;
use serde_json::{Value, json};

/// The exit codes, as the command's help lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 1: bad usage, or something went wrong on our side.
    Usage = 1,
    /// 3: authorization required or failed.
    Auth = 3,
    /// 4: the server could not be reached, or the transport failed.
    Unreachable = 4,
    /// 5: the tool reported an error (`isError`), or there is no such tool.
    Tool = 5,
    /// 6: the tool or prompt is held back by `--pins`: its definition
    /// changed since it was approved.
    Unapproved = 6,
    /// 130: interrupted by Ctrl-C (the request was cancelled).
    Interrupted = 130,
}

impl Exit {
    fn label(self) -> &'static str {
        match self {
            Exit::Usage => "usage",
            Exit::Auth => "authorization",
            Exit::Unreachable => "unreachable",
            Exit::Tool => "tool",
            Exit::Unapproved => "unapproved",
            Exit::Interrupted => "interrupted",
        }
    }
}

/// How much of a failure's causes to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// The message and the deepest cause (the default).
    Short,
    /// Every cause (`-v`).
    Full,
}

/// A failed command: what to tell the user, the exit code, and the cause.
#[derive(Debug)]
pub(crate) struct Failure {
    exit: Exit,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
    /// What happened in the user's words, and what to do, when the cause
    /// is known: shown instead of the deepest cause unless `-v`.
    plain: Option<Plain>,
}

/// A known cause, said plainly, and the fix.
#[derive(Debug)]
struct Plain {
    what: String,
    hint: String,
}

/// An authorization failure the user can act on, found in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthCause {
    /// The server publishes no OAuth metadata: it wants a token.
    TokenRequired,
    /// Authorizing needs a person at a browser, and there is none.
    InteractionRequired,
    /// The server answered 401 or 403 to the credentials sent.
    Refused,
}

impl Failure {
    /// A failure with no cause beyond its message.
    pub(crate) fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
            source: None,
            plain: None,
        }
    }

    /// Bad usage (exit 1).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, message)
    }

    /// `message`, caused by `source`.
    pub(crate) fn caused(
        exit: Exit,
        message: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self {
            exit,
            message: message.into(),
            source: Some(Box::new(source)),
            plain: None,
        }
    }

    /// Says `what` happened (instead of the deepest cause) and `hint` (the
    /// fix); `-v` still shows every cause.
    pub(crate) fn plainly(mut self, what: impl Into<String>, hint: impl Into<String>) -> Self {
        self.plain = Some(Plain {
            what: what.into(),
            hint: hint.into(),
        });
        self
    }

    /// The authorization failure in the chain a user can act on, if any.
    pub(crate) fn auth_cause(&self) -> Option<AuthCause> {
        use mcpwire::auth::AuthError;
        let mut cause: Option<&(dyn StdError + 'static)> = self.source.as_deref().map(|s| s as _);
        while let Some(c) = cause {
            match c.downcast_ref::<AuthError>() {
                Some(AuthError::TokenRequired { .. }) => return Some(AuthCause::TokenRequired),
                Some(AuthError::InteractionRequired) => {
                    return Some(AuthCause::InteractionRequired);
                }
                Some(AuthError::Unauthorized { .. }) => return Some(AuthCause::Refused),
                _ => {}
            }
            if let Some(mcpwire::http::Error::Authorization(_)) =
                c.downcast_ref::<mcpwire::http::Error>()
            {
                return Some(AuthCause::Refused);
            }
            cause = c.source();
        }
        None
    }

    /// A client error while doing `what`, with the exit code its kind means.
    pub(crate) fn client(what: &str, error: mcpwire::Error) -> Self {
        let exit = exit_of(&error);
        Self::caused(exit, what, error)
    }

    /// A client error during `tools/call`: a JSON-RPC error from the server
    /// (an unknown tool, invalid arguments) is a tool error.
    pub(crate) fn tool_call(tool: &str, error: mcpwire::Error) -> Self {
        let exit = match error.kind() {
            ErrorKind::Server | ErrorKind::SchemaValidation => Exit::Tool,
            _ => exit_of(&error),
        };
        Self::caused(exit, format!("calling tool {tool:?} failed"), error)
    }

    /// The exit code.
    pub(crate) fn exit(&self) -> Exit {
        self.exit
    }

    /// The message and each cause, outermost first.
    fn chain(&self) -> Vec<String> {
        let mut out = vec![self.message.clone()];
        let mut cause: Option<&(dyn StdError + 'static)> = self.source.as_deref().map(|s| s as _);
        while let Some(c) = cause {
            let text = c.to_string();
            if out.last() != Some(&text) {
                out.push(text);
            }
            cause = c.source();
        }
        out
    }

    /// What a person reads: the message and its causes, all of them with
    /// `-v` (`Detail::Full`); otherwise the message and the deepest cause
    /// (where the specific words usually are), then a hint when the cause
    /// is one a person can fix.
    pub(crate) fn text(&self, detail: Detail) -> String {
        let chain = self.chain();
        let mut text = match (detail, &self.plain, chain.len()) {
            (Detail::Short, Some(plain), _) => format!("{}: {}", chain[0], plain.what),
            (Detail::Full, _, _) | (_, _, 0..=2) => chain.join(": "),
            (Detail::Short, None, _) => format!("{}: {}", chain[0], chain[chain.len() - 1]),
        };
        let hint = self.plain.as_ref().map(|p| p.hint.as_str()).or(self.hint());
        if let Some(hint) = hint {
            text.push_str("\n  hint: ");
            text.push_str(hint);
        }
        text
    }

    /// The last lines a local server wrote to stderr before the failure,
    /// if the cause is such a server's.
    pub(crate) fn stderr_tail(&self) -> &[String] {
        let mut cause: Option<&(dyn StdError + 'static)> = self.source.as_deref().map(|s| s as _);
        while let Some(c) = cause {
            if let Some(e) = c.downcast_ref::<mcpwire::Error>()
                && !e.stderr_tail().is_empty()
            {
                return e.stderr_tail();
            }
            cause = c.source();
        }
        &[]
    }

    /// Advice for a cause a person can fix, found anywhere in the chain.
    fn hint(&self) -> Option<&'static str> {
        let mut cause: Option<&(dyn StdError + 'static)> = self.source.as_deref().map(|s| s as _);
        while let Some(c) = cause {
            if let Some(mcpwire::http::Error::NoEndpoint { status, .. }) =
                c.downcast_ref::<mcpwire::http::Error>()
                && matches!(status, 404 | 405)
            {
                return Some(
                    "nothing here speaks MCP: check the URL's path (servers often use /mcp, or /sse for the old transport)",
                );
            }
            if let Some(io) = c.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return Some(
                    "nothing listens there: is the server running, on that host and port?",
                );
            }
            cause = c.source();
        }
        None
    }

    /// One JSON object, for `--format json`.
    pub(crate) fn json(&self) -> Value {
        let chain = self.chain();
        let mut error = json!({
            "exit": self.exit as i32,
            "kind": self.exit.label(),
            "message": chain[0],
            "causes": &chain[1..],
        });
        if let Some(plain) = &self.plain {
            error["summary"] = json!(plain.what);
            error["hint"] = json!(plain.hint);
        }
        json!({ "error": error })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Failure {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|s| s as _)
    }
}

/// The exit code a client error means.
pub(crate) fn exit_of(error: &mcpwire::Error) -> Exit {
    match error.kind() {
        ErrorKind::Authorization => Exit::Auth,
        ErrorKind::Connect | ErrorKind::Transport | ErrorKind::Closed | ErrorKind::Timeout => {
            if chain_mentions_authorization(error) {
                Exit::Auth
            } else {
                Exit::Unreachable
            }
        }
        ErrorKind::Cancelled => Exit::Interrupted,
        _ => Exit::Usage,
    }
}

/// An authorization failure can surface as a connect error (the
/// authorizer could not be built, the browser step refused): look for one
/// in the chain.
fn chain_mentions_authorization(error: &mcpwire::Error) -> bool {
    let mut cause: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(c) = cause {
        if c.downcast_ref::<mcpwire::auth::AuthError>().is_some() {
            return true;
        }
        if c.downcast_ref::<mcpwire::Error>()
            .is_some_and(mcpwire::Error::is_authorization)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Root;
    impl fmt::Display for Root {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("connection refused")
        }
    }
    impl StdError for Root {}

    #[derive(Debug)]
    struct Middle(Root);
    impl fmt::Display for Middle {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the request could not be delivered")
        }
    }
    impl StdError for Middle {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_long_chain_shows_its_ends_unless_asked_for_all() {
        let f = Failure::caused(Exit::Unreachable, "cannot connect", Middle(Root));
        assert_eq!(f.text(Detail::Short), "cannot connect: connection refused");
        assert_eq!(
            f.text(Detail::Full),
            "cannot connect: the request could not be delivered: connection refused"
        );
    }

    #[test]
    fn a_refused_connection_gets_a_hint() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let f = Failure::caused(Exit::Unreachable, "cannot connect", refused);
        assert!(
            f.text(Detail::Short)
                .contains("\n  hint: nothing listens there"),
            "{}",
            f.text(Detail::Short)
        );
        assert!(
            !Failure::caused(Exit::Usage, "x", Root)
                .text(Detail::Short)
                .contains("hint")
        );
    }

    #[test]
    fn the_chain_is_printed_once_each_and_as_json() {
        let f = Failure::caused(Exit::Unreachable, "connecting failed", Root);
        assert_eq!(
            f.text(Detail::Short),
            "connecting failed: connection refused"
        );
        let v = f.json();
        assert_eq!(v["error"]["exit"], 4);
        assert_eq!(v["error"]["kind"], "unreachable");
        assert_eq!(v["error"]["causes"][0], "connection refused");
    }

    #[test]
    fn client_errors_map_to_exit_codes() {
        assert_eq!(exit_of(&mcpwire::Error::connect(Root)), Exit::Unreachable);
    }
}
