//! Credentials read from environment variables (`BearerToken::from_env`,
//! `Auth::bearer_from_env`, `AssertionSource::Env`): the value is trimmed,
//! and a variable that is set but blank is as missing as one that is not.
//!
//! The variables are set on a child process (this test binary run again
//! for the one test), never on the tests' own process: changing the
//! environment of a process whose other threads may read it is undefined
//! behaviour on most platforms, which is why `set_var` is `unsafe`.

use std::process::Command;

use http::{Method, Uri};
use mcpwire_auth::{AssertionSource, Auth, AuthError, Authorizer, BearerToken};

/// Set in the child: the test then checks instead of spawning.
const CHILD: &str = "MCPWIRE_AUTH_TEST_ENV_CHILD";
/// A token with blanks around it.
const TOKEN: &str = "MCPWIRE_AUTH_TEST_ENV_TOKEN";
/// Set, but to blanks only.
const BLANK: &str = "MCPWIRE_AUTH_TEST_ENV_BLANK";

/// Runs the test `name` of this binary in a child process whose
/// environment holds [`TOKEN`] and [`BLANK`]; fails unless that test ran
/// there and passed (a filter that matched nothing would pass silently).
fn in_child(name: &str) {
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--test-threads=1"])
        .env(CHILD, "1")
        .env(TOKEN, "  tok-123 \n")
        .env(BLANK, " \t ")
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child run failed or ran no test:\n{stdout}\n{stderr}"
    );
}

fn missing(r: Result<impl std::fmt::Debug, AuthError>, var: &str) {
    match r {
        Err(AuthError::MissingCredential { what }) => assert!(what.contains(var), "{what}"),
        other => panic!("{var}: expected a missing credential, got {other:?}"),
    }
}

#[test]
fn credentials_from_the_environment_are_trimmed_and_a_blank_variable_is_missing() {
    if std::env::var_os(CHILD).is_none() {
        in_child("credentials_from_the_environment_are_trimmed_and_a_blank_variable_is_missing");
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let uri: Uri = "https://mcp.test/mcp".parse().unwrap();
        let token = BearerToken::from_env(TOKEN).unwrap();
        let headers = token.headers(&Method::POST, &uri).await.unwrap();
        let (_, value) = headers.iter().next().unwrap();
        assert_eq!(value.to_str().unwrap(), "Bearer tok-123");
        missing(BearerToken::from_env(BLANK), BLANK);

        let Auth::Bearer(setting) = Auth::bearer_from_env(TOKEN).unwrap() else {
            panic!("not a bearer setting");
        };
        let headers = setting.headers(&Method::POST, &uri).await.unwrap();
        let (_, value) = headers.iter().next().unwrap();
        assert_eq!(value.to_str().unwrap(), "Bearer tok-123");
        missing(Auth::bearer_from_env(BLANK), BLANK);

        let read = AssertionSource::Env(TOKEN.into()).read().await.unwrap();
        assert_eq!(read.expose(), "tok-123");
        missing(AssertionSource::Env(BLANK.into()).read().await, BLANK);
    });
}
