//! The manager's [`Error`]: what went wrong at the fleet's level (a name
//! that routes nowhere, a server that failed, a call a hook denied), with the
//! client's error, when there is one, as its source.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::Error as ClientError;
use mcpwire_config::{NameError, ResolveError};

/// Which hook denied a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookStage {
    /// Before the call was sent: the server never saw it.
    Before,
    /// After the server answered: the answer is withheld.
    After,
}

/// An error from the manager.
///
/// Cheap to clone (causes are shared). Branch on the variant; `Display`
/// says what happened at the fleet's level and what to do, and the cause
/// (the client's error for a failed request or connection) is
/// [`source`](std::error::Error::source). Message text is not stable.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No tool has this public name. Nothing was sent.
    #[error("no tool is named {name:?}{}", did_you_mean(suggestions))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest public names, best first (at most three).
        suggestions: Vec<String>,
    },
    /// No prompt has this public name. Nothing was sent.
    #[error("no prompt is named {name:?}{}", did_you_mean(suggestions))]
    UnknownPrompt {
        /// The name asked for.
        name: String,
        /// The closest public names, best first (at most three).
        suggestions: Vec<String>,
    },
    /// No server lists this resource or a template it matches.
    #[error("no server offers the resource {uri:?}")]
    UnknownResource {
        /// The URI asked for.
        uri: String,
    },
    /// No server has this name.
    #[error("no server is named {name:?}")]
    UnknownServer {
        /// The name asked for.
        name: String,
    },
    /// The tool exists but the server's include or exclude list leaves it
    /// out: it is neither listed nor callable. Nothing was sent.
    #[error(
        "tool {tool:?} of server {server:?} is left out by the server's include or exclude list"
    )]
    Filtered {
        /// The server.
        server: String,
        /// The tool's own name.
        tool: String,
    },
    /// The tool's definition changed since it was approved (see
    /// [`Pins`](crate::Pins)): it is neither listed nor callable until it
    /// is approved again ([`Manager::approve`](crate::Manager::approve)).
    /// Nothing was sent.
    #[error(
        "tool {tool:?} of server {server:?} changed since it was approved: review it, then approve the server's tools again to call it"
    )]
    Unapproved {
        /// The server.
        server: String,
        /// The tool's own name.
        tool: String,
    },
    /// The tool is meant for its server's MCP Apps view alone, not for a
    /// model (see [`ItemSkip::AppOnly`](crate::ItemSkip::AppOnly)): it is
    /// not listed, and the manager does not call it. Nothing was sent.
    #[error(
        "tool {tool:?} of server {server:?} is for the server's own app view, not for a model; call it through that server's client"
    )]
    AppOnly {
        /// The server.
        server: String,
        /// The tool's own name.
        tool: String,
    },
    /// Several servers claim this public name and the collision policy is
    /// [`Collisions::Error`](crate::Collisions::Error). Nothing was sent.
    #[error(
        "{name:?} is claimed by more than one server ({}); choose a collision policy or rename a server",
        servers.join(", ")
    )]
    Collision {
        /// The public name.
        name: String,
        /// The servers claiming it, in declaration order.
        servers: Vec<String>,
    },
    /// The server is connected only on request
    /// ([`ConnectPolicy::Manual`](crate::ConnectPolicy::Manual)) and is not.
    #[error("server {server:?} is not connected; connect it with Manager::connect")]
    NotConnected {
        /// The server.
        server: String,
    },
    /// The server failed earlier, so the call was not sent; its failure is
    /// the source. `.retry_failed()` on the call, or
    /// [`Manager::retry_failed`](crate::Manager::retry_failed), tries again.
    #[error("server {server:?} has failed; the call was not sent")]
    ServerFailed {
        /// The server.
        server: String,
        /// Why it failed.
        #[source]
        cause: Arc<Error>,
    },
    /// The server did not connect, hand-shake and list its catalogue
    /// within its start-up timeout; it was stopped.
    #[error("server {server:?} did not start within {timeout:?}")]
    StartupTimeout {
        /// The server.
        server: String,
        /// Its start-up timeout.
        timeout: Duration,
    },
    /// The server could not be connected (the source says why: a process
    /// that did not start, a refused connection, a 401...).
    #[error("server {server:?} could not be connected")]
    Connect {
        /// The server.
        server: String,
        /// The client's error.
        #[source]
        source: ClientError,
    },
    /// A request to the server failed (the server's own error, a timeout,
    /// a lost connection, an outcome that is unknown...): the client's
    /// error is the source; branch on its
    /// [`kind`](mcpwire_client::Error::kind).
    #[error("the request to server {server:?} failed")]
    Request {
        /// The server.
        server: String,
        /// The client's error.
        #[source]
        source: ClientError,
    },
    /// A call's arguments could not be turned into JSON for the hooks.
    #[error("the arguments of {tool:?} could not be serialized")]
    Arguments {
        /// The public name called.
        tool: String,
        /// serde's error.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// A hook denied the call.
    #[error("the call to {name:?} was denied: {reason}")]
    Denied {
        /// The public name called.
        name: String,
        /// The server it routes to.
        server: String,
        /// The hook's reason.
        reason: String,
        /// Before sending (the server never saw it) or after the answer
        /// (the answer is withheld).
        stage: HookStage,
    },
    /// A server marked required failed to start; every server was closed.
    #[error("required server {server:?} did not start; the fleet was closed")]
    RequiredServerFailed {
        /// The server.
        server: String,
        /// Why it did not start.
        #[source]
        source: Arc<Error>,
    },
    /// A server's name cannot prefix tool names (see
    /// [`validate_server_name`](mcpwire_config::validate_server_name)).
    #[error("the server name {name:?} cannot be used")]
    InvalidServerName {
        /// The name.
        name: String,
        /// The rule it breaks.
        #[source]
        source: NameError,
    },
    /// Two servers have the same name.
    #[error("two servers are named {name:?}")]
    DuplicateServer {
        /// The name.
        name: String,
    },
    /// A configuration entry could not be resolved (an unset variable, an
    /// unreadable env file, an unsupported transport).
    #[error("server {server:?} could not be resolved from its configuration")]
    Resolve {
        /// The server.
        server: String,
        /// The configuration crate's error (it names the file and field).
        #[source]
        source: Arc<ResolveError>,
    },
    /// A saved catalogue could not be read, parsed or written.
    #[error("the saved catalogue {} could not be used", path.display())]
    SavedCatalogue {
        /// The file (empty for text given directly).
        path: PathBuf,
        /// The I/O or JSON error.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The server left the fleet ([`Manager::remove`](crate::Manager::remove),
    /// a replacement or a reload) while the request was on its way to it.
    /// Nothing was sent.
    #[error("server {server:?} was removed from the fleet")]
    Removed {
        /// The server.
        server: String,
    },
    /// The manager was closed.
    #[error("the manager is closed")]
    Closed,
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean {one:?}?"),
        many => {
            let quoted: Vec<String> = many.iter().map(|s| format!("{s:?}")).collect();
            format!("; did you mean one of {}?", quoted.join(", "))
        }
    }
}

impl Error {
    /// The server the error is about, when there is one.
    pub fn server(&self) -> Option<&str> {
        match self {
            Error::Filtered { server, .. }
            | Error::Unapproved { server, .. }
            | Error::AppOnly { server, .. }
            | Error::NotConnected { server }
            | Error::ServerFailed { server, .. }
            | Error::StartupTimeout { server, .. }
            | Error::Connect { server, .. }
            | Error::Request { server, .. }
            | Error::Denied { server, .. }
            | Error::RequiredServerFailed { server, .. }
            | Error::Resolve { server, .. }
            | Error::Removed { server } => Some(server),
            Error::UnknownServer { name }
            | Error::InvalidServerName { name, .. }
            | Error::DuplicateServer { name } => Some(name),
            _ => None,
        }
    }

    /// The client's error at the root of this one, if any (a failed
    /// request, a connection that failed), for its
    /// [`kind`](mcpwire_client::Error::kind) and accessors.
    pub fn client_error(&self) -> Option<&ClientError> {
        match self {
            Error::Connect { source, .. } | Error::Request { source, .. } => Some(source),
            Error::ServerFailed { cause, .. } => cause.client_error(),
            Error::RequiredServerFailed { source, .. } => source.client_error(),
            _ => None,
        }
    }

    /// The suggested names of an unknown tool or prompt.
    pub fn suggestions(&self) -> &[String] {
        match self {
            Error::UnknownTool { suggestions, .. } | Error::UnknownPrompt { suggestions, .. } => {
                suggestions
            }
            _ => &[],
        }
    }

    /// True when the server asked for (other) credentials: an HTTP 401 or
    /// 403 at connection or on a request.
    pub fn is_authorization(&self) -> bool {
        self.client_error()
            .is_some_and(mcpwire_client::Error::is_authorization)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_suggests_names_and_keeps_the_cause_in_source() {
        let e = Error::UnknownTool {
            name: "reed".into(),
            suggestions: vec!["fs__read".into(), "git__read".into()],
        };
        assert_eq!(
            e.to_string(),
            r#"no tool is named "reed"; did you mean one of "fs__read", "git__read"?"#
        );
        let e = Error::UnknownTool {
            name: "x".into(),
            suggestions: vec![],
        };
        assert_eq!(e.to_string(), r#"no tool is named "x""#);

        let inner = Error::StartupTimeout {
            server: "slow".into(),
            timeout: Duration::from_secs(1),
        };
        let e = Error::ServerFailed {
            server: "slow".into(),
            cause: Arc::new(inner),
        };
        assert!(!e.to_string().contains("within"), "one level: {e}");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.to_string().contains("within 1s"), "{source}");
        assert_eq!(e.server(), Some("slow"));
    }
}
