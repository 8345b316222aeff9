//! The test harness itself: a test that fails with a switch running leaves no
//! switch behind, whether it panics (the guard's drop) or its whole process
//! dies without unwinding (the kernel's parent-death signal).
// Starts prism-switch (a DPDK program): with the `dpdk` feature only (the default).
#![cfg(feature = "dpdk")]

use prism_dataplane::fixtures::SwitchToml;
use prism_pktgen::process::{alive, switch_command, Spawned};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn switch_binary() -> PathBuf {
    prism_pktgen::process::sibling_binary("prism-switch").unwrap_or_else(|e| panic!("{e}"))
}

/// prism-switch busy-polling a null device, waited for until ready.
fn start_switch(tag: &str) -> Spawned {
    let dir = std::env::temp_dir();
    let cfg = dir.join(format!("prism-harness-{tag}.toml"));
    let ready = dir.join(format!("prism-harness-{tag}.ready"));
    std::fs::write(&cfg, SwitchToml::new(&["net_null0"]).to_string()).unwrap();
    let mut cmd = switch_command(&switch_binary(), &format!("prism-harness-{tag}"), "0", &["net_null0".to_string()], &cfg, &dir.join(format!("prism-harness-{tag}.json")), &ready);
    let mut sw = Spawned::spawn(&mut cmd, "prism-switch", &dir.join(format!("prism-harness-{tag}.log"))).unwrap();
    let r = sw.wait_ready(&ready, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["pid"].as_u64(), sw.pid().map(u64::from), "the ready file is this switch's");
    sw
}

fn wait_gone(pid: u32, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn a_test_that_panics_with_a_switch_running_leaves_no_switch() {
    let mut pid = None;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let sw = start_switch(&format!("p{}", std::process::id()));
        pid = sw.pid();
        assert!(alive(pid.unwrap()), "the switch runs before the panic");
        panic!("a failing assertion, on purpose");
    }));
    assert!(outcome.is_err(), "the closure panicked");
    let pid = pid.expect("the switch had started");
    // The guard's drop killed and reaped it during unwinding: gone at once.
    assert!(!alive(pid), "prism-switch {pid} outlived the panicking test");
}

const CHILD_ENV: &str = "PRISM_HARNESS_PID_FILE";

/// Run twice: by the test runner (it re-runs this very test in a child test
/// process and watches), and in that child (which starts a switch, writes
/// its PID, and aborts: no unwinding, no destructors).
#[test]
fn a_test_process_that_dies_outright_leaves_no_switch() {
    if let Some(pid_file) = std::env::var_os(CHILD_ENV) {
        let sw = start_switch(&format!("a{}", std::process::id()));
        std::fs::write(&pid_file, sw.pid().unwrap().to_string()).unwrap();
        std::process::abort();
    }
    let pid_file = std::env::temp_dir().join(format!("prism-harness-child-{}.pid", std::process::id()));
    let _ = std::fs::remove_file(&pid_file);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_test_process_that_dies_outright_leaves_no_switch", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &pid_file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = wait_with_deadline(&mut child, Duration::from_secs(60));
    assert!(!status.success(), "the child test aborted");
    let pid: u32 = read_pid(&pid_file);
    assert!(wait_gone(pid, Duration::from_secs(10)), "prism-switch {pid} outlived its aborted test process");
    let _ = std::fs::remove_file(&pid_file);
}

fn read_pid(p: &Path) -> u32 {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e} (the child test never started its switch)", p.display())).trim().parse().unwrap()
}

fn wait_with_deadline(child: &mut std::process::Child, within: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child test did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
