//! What a server asks of us mid-call. `elicitation/create` is asked at the
//! terminal (a form, field by field, or a URL to open) and declined, with
//! a note on stderr, where there is none. `sampling/createMessage` goes to
//! `--sampling-command` when one is given (the request's params as JSON on
//! its stdin, the result as JSON on its stdout, bounded in time and size);
//! without one it is refused, with an error the server sees and a note on
//! stderr naming the option.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::ClientConfig;
use mcpwire::client::types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
};
use mcpwire::client::{HandlerError, RequestContext};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{form, progress, tty};

/// The most a sampling command may print.
const MAX_SAMPLING_OUTPUT: u64 = 1 << 20;

/// One question at a time on the terminal, whichever request asks.
static TERMINAL: Mutex<()> = Mutex::new(());

/// Asks the person at the terminal (on a blocking thread: reading a line
/// must not hold a runtime thread).
async fn elicit(params: ElicitParams, notes: bool) -> Result<ElicitResult, HandlerError> {
    if !tty::person_present() {
        if notes {
            eprintln!(
                "note: the server asked for input ({:?}); declined: no terminal to ask it at",
                params.message.trim()
            );
        }
        return Ok(ElicitResult::new(ElicitAction::Decline, None));
    }
    let asked = tokio::task::spawn_blocking(move || {
        let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
        let _quiet = progress::pause();
        let stdin = std::io::stdin();
        form::answer(&params, &mut stdin.lock(), &mut std::io::stderr())
    })
    .await;
    // The terminal went away, or the prompt panicked: nobody answered.
    Ok(asked
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(|| ElicitResult::new(ElicitAction::Cancel, None)))
}

/// Refuses a sampling request: no model is configured.
fn no_model(notes: bool) -> HandlerError {
    if notes {
        eprintln!(
            "note: the server asked for a model's answer (sampling/createMessage); refused: \
             pass --sampling-command CMD to answer such requests"
        );
    }
    HandlerError::rejected(
        "this client has no model: sampling is answered only when mcpwire runs with --sampling-command",
    )
}

/// Runs `argv` with the request's params on its stdin; its stdout is the
/// result. Bounded by `limit` and [`MAX_SAMPLING_OUTPUT`].
async fn run_sampler(
    argv: &[String],
    params: &CreateMessageParams,
    limit: Duration,
) -> Result<CreateMessageResult, String> {
    let request = serde_json::to_vec(params).map_err(|e| e.to_string())?;
    let mut child = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", argv[0]))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let work = async move {
        // A command that does not read its input still gets to answer.
        let _ = stdin.write_all(&request).await;
        drop(stdin);
        let mut output = Vec::new();
        stdout
            .take(MAX_SAMPLING_OUTPUT + 1)
            .read_to_end(&mut output)
            .await
            .map_err(|e| format!("cannot read its output: {e}"))?;
        if output.len() as u64 > MAX_SAMPLING_OUTPUT {
            return Err(format!("it printed more than {MAX_SAMPLING_OUTPUT} bytes"));
        }
        let status = child.wait().await.map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("it exited with {status}"));
        }
        serde_json::from_slice::<CreateMessageResult>(&output)
            .map_err(|e| format!("its output is not a sampling result ({e})"))
    };
    tokio::time::timeout(limit, work)
        .await
        .map_err(|_| format!("it did not answer within {limit:?}"))?
}

/// Installs the handlers on `config`: elicitation always (form and URL
/// mode), sampling always (answered by `sampler`, else refused). `notes`:
/// say on stderr what was declined or refused (not with `--format json`,
/// whose stderr is one JSON line; the server's answer says it there).
pub(crate) fn install(
    config: ClientConfig,
    sampler: Option<Vec<String>>,
    limit: Duration,
    notes: bool,
) -> ClientConfig {
    let sampler = sampler.map(Arc::new);
    config
        .elicitation(move |params: ElicitParams, _cx: RequestContext| elicit(params, notes))
        .elicitation_url(true)
        .sampling(move |params: CreateMessageParams, _cx: RequestContext| {
            let sampler = sampler.clone();
            async move {
                let Some(argv) = sampler else {
                    return Err(no_model(notes));
                };
                run_sampler(&argv, &params, limit).await.map_err(|why| {
                    if notes {
                        eprintln!("note: --sampling-command failed: {why}");
                    }
                    HandlerError::rejected(format!("the sampling command failed: {why}"))
                })
            }
        })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn params() -> CreateMessageParams {
        serde_json::from_value(serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 10
        }))
        .unwrap()
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[tokio::test]
    async fn a_sampling_command_reads_the_request_and_answers() {
        // The answer depends on the request: it was read.
        let script = r#"grep -q '"2+2?"' && echo '{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}'"#;
        let r = run_sampler(&sh(script), &params(), Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(r.content["text"], "4");
        assert_eq!(r.model, "m");
    }

    #[tokio::test]
    async fn a_sampling_command_is_bounded_in_time_size_and_form() {
        let slow = run_sampler(&sh("sleep 5"), &params(), Duration::from_millis(200)).await;
        assert!(slow.unwrap_err().contains("did not answer within"));
        let big = run_sampler(
            &sh("head -c 2000000 /dev/zero"),
            &params(),
            Duration::from_secs(10),
        )
        .await;
        assert!(big.unwrap_err().contains("more than 1048576 bytes"));
        // Exactly the bound is read whole (and then judged as a result).
        let full = run_sampler(
            &sh("head -c 1048576 /dev/zero"),
            &params(),
            Duration::from_secs(10),
        )
        .await;
        assert!(full.unwrap_err().contains("not a sampling result"));
        let junk = run_sampler(&sh("echo nope"), &params(), Duration::from_secs(10)).await;
        assert!(junk.unwrap_err().contains("not a sampling result"));
        let failed = run_sampler(&sh("exit 3"), &params(), Duration::from_secs(10)).await;
        assert!(failed.unwrap_err().contains("exited with"));
    }
}
