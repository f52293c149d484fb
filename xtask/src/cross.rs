//! `cargo xtask cross`: the workspace on Windows and macOS, from a Debian 12
//! machine with no rustup targets.
//!
//! Debian's `rustc-web` (bookworm-security) builds the standard library for
//! the target from `rust-web-src` (`cargo -Zbuild-std`; `RUSTC_BOOTSTRAP=1`
//! lets the stable compiler do it). Every build runs the workspace's crates
//! through Debian's `clippy-driver` with `-D warnings`, as `cargo clippy`
//! does (`rust-web-clippy` is the clippy of the same compiler, so it reads
//! the standard library `-Zbuild-std` builds). Then:
//!
//! 1. Windows tests, `x86_64-pc-windows-gnu`, linked with MinGW and run
//!    under Wine 8: codec, transport-core, transport-stdio (against the
//!    demo server built for Windows, behind a `.cmd` wrapper), the auth
//!    crate's unit tests (the token store's access lists), the unit tests
//!    of `mcpwire-schema` and `mcpwire-client`, every test of `mcpwire-cli`
//!    (those that need a Unix-only server or tool are ignored on Windows,
//!    each saying why), and `mcpwire tools` against the demo server. Their
//!    build is the Windows clippy run too: the crates it compiles, tests
//!    included, are linted; those it does not (the benchmark harness, the
//!    conformance client, the Unix tools) are not linted for Windows.
//! 2. `aarch64-apple-darwin`: every crate that runs on a user's machine
//!    (not the test, benchmark and conformance harnesses, which run on
//!    Linux only, nor their dependencies such as rmcp and reqwest) with
//!    every feature checked, so through clippy. There is no macOS SDK
//!    here, so ring's C is compiled freestanding with a stand-in
//!    `TargetConditionals.h`; nothing is linked, nothing is run.
//!
//! `cargo xtask cross [windows|macos]` runs one platform only. The packages
//! come from `.ci/run`; without them this says which to install. Builds go
//! to `target/cross` (their own target directory: the host's stays warm).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cmd::{DEMO_SERVER_ENV, display, run};

const WINDOWS: &str = "x86_64-pc-windows-gnu";
const MACOS: &str = "aarch64-apple-darwin";
/// The Debian packages this needs (Debian 12, bookworm-security enabled).
pub(crate) const PACKAGES: &str =
    "rustc-web cargo-web rust-web-clippy rust-web-src gcc-mingw-w64-x86-64 clang llvm wine64";
/// The `wine64` package has no entry on `PATH`.
const WINE: &str = "/usr/lib/wine/wine64";
/// Debian's compiler, by path: rustup's proxies usually come first on
/// `PATH`, and the standard library's source must match the compiler.
const RUSTC: &str = "/usr/bin/rustc";
const CARGO: &str = "/usr/bin/cargo";
/// Debian's clippy, the same compiler's: every cross build runs the
/// workspace's crates through it (see [`Env::cargo`]).
const CLIPPY: &str = "/usr/bin/clippy-driver";
/// What `cargo clippy -- -D warnings` hands the driver: every warning, the
/// compiler's and clippy's, fails the build.
const CLIPPY_DENY_WARNINGS: &str = "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__";

/// `cargo xtask cross [windows|macos]`.
pub(crate) fn cross(root: &Path, args: &[String]) -> Result<(), String> {
    let (windows, macos) = match args.first().map(String::as_str) {
        None => (true, true),
        Some("windows") => (true, false),
        Some("macos") => (false, true),
        Some(other) => {
            return Err(format!(
                "unknown argument {other}: cargo xtask cross [windows|macos]"
            ));
        }
    };
    let env = Env::new(root)?;
    let started = Instant::now();
    if windows {
        step("windows: wine prefix and the ProcessPrng stand-in", || {
            env.wine_setup()
        })?;
        step("windows: tests under wine", || env.wine_tests())?;
    }
    if macos {
        step("macos: the workspace through clippy", || {
            run(env.cargo("check", MACOS).args(MACOS_CHECKED))
        })?;
    }
    eprintln!("cross: all passed in {} s", started.elapsed().as_secs());
    Ok(())
}

/// What is type-checked on macOS: every crate a user runs, every feature.
/// New crates are in unless named here.
const MACOS_CHECKED: &[&str] = &[
    "--workspace",
    "--all-features",
    "--exclude",
    "mcpwire-test-support",
    "--exclude",
    "mcpwire-conformance",
    "--exclude",
    "mcpwire-bench-server",
    "--exclude",
    "mcpwire-bench",
    "--exclude",
    "mcpwire-faults",
    "--exclude",
    "mcpwire-interop-rmcp-server",
    "--exclude",
    "xtask",
];

/// The libraries whose tests run under Wine, and which of their
/// integration tests (see [`Env::wine_tests`]).
const LIBRARY_PACKAGES: &[&str] = &[
    "mcpwire-codec",
    "mcpwire-transport",
    "mcpwire-stdio",
    "mcpwire-auth",
    "mcpwire-schema",
    "mcpwire-client",
];
const LIBRARY_TESTS: &[&str] = &[
    "properties",
    "io",
    "io_chunking",
    "lazy_writer",
    "batching",
    "portable",
    "store",
];

fn step(name: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    eprintln!("== {name}");
    let started = Instant::now();
    let result = f();
    let secs = started.elapsed().as_secs();
    match &result {
        Ok(()) => eprintln!("== {name}: ok ({secs} s)"),
        Err(_) => eprintln!("== {name}: FAILED ({secs} s)"),
    }
    result.map_err(|e| format!("{name}: {e}"))
}

/// The toolchain and the places the cross builds use.
struct Env {
    root: PathBuf,
    target_dir: PathBuf,
    prefix: PathBuf,
    stub: PathBuf,
    /// `PATH` with `/usr/bin` first, for Debian's tools.
    path: std::ffi::OsString,
}

impl Env {
    fn new(root: &Path) -> Result<Self, String> {
        let missing = |what: &str| {
            format!(
                "{what} is missing: apt-get install -y {PACKAGES} (Debian 12 with \
                 bookworm-security; .ci/run does it)"
            )
        };
        for (path, what) in [
            (RUSTC, "Debian's rustc-web"),
            (CARGO, "Debian's cargo-web"),
            (CLIPPY, "Debian's rust-web-clippy"),
            (WINE, "wine64"),
            ("/usr/bin/x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64"),
            ("/usr/bin/clang", "clang"),
            ("/usr/bin/llvm-ar", "llvm"),
        ] {
            if !Path::new(path).exists() {
                return Err(missing(what));
            }
        }
        let sysroot = Command::new(RUSTC)
            .args(["--print", "sysroot"])
            .output()
            .map_err(|e| format!("cannot run {RUSTC}: {e}"))?;
        let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_owned();
        let src = Path::new(&sysroot).join("lib/rustlib/src/rust/library/Cargo.lock");
        if !src.is_file() {
            return Err(missing("the standard library's source (rust-web-src)"));
        }
        let target_dir = root.join("target/cross");
        let stub = target_dir.join("macos-stub-include");
        std::fs::create_dir_all(&stub).map_err(|e| format!("{}: {e}", stub.display()))?;
        // Enough of the SDK header for ring's C, which only asks what the
        // target is.
        std::fs::write(
            stub.join("TargetConditionals.h"),
            "#pragma once\n#define TARGET_OS_MAC 1\n#define TARGET_OS_OSX 1\n\
             #define TARGET_OS_IPHONE 0\n#define TARGET_OS_IOS 0\n#define TARGET_OS_TV 0\n\
             #define TARGET_OS_WATCH 0\n#define TARGET_OS_VISION 0\n\
             #define TARGET_OS_SIMULATOR 0\n#define TARGET_OS_EMBEDDED 0\n",
        )
        .map_err(|e| format!("{}: {e}", stub.display()))?;
        Ok(Self {
            root: root.to_owned(),
            prefix: target_dir.join("wineprefix"),
            target_dir,
            stub,
            path: std::env::join_paths(std::iter::once(PathBuf::from("/usr/bin")).chain(
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
            ))
            .map_err(|e| format!("PATH: {e}"))?,
        })
    }

    /// `cargo SUBCOMMAND` for `target` with Debian's toolchain, the standard
    /// library built from source, and everything the linkers and Wine need.
    fn cargo(&self, subcommand: &str, target: &str) -> Command {
        let mut cmd = Command::new("nice");
        cmd.args(["-n", "10", CARGO, subcommand])
            .args(["-Zbuild-std=std,panic_abort", "--target", target])
            // Every build here resolves features as for the whole
            // workspace, so the three Windows builds compile each
            // dependency once (per-build resolution compiled 58 of them
            // twice or more).
            .args(["-Zfeature-unification", "--config"])
            .arg("resolver.feature-unification=\"workspace\"")
            .env("RUSTC", RUSTC)
            .env("RUSTDOC", "/usr/bin/rustdoc")
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &self.target_dir)
            // As `cargo clippy` does it, but in any build: the Windows
            // tests' build lints what it compiles (a clippy run of its own
            // took 437 s of CI, the dependencies and the standard library
            // checked once more), and the macOS check is a clippy run.
            .env("RUSTC_WORKSPACE_WRAPPER", CLIPPY)
            .env("CLIPPY_ARGS", CLIPPY_DENY_WARNINGS)
            .env_remove("RUSTUP_TOOLCHAIN")
            .env("PATH", self.path.clone())
            .env(
                "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER",
                "x86_64-w64-mingw32-gcc",
            )
            .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", WINE)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("CC_aarch64_apple_darwin", "clang")
            .env("AR_aarch64_apple_darwin", "llvm-ar")
            .env(
                "CFLAGS_aarch64_apple_darwin",
                format!(
                    "-ffreestanding -nostdlibinc -DRING_CORE_NOSTDLIBINC -I{}",
                    self.stub.display()
                ),
            );
        cmd
    }

    /// A Wine prefix of our own, with the `ProcessPrng` Wine 8 lacks: Rust's
    /// standard library imports it from `bcryptprimitives.dll`, and a
    /// forwarder to `BCryptGenRandom` stands in.
    fn wine_setup(&self) -> Result<(), String> {
        if !self.prefix.join("system.reg").is_file() {
            run(Command::new(WINE)
                .args(["wineboot", "--init"])
                .env("WINEPREFIX", &self.prefix)
                .env("WINEDEBUG", "-all"))?;
        }
        let shim = self.target_dir.join("wine-shim");
        std::fs::create_dir_all(&shim).map_err(|e| format!("{}: {e}", shim.display()))?;
        let source = shim.join("bcryptprimitives.c");
        std::fs::write(&source, PROCESS_PRNG).map_err(|e| format!("{}: {e}", source.display()))?;
        let dll = shim.join("bcryptprimitives.dll");
        run(Command::new("x86_64-w64-mingw32-gcc")
            .args(["-O2", "-shared", "-o"])
            .arg(&dll)
            .arg(&source)
            .arg("-lbcrypt"))?;
        let system32 = self.prefix.join("drive_c/windows/system32");
        std::fs::copy(&dll, system32.join("bcryptprimitives.dll"))
            .map_err(|e| format!("{}: {e}", system32.display()))?;
        Ok(())
    }

    /// The Windows tests, run by cargo through Wine, then the `mcpwire`
    /// command against the demo server.
    fn wine_tests(&self) -> Result<(), String> {
        run(self
            .cargo("build", WINDOWS)
            .args(["-p", "mcpwire-demo-server", "-p", "mcpwire-cli"]))?;
        let bin = self.target_dir.join(WINDOWS).join("debug");
        let demo = bin.join("mcpwire-demo-server.exe");
        // The libraries' tests in one build: one feature resolution, and
        // both cores busy to the end (one build per package took 390 s,
        // each ending in one link at a time). What is left out, and why:
        // - the transport's tests/wakeups.rs is Unix-only (pipes,
        //   F_SETPIPE_SZ);
        // - the other stdio tests are `sh`, `cat` and `python3` scripts;
        // - of the auth crate's integration tests, only the token store's:
        //   the store (its access lists) is its one platform-specific part;
        // - the client's integration tests (28 programs) drive the client
        //   through an in-memory transport, with no code that differs by
        //   platform (neither they nor the client's sources hold a `cfg`
        //   on the OS); linking them for Windows took most of this step.
        //   The command's tests, below, cover the client against a real
        //   server on Windows.
        // The `.cmd` test's stall under Wine (1 run in 3 in a loop) was at
        // its process lister, the one unbounded call, which read a pipe;
        // the lister now writes to a file and is bounded (40 runs in a row
        // passed), so this runs once. The runner still fails a test after
        // 120 s rather than stalling CI.
        run(self
            .cargo("test", WINDOWS)
            .args(LIBRARY_PACKAGES.iter().flat_map(|p| ["-p", p]))
            .args(["--all-features", "--lib"])
            .args(LIBRARY_TESTS.iter().flat_map(|t| ["--test", t]))
            .env(DEMO_SERVER_ENV, &demo))?;
        // The command's tests (those that need a Unix-only server or tool
        // say so in their `ignore` reason), with the demo server built
        // above. insta finds the snapshots through `cargo metadata` unless
        // told where the workspace is, and Wine cannot run Linux's cargo;
        // a snapshot that differs fails rather than being written.
        let cli_tests = || {
            run(self
                .cargo("test", WINDOWS)
                .args(["-p", "mcpwire-cli", "--bins", "--tests"])
                .env(DEMO_SERVER_ENV, &demo)
                .env("INSTA_WORKSPACE_ROOT", &self.root)
                .env("INSTA_UPDATE", "no"))
        };
        // Wine 8's CreateProcess has failed to start `mcpwire.exe` with an
        // internal error (1359) in 1 run of these tests in 4 here, a test
        // of ours never involved: such a run is tried once more, and says
        // so. A second failure fails the step.
        if let Err(first) = cli_tests() {
            eprintln!(
                "cross: the command's tests failed under Wine ({first}); running them once more \
                 (Wine has failed to start a process with an internal error before)"
            );
            cli_tests()?;
        }
        self.cli_against_demo(&bin.join("mcpwire.exe"), &demo)
    }

    /// `mcpwire tools -- <demo server>` under Wine lists the demo's tools.
    fn cli_against_demo(&self, cli: &Path, demo: &Path) -> Result<(), String> {
        let mut cmd = Command::new(WINE);
        cmd.arg(cli)
            .args(["tools", "--"])
            .arg(demo)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .current_dir(&self.root);
        eprintln!("$ {}", display(&cmd));
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {WINE}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprint!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(format!("`{}` failed: {}", display(&cmd), out.status));
        }
        for tool in ["echo", "add", "crash"] {
            if !stdout.contains(tool) {
                return Err(format!("`mcpwire tools` did not list the demo's `{tool}`"));
            }
        }
        Ok(())
    }
}

/// The `ProcessPrng` stand-in for Wine 8.
const PROCESS_PRNG: &str = r#"#include <windows.h>
#include <bcrypt.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
"#;
