//! Child processes (switches) that cannot outlive whoever started them.
//!
//! A busy-polling switch left behind by a failed test holds two cores and,
//! worse, the test runner's stdout: whatever reads that pipe (`tee` in the
//! test command) waits for it forever. So a [`Spawned`] child:
//! - runs in its own process group, and is killed as a group;
//! - writes stdout and stderr to a log file of its own, never to our pipes
//!   (the log's tail is printed when it fails or when its owner panics);
//! - gets SIGKILL from the kernel when the thread that started it dies
//!   (`PR_SET_PDEATHSIG`), so even an aborted test process leaves nothing;
//! - is killed and reaped when the guard drops, panics included.
//!
//! Readiness is a file the child writes (`prism-switch --ready-file`), waited
//! for with a deadline, never a fixed sleep.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a child did not start, get ready or stop cleanly, or a binary to start was not found.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("{name}: cannot start: {error}")]
    Spawn { name: String, error: io::Error },
    /// It exited before it was ready.
    #[error("{name} exited with {status} before it was ready; its log ends:\n{log_tail}")]
    Exited { name: String, status: ExitStatus, log_tail: String },
    /// No ready file within the deadline (the child was killed).
    #[error("{name} was not ready after {:.1} s (killed); its log ends:\n{log_tail}", waited.as_secs_f64())]
    NotReady { name: String, waited: Duration, log_tail: String },
    /// SIGTERM was not enough within the deadline (the child was killed).
    #[error("{name} had not exited after {:.1} s (killed); its log ends:\n{log_tail}", waited.as_secs_f64())]
    DidNotStop { name: String, waited: Duration, log_tail: String },
    /// It stopped, but not with success.
    #[error("{name} exited with {status}; its log ends:\n{log_tail}")]
    Failed { name: String, status: ExitStatus, log_tail: String },
    #[error("{name}: {error}")]
    Io { name: String, error: io::Error },
    /// `sibling_binary`: the running program's path is unknown.
    #[error("current_exe: {0}")]
    CurrentExe(io::Error),
    /// `sibling_binary`: not next to the running program.
    #[error("{name} not found next to {}: build it first (`cargo build --workspace`)", exe.display())]
    NotBuilt { name: String, exe: PathBuf },
}

/// A running child process, killed (with its whole process group) and reaped on drop.
pub struct Spawned {
    child: Option<Child>,
    name: String,
    log: PathBuf,
}

impl Spawned {
    /// Starts `cmd` in its own process group with stdout and stderr appended
    /// to `log`, and stdin closed. `name` is what errors call it.
    pub fn spawn(cmd: &mut Command, name: &str, log: &Path) -> Result<Spawned, ProcessError> {
        let name = name.to_string();
        let io_err = |error| ProcessError::Spawn { name: name.clone(), error };
        let out = File::create(log).map_err(io_err)?;
        let err = out.try_clone().map_err(io_err)?;
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        cmd.stdin(Stdio::null()).stdout(out).stderr(err).process_group(0);
        // SAFETY: between fork and exec only async-signal-safe calls are made
        // (prctl, getppid); nothing allocates or takes a lock.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before the prctl took effect.
                if libc::getppid() != parent {
                    return Err(io::Error::other("parent exited during spawn"));
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(io_err)?;
        Ok(Spawned { child: Some(child), name, log: log.to_path_buf() })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The child's process ID (also its process group's), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The log file's last `lines` lines.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Waits until `ready` exists and holds a complete JSON document (the
    /// switch writes it whole and renames it into place), or the child
    /// exits, or `timeout` passes. On failure the child is killed.
    pub fn wait_ready(&mut self, ready: &Path, timeout: Duration) -> Result<serde_json::Value, ProcessError> {
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(ready) {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                    return Ok(v);
                }
            }
            if let Some(status) = self.try_wait()? {
                return Err(ProcessError::Exited { name: self.name.clone(), status, log_tail: self.log_tail(20) });
            }
            if start.elapsed() >= timeout {
                self.kill();
                return Err(ProcessError::NotReady { name: self.name.clone(), waited: start.elapsed(), log_tail: self.log_tail(20) });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn try_wait(&mut self) -> Result<Option<ExitStatus>, ProcessError> {
        let Some(c) = self.child.as_mut() else { return Ok(None) };
        match c.try_wait() {
            Ok(Some(st)) => {
                self.child = None;
                Ok(Some(st))
            }
            Ok(None) => Ok(None),
            Err(error) => Err(ProcessError::Io { name: self.name.clone(), error }),
        }
    }

    /// Whether the child is still running.
    pub fn running(&mut self) -> bool {
        match self.try_wait() {
            Ok(None) => self.child.is_some(),
            _ => false,
        }
    }

    /// Sends `signal` to the child alone (not its group).
    pub fn signal(&self, signal: i32) {
        if let Some(pid) = self.pid() {
            // SAFETY: a signal to our own, not yet reaped, child.
            unsafe { libc::kill(pid as i32, signal) };
        }
    }

    /// SIGTERM, then waits up to `timeout` for the exit; a child that does
    /// not stop in time is killed and reported. Success is a zero exit.
    pub fn stop(mut self, timeout: Duration) -> Result<ExitStatus, ProcessError> {
        self.signal(libc::SIGTERM);
        let start = Instant::now();
        loop {
            if let Some(status) = self.try_wait()? {
                return if status.success() { Ok(status) } else { Err(ProcessError::Failed { name: self.name.clone(), status, log_tail: self.log_tail(20) }) };
            }
            if start.elapsed() >= timeout {
                self.kill();
                return Err(ProcessError::DidNotStop { name: self.name.clone(), waited: start.elapsed(), log_tail: self.log_tail(20) });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits up to `timeout` for the child to exit by itself; one that does
    /// not is killed and reported.
    pub fn wait(mut self, timeout: Duration) -> Result<ExitStatus, ProcessError> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if start.elapsed() >= timeout {
                self.kill();
                return Err(ProcessError::DidNotStop { name: self.name.clone(), waited: start.elapsed(), log_tail: self.log_tail(20) });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The whole log file.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL to the child's whole process group, and reaps the child.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: the group was created for this child (process_group(0)),
            // and the child is not reaped yet, so its ID is still ours.
            unsafe { libc::killpg(c.id() as i32, libc::SIGKILL) };
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.child.is_none() {
            return;
        }
        if std::thread::panicking() {
            eprintln!("--- {} killed while panicking; its log ({}) ends:\n{}\n---", self.name, self.log.display(), self.log_tail(20));
        }
        self.kill();
    }
}

/// Whether a process ID names a live process (not a zombie, not gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name's closing parenthesis.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|s| s != "Z" && s != "X"),
        Err(_) => false,
    }
}

/// The prism-switch command line that tests, the bench and scripts start:
/// EAL without PCI or hugepages on `cpus` with the given `--vdev`s and file
/// prefix, then the switch's own options: its config, no rate lines, stats
/// JSON and the ready file. Callers append more of the switch's options.
pub fn switch_command(binary: &Path, prefix: &str, cpus: &str, vdevs: &[String], config: &Path, stats: &Path, ready: &Path) -> Command {
    let mut cmd = Command::new(binary);
    cmd.args(["--no-huge", "--no-pci", "-l", cpus, "-m", "256", "--log-level", "lib.eal:error"])
        .arg(format!("--file-prefix={prefix}"))
        .args(vdevs.iter().map(|v| format!("--vdev={v}")))
        .args(["--", "--config"])
        .arg(config)
        .args(["--stats-interval", "0", "--stats-json"])
        .arg(stats)
        .arg("--ready-file")
        .arg(ready);
    cmd
}

/// A binary of this workspace next to the running program (target/<profile>/,
/// also from a test in target/<profile>/deps/), with a clear error when it was not built.
pub fn sibling_binary(name: &str) -> Result<PathBuf, ProcessError> {
    let exe = std::env::current_exe().map_err(ProcessError::CurrentExe)?;
    exe.ancestors().skip(1).take(2).map(|d| d.join(name)).find(|p| p.exists()).ok_or_else(|| ProcessError::NotBuilt { name: name.into(), exe: exe.clone() })
}
