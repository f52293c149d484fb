//! `ProcessEnvironment` reads this process's real environment (the other
//! tests use maps, so they never touch it): a variable cargo sets for every
//! test run is found with its value, and an unset one is `None`.

use mcpwire_config::{Environment, ProcessEnvironment};

#[test]
fn the_process_environment_reads_real_variables() {
    assert_eq!(
        ProcessEnvironment.var("CARGO_PKG_NAME").as_deref(),
        Some("mcpwire-config"),
        "cargo sets CARGO_PKG_NAME when it runs a test"
    );
    assert_eq!(
        ProcessEnvironment.var("MCPWIRE_CONFIG_TEST_SURELY_UNSET_4f1d"),
        None
    );
}
