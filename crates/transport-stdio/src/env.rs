//! The child's environment and the resolution of its command.

use std::ffi::{OsStr, OsString};
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::{InheritEnv, StdioConfig};

/// The variables a server inherits from this process by default: enough to
/// find programs and a home directory, nothing that usually holds a secret.
/// Everything else must be passed with [`StdioConfig::env`] or allowed
/// wholesale with [`StdioConfig::inherit_env`].
///
/// The list depends on the platform:
///
/// - Linux and other Unix systems: `HOME`, `LOGNAME`, `PATH`, `SHELL`,
///   `TERM`, `USER`.
/// - macOS: the same and `TMPDIR`, which is where macOS keeps each user's
///   temporary directory (`/tmp` is shared).
/// - Windows: `PATH` and `PATHEXT` (to find programs), `SystemRoot`,
///   `windir`, `SystemDrive` and `COMSPEC` (without them sockets, `cmd.exe`
///   and much of the system fail), the user's folders (`USERPROFILE`,
///   `HOMEDRIVE`, `HOMEPATH`, `APPDATA`, `LOCALAPPDATA`, `TEMP`, `TMP`,
///   `PUBLIC`, `ALLUSERSPROFILE`), the program folders (`ProgramData`,
///   `ProgramFiles`, `ProgramFiles(x86)`, `ProgramW6432`,
///   `CommonProgramFiles`), and `USERNAME`, `USERDOMAIN`, `COMPUTERNAME`,
///   `OS`, `PROCESSOR_ARCHITECTURE`, `NUMBER_OF_PROCESSORS`. Names are
///   matched without regard to case, as Windows does.
#[cfg(all(unix, not(target_os = "macos")))]
pub const SAFE_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variables a server inherits from this process by default (see the
/// Linux documentation for the list on each platform).
#[cfg(target_os = "macos")]
pub const SAFE_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "USER"];

/// The variables a server inherits from this process by default (see the
/// Linux documentation for the list on each platform).
#[cfg(windows)]
pub const SAFE_ENV_VARS: &[&str] = &[
    "ALLUSERSPROFILE",
    "APPDATA",
    "COMPUTERNAME",
    "COMSPEC",
    "CommonProgramFiles",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "NUMBER_OF_PROCESSORS",
    "OS",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PUBLIC",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "SystemDrive",
    "SystemRoot",
    "TEMP",
    "TMP",
    "USERDOMAIN",
    "USERNAME",
    "USERPROFILE",
    "windir",
];

/// Whether two variable names are the same: exactly on Unix, without regard
/// to ASCII case on Windows (where `Path` and `PATH` are one variable).
pub(crate) fn same_key(a: &OsStr, b: &OsStr) -> bool {
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// The child's value of `name`, the last one set.
fn child_var<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| same_key(k, OsStr::new(name)))
        .map(|(_, v)| v.as_os_str())
}

/// The environment the child gets: the allow-list (or everything), then the
/// caller's variables over it.
pub(crate) fn child_env(config: &StdioConfig) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = if config.inherit_env == InheritEnv::All {
        std::env::vars_os().collect()
    } else {
        SAFE_ENV_VARS
            .iter()
            .filter_map(|k| {
                let v = std::env::var_os(k)?;
                // A value starting with "()" is an exported shell function,
                // which the allow-list is not meant to carry.
                (!v.as_encoded_bytes().starts_with(b"()")).then(|| (OsString::from(k), v))
            })
            .collect()
    };
    for (k, v) in &config.env {
        env.retain(|(ek, _)| !same_key(ek, k));
        if let Some(v) = v {
            env.push((k.clone(), v.clone()));
        }
    }
    env
}

/// Finds the program to run the way `execvp` would, against the child's
/// `PATH`, so errors can name the file we actually tried.
///
/// A command containing a `/` is taken as a path (relative to the child's
/// working directory); otherwise each `PATH` entry is tried in order.
#[cfg(unix)]
pub(crate) fn resolve_command(
    command: &OsStr,
    env: &[(OsString, OsString)],
    cwd: Option<&Path>,
) -> Result<PathBuf, String> {
    let bytes = command.as_encoded_bytes();
    if bytes.is_empty() {
        return Err("the command is empty".into());
    }
    if bytes.contains(&b'/') {
        let path = match cwd {
            Some(dir) if Path::new(command).is_relative() => dir.join(command),
            _ => PathBuf::from(command),
        };
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!("`{}` is not an executable file", path.display()))
        };
    }
    let path = child_var(env, "PATH").unwrap_or_default().to_owned();
    for dir in std::env::split_paths(&path) {
        let dir = match cwd {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir,
        };
        let candidate = dir.join(command);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!(
        "`{}` was not found on PATH ({})",
        command.to_string_lossy(),
        path.to_string_lossy()
    ))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The extensions Windows tries when none is given, from the child's
/// `PATHEXT` (Windows' own default if it has none).
#[cfg(windows)]
fn path_extensions(env: &[(OsString, OsString)]) -> Vec<String> {
    let pathext = child_var(env, "PATHEXT")
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pathext = if pathext.trim().is_empty() {
        ".COM;.EXE;.BAT;.CMD"
    } else {
        pathext.as_str()
    };
    pathext
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(str::to_owned)
        .collect()
}

/// The program `base` names: itself if it already ends with one of `exts`,
/// else the first of `base` + each extension that is a file. `npx` is thus
/// `npx.cmd`, never npm's extensionless shell script beside it.
#[cfg(windows)]
fn with_extension(base: &Path, exts: &[String]) -> Option<PathBuf> {
    let has_ext = base.extension().is_some_and(|e| {
        exts.iter()
            .any(|x| x[1..].eq_ignore_ascii_case(&e.to_string_lossy()))
    });
    if has_ext {
        return base.is_file().then(|| base.to_owned());
    }
    exts.iter().find_map(|ext| {
        // PATHEXT is upper case by custom; file names rarely are, and the
        // name shows in messages (the file system ignores the case).
        let mut name = base.as_os_str().to_owned();
        name.push(ext.to_ascii_lowercase());
        let candidate = PathBuf::from(name);
        candidate.is_file().then_some(candidate)
    })
}

/// Finds the program to run the way a Windows user expects: a command
/// without a directory is looked up in each entry of the child's `PATH`,
/// with each extension of its `PATHEXT` (so `npx` is `npx.cmd` and `uvx` is
/// `uvx.exe`); errors name what was tried.
///
/// A command with a directory (`\`, `/` or a drive) is taken as a path,
/// relative to the child's working directory. Unlike `cmd.exe`, the current
/// directory is not searched first: a file dropped there cannot stand in for
/// a program.
#[cfg(windows)]
pub(crate) fn resolve_command(
    command: &OsStr,
    env: &[(OsString, OsString)],
    cwd: Option<&Path>,
) -> Result<PathBuf, String> {
    if command.is_empty() {
        return Err("the command is empty".into());
    }
    let exts = path_extensions(env);
    let as_path = Path::new(command);
    if as_path.components().count() > 1 || as_path.has_root() {
        let path = match cwd {
            Some(dir) if as_path.is_relative() => dir.join(as_path),
            _ => as_path.to_owned(),
        };
        return with_extension(&path, &exts).ok_or_else(|| {
            format!(
                "`{}` is not a program file (extensions tried: {})",
                path.display(),
                exts.join(";")
            )
        });
    }
    let path = child_var(env, "PATH").unwrap_or_default().to_owned();
    for dir in std::env::split_paths(&path) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let dir = match cwd {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir,
        };
        if let Some(found) = with_extension(&dir.join(command), &exts) {
            return Ok(found);
        }
    }
    Err(format!(
        "`{}` was not found on PATH ({}) with any of {}",
        command.to_string_lossy(),
        path.to_string_lossy(),
        exts.join(";")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn resolves_on_the_childs_path_and_names_what_failed() {
        let env = vec![(
            OsString::from("PATH"),
            OsString::from("/nonexistent:/bin:/usr/bin"),
        )];
        let sh = resolve_command(OsStr::new("sh"), &env, None).unwrap();
        assert!(sh.ends_with("sh") && sh.is_absolute(), "{}", sh.display());
        let err = resolve_command(OsStr::new("no-such-mcp-server-xyz"), &env, None).unwrap_err();
        assert!(
            err.contains("no-such-mcp-server-xyz") && err.contains("/nonexistent"),
            "{err}"
        );
        let err =
            resolve_command(OsStr::new("./missing"), &env, Some(Path::new("/tmp"))).unwrap_err();
        assert!(err.contains("/tmp/./missing"), "{err}");
        let empty = vec![(OsString::from("PATH"), OsString::from(""))];
        assert!(resolve_command(OsStr::new("sh"), &empty, None).is_err());
    }

    #[test]
    fn caller_variables_override_and_secrets_stay_out() {
        let config = StdioConfig::new("x").env("PATH", "/only").env("EXTRA", "1");
        let env = child_env(&config);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.clone());
        assert_eq!(get("PATH"), Some("/only".into()));
        assert_eq!(get("EXTRA"), Some("1".into()));
        assert_eq!(env.iter().filter(|(k, _)| k == "PATH").count(), 1);
        for (k, _) in &env {
            let k = k.to_string_lossy();
            assert!(
                SAFE_ENV_VARS.contains(&k.as_ref()) || k == "EXTRA",
                "{k} leaked"
            );
        }
    }

    #[test]
    fn a_removed_variable_is_gone_until_set_again() {
        let config = StdioConfig::new("x")
            .env("EXTRA", "1")
            .env_remove("EXTRA")
            .env_remove("HOME")
            .env("LATER", "1")
            .env_remove("LATER")
            .env("LATER", "2");
        let env = child_env(&config);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.clone());
        assert_eq!(get("EXTRA"), None);
        assert_eq!(get("HOME"), None, "an inherited variable is removed too");
        assert_eq!(get("LATER"), Some("2".into()));
    }

    #[cfg(windows)]
    #[test]
    fn pathext_finds_cmd_and_exe_wrappers_and_never_the_bare_script() {
        let dir = std::env::temp_dir().join(format!("mcpwire-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["npx", "npx.cmd", "uvx.exe", "node.exe", "notes.txt"] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let env = vec![
            (OsString::from("Path"), OsString::from(r"C:\nonexistent;")),
            (OsString::from("PATH"), dir.clone().into_os_string()),
            (
                OsString::from("PATHEXT"),
                OsString::from(".COM;.EXE;.BAT;.CMD"),
            ),
        ];
        let found = |c: &str| resolve_command(OsStr::new(c), &env, None);
        assert_eq!(found("npx").unwrap(), dir.join("npx.cmd"));
        assert_eq!(found("uvx").unwrap(), dir.join("uvx.exe"));
        assert_eq!(found("node.exe").unwrap(), dir.join("node.exe"));
        let err = found("notes").unwrap_err();
        assert!(err.contains("notes") && err.contains(".CMD"), "{err}");
        let by_path = dir.join("npx");
        assert_eq!(
            resolve_command(by_path.as_os_str(), &env, None).unwrap(),
            dir.join("npx.cmd")
        );
        assert_eq!(
            resolve_command(OsStr::new(r".\uvx"), &env, Some(&dir)).unwrap(),
            dir.join(r".\uvx.exe")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(windows)]
    #[test]
    fn names_match_without_regard_to_case_on_windows() {
        let config = StdioConfig::new("x").env("Path", r"C:\only");
        let env = child_env(&config);
        let paths: Vec<_> = env
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("path"))
            .collect();
        assert_eq!(paths.len(), 1, "{paths:?}");
        assert_eq!(paths[0].1, r"C:\only");
        let inherited = child_env(&StdioConfig::new("x"));
        for name in ["SystemRoot", "PATH"] {
            assert!(
                inherited.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)),
                "{name} is not passed on: {inherited:?}"
            );
        }
    }
}
