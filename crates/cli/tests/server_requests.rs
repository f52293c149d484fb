//! What a server asks of the CLI mid-call, without a terminal: an
//! elicitation is declined with a note on stderr; a sampling request is
//! refused naming `--sampling-command`, or answered by that command. (On a
//! terminal, elicitation is asked field by field: see tmux.rs.)

mod support;

use support::{demo_str, mcpwire, stderr, stdout};

#[test]
fn without_a_terminal_an_elicitation_is_declined_with_a_note() {
    let out = mcpwire()
        .args(["call", "ask_user", "--", &demo_str()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "the user chose \"decline\"\n");
    assert_eq!(
        stderr(&out),
        "note: the server asked for input (\"What is your name?\"); declined: no terminal to ask it at\n"
    );
}

#[test]
fn a_sampling_request_is_refused_naming_the_option() {
    let out = mcpwire()
        .args(["call", "ask_llm", "prompt=hi", "--", &demo_str()])
        .output()
        .unwrap();
    // The server saw the refusal and said so in its result.
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("sampling failed: this client has no model: sampling is answered only when mcpwire runs with --sampling-command"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).starts_with(
            "note: the server asked for a model's answer (sampling/createMessage); refused: pass --sampling-command CMD"
        ),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_sampling_command_answers_with_what_it_read() {
    // The "model": echoes the prompt it was given back, reversed in case.
    let script = r#"sh -c 'p=$(sed -n "s/.*\"text\":\"\([^\"]*\)\".*/\1/p" | tr a-z A-Z); printf "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"%s\"},\"model\":\"shout\"}" "$p"'"#;
    let out = mcpwire()
        .args([
            "--sampling-command",
            script,
            "call",
            "ask_llm",
            "prompt=quiet please",
            "--",
            &demo_str(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "the model said: QUIET PLEASE\n");
    // A command that fails: the server is told, and so is the user.
    let out = mcpwire()
        .args([
            "--sampling-command",
            "sh -c 'exit 7'",
            "call",
            "ask_llm",
            "prompt=x",
            "--",
            &demo_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note: --sampling-command failed: it exited with"),
        "{}",
        stderr(&out)
    );
}
