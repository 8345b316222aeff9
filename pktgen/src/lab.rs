//! A spine-leaf tree of real prism-switch processes on veth pairs (needs root
//! and iproute2): the wiring `tree::TreeJob` expects, for tests, the bench and
//! `scripts/tree.sh`. Each switch is its own process with DPDK's
//! `net_af_packet` on two interfaces; pktgen holds one interface per leaf.

use crate::process::{ProcessError, Spawned};
use crate::tree::TreeNode;
use prism_dataplane::fixtures::{leaf_mac, SwitchToml, AM_MAC, ROOT_MAC};
use prism_dataplane::switch::config::L2Mode;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a switch may take to bring its ports up and start polling.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the lab could not be built, changed or stopped.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("ip: {0} (apt-get install iproute2)")]
    NoIp(io::Error),
    /// An `ip` command (its arguments) failed.
    #[error("ip {0} failed (root needed)")]
    Ip(String),
    #[error("the lab wires two leaves (the root has two ports)")]
    Leaves,
    #[error("no such node")]
    NoSuchNode,
    #[error("{0} is not running")]
    NotRunning(String),
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: io::Error },
    /// The switch binary could not be started.
    #[error("{}: {source}", binary.display())]
    Spawn { binary: PathBuf, source: ProcessError },
    /// A switch did not get ready or did not stop cleanly.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// A switch's final stats are not JSON.
    #[error(transparent)]
    Stats(#[from] serde_json::Error),
}

fn ip(args: &[&str]) -> Result<(), LabError> {
    let st = Command::new("ip").args(args).status().map_err(LabError::NoIp)?;
    if st.success() {
        Ok(())
    } else {
        Err(LabError::Ip(args.join(" ")))
    }
}

/// A node's prism-switch configuration in the tree's wiring. Leaves: the AM
/// and the ranks behind port 0, the root behind port 1 (its CONTROL is
/// relayed by Layer 2). Root: leaf i behind port i, the AM behind port 0.
pub fn config_text(node: TreeNode) -> String {
    let t = SwitchToml::new(&["net_af_packet0", "net_af_packet1"]);
    match node {
        TreeNode::Leaf(l) => t.mac(leaf_mac(l)).l2(L2Mode::Static, &[(AM_MAC, 0), (ROOT_MAC, 1)]),
        TreeNode::Root => t.mac(ROOT_MAC).l2(L2Mode::Drop, &[]),
    }
    .to_string()
}

/// How to start the switches.
#[derive(Debug, Clone)]
pub struct LabOptions {
    pub binary: PathBuf,
    /// `--impair` of every switch (None: a clean network).
    pub impair: Option<String>,
    pub rto_us: u64,
    /// Sleep when idle, so three switches and pktgen share a small machine.
    pub idle_sleep_us: u64,
}

struct Proc {
    node: TreeNode,
    child: Option<Spawned>,
    stats: PathBuf,
    /// Written by the switch once its ports are up and its worker polls.
    ready: PathBuf,
    log: PathBuf,
    config: PathBuf,
    ifaces: [String; 2],
    cpu: usize,
    /// The network namespace the switch and its interfaces live in (DPDK's
    /// net_af_packet joins a PACKET_FANOUT group named by pid and ifindex,
    /// which can collide between processes sharing one namespace).
    netns: String,
}

/// The tree: veth pairs and one prism-switch process per node.
pub struct Lab {
    tag: String,
    pairs: Vec<(String, String)>,
    procs: Vec<Proc>,
    opts: LabOptions,
    leaves: u16,
    /// pktgen's interfaces, one per leaf (link port `i` = leaf `i`).
    pub pktgen_ifaces: Vec<String>,
}

impl Lab {
    /// Creates the veth pairs and starts the root and `leaves` leaves.
    pub fn start(tag: &str, leaves: u16, opts: LabOptions) -> Result<Lab, LabError> {
        let mut pairs = Vec::new();
        let mut pktgen_ifaces = Vec::new();
        let mut procs = Vec::new();
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut root_ifaces = Vec::new();
        for i in 0..leaves {
            // pktgen <-> leaf port 0, leaf port 1 <-> root port i.
            let down = (format!("{tag}g{i}"), format!("{tag}l{i}a"));
            let up = (format!("{tag}l{i}u"), format!("{tag}s{i}"));
            for (a, b) in [&down, &up] {
                let _ = Command::new("ip").args(["link", "del", a]).stderr(Stdio::null()).status();
                ip(&["link", "add", a, "type", "veth", "peer", "name", b])?;
                for n in [a, b] {
                    let _ = Command::new("sysctl").args(["-qw", &format!("net.ipv6.conf.{n}.disable_ipv6=1")]).status();
                    ip(&["link", "set", n, "up"])?;
                }
                pairs.push((a.clone(), b.clone()));
            }
            pktgen_ifaces.push(down.0.clone());
            root_ifaces.push(up.1.clone());
            procs.push(Proc {
                node: TreeNode::Leaf(i),
                child: None,
                stats: std::env::temp_dir().join(format!("prism-{tag}-leaf{i}.json")),
                ready: std::env::temp_dir().join(format!("prism-{tag}-leaf{i}.ready")),
                log: std::env::temp_dir().join(format!("prism-{tag}-leaf{i}.log")),
                config: std::env::temp_dir().join(format!("prism-{tag}-leaf{i}.toml")),
                ifaces: [down.1.clone(), up.0.clone()],
                cpu: i as usize % cpus,
                netns: format!("{tag}n{i}"),
            });
        }
        if leaves != 2 {
            return Err(LabError::Leaves);
        }
        procs.push(Proc {
            node: TreeNode::Root,
            child: None,
            stats: std::env::temp_dir().join(format!("prism-{tag}-root.json")),
            ready: std::env::temp_dir().join(format!("prism-{tag}-root.ready")),
            log: std::env::temp_dir().join(format!("prism-{tag}-root.log")),
            config: std::env::temp_dir().join(format!("prism-{tag}-root.toml")),
            ifaces: [root_ifaces[0].clone(), root_ifaces[1].clone()],
            cpu: (leaves as usize) % cpus,
            netns: format!("{tag}nr"),
        });
        for p in &procs {
            let _ = Command::new("ip").args(["netns", "del", &p.netns]).stderr(Stdio::null()).status();
            ip(&["netns", "add", &p.netns])?;
            for n in &p.ifaces {
                ip(&["link", "set", n, "netns", &p.netns])?;
                ip(&["-n", &p.netns, "link", "set", n, "up"])?;
            }
        }
        let mut lab = Lab { tag: tag.into(), pairs, procs, opts, leaves, pktgen_ifaces };
        for i in 0..lab.procs.len() {
            lab.write_config(i)?;
            lab.spawn(i)?;
        }
        for i in 0..lab.procs.len() {
            lab.wait_ready(i)?;
        }
        Ok(lab)
    }

    fn write_config(&self, i: usize) -> Result<(), LabError> {
        let p = &self.procs[i];
        std::fs::write(&p.config, config_text(p.node)).map_err(|source| LabError::File { path: p.config.clone(), source })
    }

    fn spawn(&mut self, i: usize) -> Result<(), LabError> {
        let opts = self.opts.clone();
        let tag = self.tag.clone();
        let p = &mut self.procs[i];
        let _ = std::fs::remove_file(&p.stats);
        let name = match p.node {
            TreeNode::Root => "root".to_string(),
            TreeNode::Leaf(l) => format!("leaf{l}"),
        };
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &p.netns]).arg(&opts.binary);
        cmd.args(["--no-huge", "--no-pci", "-l", &p.cpu.to_string(), "-m", "128", "--log-level", "lib.eal:error"])
            .arg(format!("--file-prefix=prism-{tag}-{name}"))
            .arg(format!("--vdev=net_af_packet0,iface={}", p.ifaces[0]))
            .arg(format!("--vdev=net_af_packet1,iface={}", p.ifaces[1]))
            .arg("--")
            .arg("--config")
            .arg(&p.config)
            .args(["--stats-interval", "0", "--stats-json"])
            .arg(&p.stats)
            .args(["--cpus", &p.cpu.to_string()])
            .args(["--rto-us", &opts.rto_us.to_string()])
            .args(["--idle-sleep-us", &opts.idle_sleep_us.to_string()])
            .arg("--ready-file")
            .arg(&p.ready);
        if let Some(spec) = &opts.impair {
            cmd.args(["--impair", &format!("{spec},seed={}", i + 1)]);
        }
        let _ = std::fs::remove_file(&p.ready);
        p.child = Some(Spawned::spawn(&mut cmd, &format!("prism-switch ({name})"), &p.log).map_err(|source| LabError::Spawn { binary: opts.binary.clone(), source })?);
        Ok(())
    }

    /// Waits for a switch's ready file (its ports up, its worker polling).
    fn wait_ready(&mut self, i: usize) -> Result<(), LabError> {
        let p = &mut self.procs[i];
        match p.child.as_mut() {
            Some(c) => c.wait_ready(&p.ready, READY_TIMEOUT).map(|_| ()).map_err(LabError::from),
            None => Err(LabError::NotRunning(p.node.name())),
        }
    }

    fn index(&self, node: TreeNode) -> Option<usize> {
        self.procs.iter().position(|p| p.node == node)
    }

    /// The process ID of a node's switch, while it runs.
    pub fn pid(&self, node: TreeNode) -> Option<u32> {
        self.index(node).and_then(|i| self.procs[i].child.as_ref()).and_then(|c| c.pid())
    }

    /// SIGKILL: the switch dies with everything it held.
    pub fn kill(&mut self, node: TreeNode) {
        if let Some(mut c) = self.index(node).and_then(|i| self.procs[i].child.take()) {
            c.kill();
        }
    }

    /// Starts a fresh process for a killed node.
    pub fn restart(&mut self, node: TreeNode) -> Result<(), LabError> {
        let i = self.index(node).ok_or(LabError::NoSuchNode)?;
        self.kill(node);
        self.spawn(i)?;
        self.wait_ready(i)
    }

    /// SIGTERM to every switch, a clean exit each, and their final stats.
    pub fn stop(mut self) -> Result<Vec<(TreeNode, serde_json::Value)>, LabError> {
        let mut out = Vec::new();
        for p in &mut self.procs {
            let Some(c) = p.child.take() else { continue };
            // Closing an AF_PACKET port waits for RCU grace periods in the
            // kernel: seconds, and on a loaded 2-CPU VM 20-40 s (seen in
            // `synchronize_rcu` after the switch had written its stats).
            c.stop(Duration::from_secs(60))?;
            let text = std::fs::read_to_string(&p.stats).map_err(|source| LabError::File { path: p.stats.clone(), source })?;
            out.push((p.node, serde_json::from_str(&text)?));
        }
        Ok(out)
    }

    pub fn leaves(&self) -> u16 {
        self.leaves
    }

    /// The prism-switch next to the running program (target/<profile>/).
    pub fn default_binary(exe: &Path) -> PathBuf {
        let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        if dir.ends_with("deps") {
            dir.pop();
        }
        dir.join("prism-switch")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for p in &mut self.procs {
            if let Some(mut c) = p.child.take() {
                c.kill();
            }
        }
        for (a, _) in &self.pairs {
            let _ = Command::new("ip").args(["link", "del", a]).stderr(Stdio::null()).status();
        }
        // Deleting a namespace also deletes the veth ends inside it.
        for p in &self.procs {
            let _ = Command::new("ip").args(["netns", "del", &p.netns]).stderr(Stdio::null()).status();
        }
    }
}
