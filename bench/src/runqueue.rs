//! Time the benchmark's busy threads lost to other tasks on their own CPU,
//! and which tasks those were, from the kernel's per-thread schedstat.
//!
//! `/proc/<pid>/task/<tid>/schedstat` holds three counters: time on the
//! CPU (ns), time waiting on a run queue while ready to run (ns), and
//! timeslices. A busy-polling thread is always ready, so its run-queue wait
//! over a run is exactly the time another task held its CPU: a kernel
//! thread, a timer, another process (not the hypervisor, whose steal the
//! guest's scheduler does not see; `noise` catches that). The kernel moves
//! a running thread's counters at its ticks and switches, so a run of a
//! few milliseconds may read 0. On the 2-CPU VMs these reports are made
//! on, a kernel thread (kdamond.0, the host's DAMON pageout) ran up to 8 ms
//! at a time on pktgen's CPU: wire-to-wire tails of near a millisecond that
//! neither switch caused.

use std::collections::HashMap;
use std::path::Path;

/// One thread's counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedStat {
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
}

impl SchedStat {
    /// The three counters of a schedstat file's text (`None`: not that shape).
    pub fn parse(text: &str) -> Option<SchedStat> {
        let mut it = text.split_whitespace().map(str::parse::<u64>);
        let (Some(Ok(run_ns)), Some(Ok(wait_ns)), Some(Ok(slices)), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return None;
        };
        Some(SchedStat { run_ns, wait_ns, slices })
    }

    fn read(path: &Path) -> Option<SchedStat> {
        SchedStat::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// The calling thread's ID (the `tid` of a `Snapshot`).
    pub fn this_tid() -> u32 {
        // SAFETY: gettid has no arguments and cannot fail.
        unsafe { libc::gettid() as u32 }
    }

    /// The calling thread's.
    pub fn this_thread() -> Option<SchedStat> {
        SchedStat::read(Path::new("/proc/thread-self/schedstat"))
    }

    /// What changed from `before` (counters only grow; a reset reads 0).
    pub fn since(&self, before: &SchedStat) -> SchedStat {
        SchedStat { run_ns: self.run_ns.saturating_sub(before.run_ns), wait_ns: self.wait_ns.saturating_sub(before.wait_ns), slices: self.slices.saturating_sub(before.slices) }
    }
}

/// Every thread on the machine: (pid, tid) to its name and counters.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    threads: HashMap<(u32, u32), (String, SchedStat)>,
}

impl Snapshot {
    /// Reads /proc (threads that end while it reads are skipped).
    pub fn take() -> Snapshot {
        let mut threads = HashMap::new();
        let numeric = |name: &std::ffi::OsStr| name.to_str().and_then(|s| s.parse::<u32>().ok());
        let Ok(procs) = std::fs::read_dir("/proc") else { return Snapshot { threads } };
        for p in procs.flatten() {
            let Some(pid) = numeric(&p.file_name()) else { continue };
            let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else { continue };
            for t in tasks.flatten() {
                let Some(tid) = numeric(&t.file_name()) else { continue };
                let Some(st) = SchedStat::read(&t.path().join("schedstat")) else { continue };
                let name = std::fs::read_to_string(t.path().join("comm")).map(|s| s.trim().to_string()).unwrap_or_default();
                threads.insert((pid, tid), (name, st));
            }
        }
        Snapshot { threads }
    }

    /// The thread of `pid` that ran longest since `before` (a polling thread spins).
    pub fn busiest_since(&self, before: &Snapshot, pid: u32) -> Option<u32> {
        self.threads.keys().filter(|(p, _)| *p == pid).max_by_key(|k| self.ran_since(before, k)).map(|(_, tid)| *tid)
    }

    /// A thread's run time since `before` (all of it if it is new there; 0 if gone).
    fn ran_since(&self, before: &Snapshot, k: &(u32, u32)) -> u64 {
        let Some((_, st)) = self.threads.get(k) else { return 0 };
        before.threads.get(k).map_or(st.run_ns, |(_, b)| st.run_ns.saturating_sub(b.run_ns))
    }

    pub fn thread(&self, pid: u32, tid: u32) -> Option<SchedStat> {
        self.threads.get(&(pid, tid)).map(|(_, st)| *st)
    }

    /// The threads other than `measured` ((pid, tid): the busy threads
    /// themselves; their processes' other threads, DPDK's interrupt and
    /// control threads, may be what took a CPU) that ran longest between
    /// `before` and `self`, most first: (name, ns on a CPU). Threads that
    /// ended in between are not in `self`, so not counted.
    pub fn others_since(&self, before: &Snapshot, measured: &[(u32, u32)], top: usize) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self.threads.iter().filter(|(k, _)| !measured.contains(k)).map(|(k, (name, _))| (name.clone(), self.ran_since(before, k))).filter(|(_, ns)| *ns > 0).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(top);
        v
    }
}

/// What the software side's busy threads lost to other tasks over a run.
#[derive(Debug, Clone, Default)]
pub struct RunQueue {
    /// Wall time of the run, s.
    pub seconds: f64,
    /// pktgen's thread (the ranks: this process's memif client).
    pub pktgen: Option<SchedStat>,
    /// The switch's polling thread.
    pub switch_poller: Option<SchedStat>,
    /// Other tasks that ran meanwhile, most CPU time first (name, ns).
    pub others: Vec<(String, u64)>,
}

impl RunQueue {
    pub fn to_json(&self) -> serde_json::Value {
        let st = |s: &Option<SchedStat>| s.map(|s| serde_json::json!({"run_ns": s.run_ns, "wait_ns": s.wait_ns, "timeslices": s.slices}));
        serde_json::json!({
            "seconds": self.seconds,
            "pktgen": st(&self.pktgen),
            "switch_poller": st(&self.switch_poller),
            "others_run_ns": self.others.iter().map(|(n, ns)| serde_json::json!({"task": n, "run_ns": ns})).collect::<Vec<_>>(),
        })
    }

    /// One paragraph for report.md.
    pub fn describe(&self) -> String {
        let ms = |s: &Option<SchedStat>| s.map_or("not read".to_string(), |s| format!("{:.2} ms", s.wait_ns as f64 / 1e6));
        let mut t = format!(
            "Run-queue wait over the {:.2} s of operations (each thread's /proc schedstat: ready to run while another task held its CPU): pktgen's thread {}, the switch's polling thread {}.",
            self.seconds,
            ms(&self.pktgen),
            ms(&self.switch_poller)
        );
        if !self.others.is_empty() {
            let list: Vec<String> = self.others.iter().map(|(n, ns)| format!("{n} {:.2} ms", *ns as f64 / 1e6)).collect();
            t += &format!(" Other tasks' CPU time meanwhile (tasks that ended before the run did are not counted), most first: {}.", list.join(", "));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedstat_line_is_three_counters() {
        assert_eq!(SchedStat::parse("62938291055 43633073525 31081\n"), Some(SchedStat { run_ns: 62938291055, wait_ns: 43633073525, slices: 31081 }));
        assert_eq!(SchedStat::parse("1 2"), None);
        assert_eq!(SchedStat::parse("1 2 3 4"), None);
        assert_eq!(SchedStat::parse("1 x 3"), None);
    }

    #[test]
    fn this_threads_run_time_grows_while_it_spins() {
        let before = SchedStat::this_thread().expect("/proc/thread-self/schedstat (CONFIG_SCHED_INFO)");
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(80) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let d = SchedStat::this_thread().expect("schedstat").since(&before);
        let wall = t.elapsed().as_nanos() as u64;
        // The spin ran (run time in ns, moved at the scheduler's ticks and
        // switches, 10 ms apart at most), and running plus waiting cannot
        // exceed the wall time: the first two fields, in ns. (How much of
        // it ran depends on the machine's load and the hypervisor's steal.)
        assert!(d.run_ns > 0 && d.run_ns + d.wait_ns <= wall + 20_000_000, "{d:?} in {wall} ns");
    }

    #[test]
    fn a_snapshot_finds_the_thread_that_ran_most_since_the_last() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let before = Snapshot::take();
        let s2 = stop.clone();
        let spinner = std::thread::spawn(move || {
            let me = SchedStat::this_tid();
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            me
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        let snap = Snapshot::take();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let tid = spinner.join().expect("spinner");
        let pid = std::process::id();
        let spun = snap.thread(pid, tid).expect("the spinning thread is in the snapshot");
        assert!(spun.run_ns > 0, "{spun:?}");
        // (Other tests may run beside this one: the busiest ran at least as long.)
        let busiest = snap.busiest_since(&before, pid).expect("a busiest thread");
        assert!(snap.ran_since(&before, &(pid, busiest)) >= spun.run_ns);
    }

    fn snap(rows: &[(u32, u32, &str, u64)]) -> Snapshot {
        Snapshot { threads: rows.iter().map(|&(p, t, n, run)| ((p, t), (n.to_string(), SchedStat { run_ns: run, wait_ns: 0, slices: 1 }))).collect() }
    }

    #[test]
    fn others_are_every_thread_but_the_measured_ones_by_time_run_since() {
        let before = snap(&[(1, 1, "pktgen", 100), (1, 2, "eal-intr", 10), (7, 7, "kdamond.0", 50), (9, 9, "idle", 5)]);
        let after = snap(&[(1, 1, "pktgen", 900), (1, 2, "eal-intr", 40), (7, 7, "kdamond.0", 350), (9, 9, "idle", 5), (11, 11, "new", 20)]);
        // pktgen's own other thread counts; the measured thread and one that did not run do not.
        assert_eq!(after.others_since(&before, &[(1, 1)], 5), vec![("kdamond.0".to_string(), 300), ("eal-intr".to_string(), 30), ("new".to_string(), 20)]);
        assert_eq!(after.others_since(&before, &[(1, 1)], 1).len(), 1);
        assert_eq!(after.busiest_since(&before, 1), Some(1));
        // By the run since, not in all: thread 2 ran longer before.
        let b2 = snap(&[(1, 1, "a", 0), (1, 2, "b", 1_000)]);
        let a2 = snap(&[(1, 1, "a", 500), (1, 2, "b", 1_100)]);
        assert_eq!(a2.busiest_since(&b2, 1), Some(1));
    }
}
