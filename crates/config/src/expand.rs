//! Variable references in values: `${VAR}`, `${VAR:-default}`,
//! `${env:VAR}`, and the editor's `${workspaceFolder}`, `${userHome}`,
//! `${input:ID}`, and where their values come from.
//!
//! The environment is read through [`Environment`], never directly, so a
//! test (or a host with its own idea of the environment) decides what is
//! set. Everything that is not an environment variable goes to a
//! caller-supplied [`VariableResolver`].

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// A variable reference, as written between `${` and `}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Variable<'a> {
    /// An environment variable: `${NAME}` (Claude Code, Windsurf, Gemini
    /// CLI), `${NAME:-default}` (Claude Code; the default when unset or
    /// empty, as in a POSIX shell) or `${env:NAME}` (VS Code, Cursor).
    /// `NAME` is letters, digits and `_`, not starting with a digit.
    Env {
        /// The variable's name.
        name: &'a str,
        /// The default, if given.
        default: Option<&'a str>,
    },
    /// One of the editors' predefined variables: `workspaceFolder`,
    /// `workspaceFolderBasename`, `userHome`, `pathSeparator`, `/`, `cwd`.
    Predefined(&'a str),
    /// `${input:ID}`: a value the user is asked for (VS Code's `inputs`).
    Input(&'a str),
    /// Any other `${PREFIX:ARGUMENT}` (`file:`, `config:`, `command:`...),
    /// left to the resolver.
    Other {
        /// Before the first `:`.
        prefix: &'a str,
        /// After it.
        argument: &'a str,
    },
}

const PREDEFINED: [&str; 6] = [
    "workspaceFolder",
    "workspaceFolderBasename",
    "userHome",
    "pathSeparator",
    "/",
    "cwd",
];

impl<'a> Variable<'a> {
    /// Reads the text between `${` and `}`; `None` if it is no variable
    /// (empty, or a name with characters a name cannot hold).
    pub fn parse(text: &'a str) -> Option<Variable<'a>> {
        if PREDEFINED.contains(&text) {
            return Some(Variable::Predefined(text));
        }
        if let Some(rest) = text.strip_prefix("env:") {
            return env(rest);
        }
        if let Some(id) = text.strip_prefix("input:") {
            return (!id.is_empty()).then_some(Variable::Input(id));
        }
        if let Some(variable) = env(text) {
            return Some(variable);
        }
        match text.split_once(':') {
            Some((prefix, argument)) if is_name(prefix) && !text.contains(":-") => {
                Some(Variable::Other { prefix, argument })
            }
            _ => None,
        }
    }
}

fn env(text: &str) -> Option<Variable<'_>> {
    let (name, default) = match text.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (text, None),
    };
    is_name(name).then_some(Variable::Env { name, default })
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where environment variables come from.
///
/// Implemented for [`ProcessEnvironment`] (this process's environment) and
/// for maps, so tests never touch the real environment.
pub trait Environment {
    /// The value of `name`, or `None` if it is unset (or not Unicode).
    fn var(&self, name: &str) -> Option<String>;
}

/// This process's environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Environment for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl Environment for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl<E: Environment + ?Sized> Environment for &E {
    fn var(&self, name: &str) -> Option<String> {
        (**self).var(name)
    }
}

/// Answers the variables that are not environment variables
/// ([`Variable::Predefined`], [`Variable::Input`], [`Variable::Other`]).
///
/// Implemented for closures and for [`StandardVariables`]. Asking the user
/// for an `${input:ID}` is the caller's: the loader never prompts.
pub trait VariableResolver {
    /// The value of `variable`, or `None` if it has none.
    fn resolve(&self, variable: &Variable<'_>) -> Option<String>;
}

impl<F> VariableResolver for F
where
    F: Fn(&Variable<'_>) -> Option<String>,
{
    fn resolve(&self, variable: &Variable<'_>) -> Option<String> {
        self(variable)
    }
}

/// A resolver for the common case: the workspace folder, the user's home,
/// and inputs answered ahead of time.
///
/// ```
/// use mcpwire_config::{StandardVariables, Variable, VariableResolver};
///
/// let vars = StandardVariables::new()
///     .workspace_folder("/src/app")
///     .input("api-key", "k");
/// assert_eq!(vars.resolve(&Variable::Predefined("workspaceFolderBasename")).as_deref(), Some("app"));
/// assert_eq!(vars.resolve(&Variable::Input("api-key")).as_deref(), Some("k"));
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct StandardVariables {
    workspace_folder: Option<PathBuf>,
    user_home: Option<PathBuf>,
    inputs: BTreeMap<String, String>,
}

impl std::fmt::Debug for StandardVariables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Input answers are often secrets (API keys): only their ids show.
        f.debug_struct("StandardVariables")
            .field("workspace_folder", &self.workspace_folder)
            .field("user_home", &self.user_home)
            .field("inputs", &self.inputs.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl StandardVariables {
    /// Nothing known.
    pub fn new() -> Self {
        Self::default()
    }

    /// `${workspaceFolder}` (and `${workspaceFolderBasename}`, its last
    /// component).
    pub fn workspace_folder(mut self, path: impl Into<PathBuf>) -> Self {
        self.workspace_folder = Some(path.into());
        self
    }

    /// `${userHome}`.
    pub fn user_home(mut self, path: impl Into<PathBuf>) -> Self {
        self.user_home = Some(path.into());
        self
    }

    /// The answer to `${input:ID}`.
    pub fn input(mut self, id: impl Into<String>, value: impl Into<String>) -> Self {
        self.inputs.insert(id.into(), value.into());
        self
    }
}

impl VariableResolver for StandardVariables {
    fn resolve(&self, variable: &Variable<'_>) -> Option<String> {
        let text = |p: &PathBuf| p.to_string_lossy().into_owned();
        match *variable {
            Variable::Predefined("workspaceFolder") => self.workspace_folder.as_ref().map(text),
            Variable::Predefined("workspaceFolderBasename") => self
                .workspace_folder
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned()),
            Variable::Predefined("userHome") => self.user_home.as_ref().map(text),
            Variable::Predefined("pathSeparator" | "/") => {
                Some(std::path::MAIN_SEPARATOR.to_string())
            }
            Variable::Input(id) => self.inputs.get(id).cloned(),
            _ => None,
        }
    }
}

/// What to do with a variable that has no value and no default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnsetVariable {
    /// Fail with [`ResolveError::UnsetVariable`](crate::ResolveError::UnsetVariable),
    /// naming the file, server, field and variable. The default: a literal
    /// `${TOKEN}` sent as a header makes an endless 401 loop.
    #[default]
    Error,
    /// Leave the reference as written (`${TOKEN}`), with a warning. What
    /// VS Code and Claude Code do.
    Keep,
    /// Replace it with the empty string, with a warning. What a POSIX shell
    /// does.
    Empty,
}

/// A template after expansion.
pub(crate) struct Expanded {
    pub(crate) text: String,
    /// The references that had no value, as written between the braces.
    pub(crate) unset: Vec<String>,
    /// A `${` without `}`, or a `${...}` that is no variable, was left as is.
    pub(crate) malformed: bool,
}

/// Expands every reference in `template`: environment variables through
/// `env`, the rest through `vars`. Unset ones are kept or emptied by
/// `unset` (for [`UnsetVariable::Error`] they are kept, and the caller
/// fails on [`Expanded::unset`]). Expansion is one pass: a value that
/// itself holds `${...}` is not expanded again.
pub(crate) fn expand(
    template: &str,
    env: &dyn Environment,
    vars: &dyn VariableResolver,
    unset: UnsetVariable,
) -> Expanded {
    let mut out = Expanded {
        text: String::with_capacity(template.len()),
        unset: Vec::new(),
        malformed: false,
    };
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.text.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.malformed = true;
            out.text.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let whole = &rest[start..start + 2 + end + 1];
        rest = &after[end + 1..];
        let Some(variable) = Variable::parse(inner) else {
            out.malformed = true;
            out.text.push_str(whole);
            continue;
        };
        let value = match variable {
            Variable::Env { name, default } => match (env.var(name), default) {
                (Some(v), Some(d)) if v.is_empty() => Some(d.to_owned()),
                (Some(v), _) => Some(v),
                (None, Some(d)) => Some(d.to_owned()),
                (None, None) => None,
            },
            other => vars.resolve(&other),
        };
        match value {
            Some(v) => out.text.push_str(&v),
            None => {
                out.unset.push(inner.to_owned());
                if unset != UnsetVariable::Empty {
                    out.text.push_str(whole);
                }
            }
        }
    }
    out.text.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> HashMap<String, String> {
        [("TOKEN", "t0k"), ("EMPTY", ""), ("HOME", "/home/u")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into()
    }

    fn none(_: &Variable<'_>) -> Option<String> {
        None
    }

    #[test]
    fn parses_every_syntax() {
        assert_eq!(
            Variable::parse("TOKEN"),
            Some(Variable::Env {
                name: "TOKEN",
                default: None
            })
        );
        assert_eq!(
            Variable::parse("URL:-http://x:1/y"),
            Some(Variable::Env {
                name: "URL",
                default: Some("http://x:1/y")
            })
        );
        assert_eq!(
            Variable::parse("env:API_KEY"),
            Some(Variable::Env {
                name: "API_KEY",
                default: None
            })
        );
        assert_eq!(
            Variable::parse("workspaceFolder"),
            Some(Variable::Predefined("workspaceFolder"))
        );
        assert_eq!(Variable::parse("/"), Some(Variable::Predefined("/")));
        assert_eq!(
            Variable::parse("input:api-key"),
            Some(Variable::Input("api-key"))
        );
        assert_eq!(
            Variable::parse("file:/run/secret"),
            Some(Variable::Other {
                prefix: "file",
                argument: "/run/secret"
            })
        );
        for bad in ["", "1X", "a b", "input:", "env:", ":x", "a-b"] {
            assert_eq!(Variable::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn expands_with_and_without_defaults() {
        let e = expand("Bearer ${TOKEN}", &env(), &none, UnsetVariable::Error);
        assert_eq!(
            (e.text.as_str(), e.unset.len(), e.malformed),
            ("Bearer t0k", 0, false)
        );
        let e = expand(
            "${NOPE:-fallback}/${env:TOKEN}",
            &env(),
            &none,
            UnsetVariable::Error,
        );
        assert_eq!(e.text, "fallback/t0k");
        // Like a shell's `:-`, an empty value takes the default too.
        let e = expand(
            "[${EMPTY:-d}][${EMPTY}]",
            &env(),
            &none,
            UnsetVariable::Error,
        );
        assert_eq!(e.text, "[d][]");
        // The default is literal: no second expansion.
        let e = expand("${NOPE:-${TOKEN}", &env(), &none, UnsetVariable::Error);
        assert_eq!(e.text, "${TOKEN");
    }

    #[test]
    fn unset_variables_are_kept_or_emptied_and_reported() {
        let e = expand("a${NOPE}b${input:k}c", &env(), &none, UnsetVariable::Keep);
        assert_eq!(e.text, "a${NOPE}b${input:k}c");
        assert_eq!(e.unset, ["NOPE", "input:k"]);
        let e = expand("a${NOPE}b", &env(), &none, UnsetVariable::Empty);
        assert_eq!(e.text, "ab");
        assert_eq!(e.unset, ["NOPE"]);
    }

    #[test]
    fn non_environment_variables_go_to_the_resolver() {
        let vars = StandardVariables::new()
            .workspace_folder("/w/proj")
            .user_home("/home/u")
            .input("key", "secret");
        let e = expand(
            "${workspaceFolder}|${workspaceFolderBasename}|${userHome}|${input:key}|${input:other}",
            &env(),
            &vars,
            UnsetVariable::Keep,
        );
        assert_eq!(e.text, "/w/proj|proj|/home/u|secret|${input:other}");
        assert_eq!(e.unset, ["input:other"]);
        // A closure works as a resolver.
        let by_closure = |v: &Variable<'_>| match v {
            Variable::Other {
                prefix: "file",
                argument,
            } => Some(format!("<{argument}>")),
            _ => None,
        };
        assert_eq!(
            expand("${file:/x}", &env(), &by_closure, UnsetVariable::Error).text,
            "</x>"
        );
    }

    #[test]
    fn malformed_references_are_left_as_written() {
        for template in ["${", "a${b", "${}", "${not a name}", "x}${"] {
            let e = expand(template, &env(), &none, UnsetVariable::Error);
            assert_eq!(e.text, template);
            assert!(e.malformed, "{template:?}");
            assert!(e.unset.is_empty());
        }
        let e = expand("$TOKEN and $", &env(), &none, UnsetVariable::Error);
        assert_eq!((e.text.as_str(), e.malformed), ("$TOKEN and $", false));
    }
}
