//! Verilates rtl/sv into C++ models (one per top module) and links each with
//! its C ABI shim in csrc/, so that Rust can drive the design cycle by cycle.

use std::path::{Path, PathBuf};
use std::process::Command;

// The package comes from the Rust wire module (prism_dataplane::svpkg),
// generated here for the model; `rtl/sv/prism_pkg.sv` is the same text
// checked in for users (a test compares).
use prism_dataplane::svpkg;

/// One Verilated model: its top module, its sources (after the package) and its shim.
struct Model {
    top: &'static str,
    sv: &'static [&'static str],
    shim: &'static str,
}

/// The whole switch's sources, units before the modules that compose them.
const SWITCH_SV: [&str; 25] = [
    "sv/prism_rx_check.sv",
    "sv/prism_ram_sdp.sv",
    "sv/prism_delay_ram.sv",
    "sv/prism_group_walk.sv",
    "sv/prism_rx_validate.sv",
    "sv/prism_dsp_mul_add.sv",
    "sv/prism_fp32_add_pipe.sv",
    "sv/prism_dsp_add48.sv",
    "sv/prism_kulisch_lane_pipe.sv",
    "sv/prism_kulisch_round_pipe.sv",
    "sv/prism_lane_track.sv",
    "sv/prism_ring.sv",
    "sv/prism_auto_store.sv",
    "sv/prism_auto_plan.sv",
    "sv/prism_auto_body.sv",
    "sv/prism_held_table.sv",
    "sv/prism_mux4.sv",
    "sv/prism_frame_buf.sv",
    "sv/prism_crc32c_512.sv",
    "sv/prism_txn_table.sv",
    "sv/prism_axis_fifo.sv",
    "sv/prism_egress.sv",
    "sv/prism_node.sv",
    "sv/prism_switch_core.sv",
    "sv/prism_switch.sv",
];

/// The switch's sources and the FP32-only top that wraps it.
const SWITCH_FP32_SV: [&str; 26] = {
    let mut all = [""; 26];
    let mut i = 0;
    while i < SWITCH_SV.len() {
        all[i] = SWITCH_SV[i];
        i += 1;
    }
    all[SWITCH_SV.len()] = "sv/prism_switch_fp32.sv";
    all
};

const MODELS: &[Model] = &[
    Model { top: "prism_rx_validate", sv: &["sv/prism_rx_check.sv", "sv/prism_ram_sdp.sv", "sv/prism_delay_ram.sv", "sv/prism_group_walk.sv", "sv/prism_rx_validate.sv"], shim: "csrc/shim.cpp" },
    Model { top: "prism_fp32_add", sv: &["sv/prism_fp32_add.sv"], shim: "csrc/fp32_add.cpp" },
    Model { top: "prism_fp32_add_pipe", sv: &["sv/prism_dsp_mul_add.sv", "sv/prism_fp32_add_pipe.sv"], shim: "csrc/fp32_add_pipe.cpp" },
    Model { top: "prism_kulisch_lane", sv: &["sv/prism_kulisch_lane.sv"], shim: "" },
    Model { top: "prism_kulisch_round", sv: &["sv/prism_kulisch_round.sv"], shim: "csrc/kulisch.cpp" },
    Model { top: "prism_kulisch_round_pipe", sv: &["sv/prism_kulisch_round_pipe.sv"], shim: "csrc/kulisch_round_pipe.cpp" },
    Model { top: "prism_kulisch_lane_pipe", sv: &["sv/prism_dsp_mul_add.sv", "sv/prism_dsp_add48.sv", "sv/prism_kulisch_lane_pipe.sv"], shim: "csrc/kulisch_lane_pipe.cpp" },
    Model { top: "prism_crc32c_512", sv: &["sv/prism_crc32c_512.sv"], shim: "csrc/crc32c_512.cpp" },
    Model { top: "prism_txn_table", sv: &["sv/prism_ram_sdp.sv", "sv/prism_txn_table.sv"], shim: "csrc/txn_table.cpp" },
    Model { top: "prism_switch", sv: &SWITCH_SV, shim: "csrc/switch.cpp" },
    // The same switch built FP32-only (KULISCH_ENABLE = AUTO_ENABLE = 0).
    Model { top: "prism_switch_fp32", sv: &SWITCH_FP32_SV, shim: "csrc/switch_fp32.cpp" },
];

const INC: &str = "/usr/share/verilator/include";

/// Optimisation of the models' per-cycle C++ and of their `__Slow` files
/// (construction and initial blocks, run once a model).
const OPT_FAST: u32 = 1;
const OPT_SLOW: u32 = 0;

/// A fingerprint of everything a model is built from (the package, its
/// sources, its shim, Verilator's version): a model whose fingerprint has
/// not changed is not verilated and compiled again, so editing one module
/// rebuilds one model, not every one.
fn fingerprint(pkg: &str, m: &Model) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let version = Command::new("verilator").arg("--version").output().map(|o| o.stdout).unwrap_or_default();
    version.hash(&mut h);
    // How the C++ is compiled (a change of optimisation levels rebuilds).
    (OPT_FAST, OPT_SLOW).hash(&mut h);
    m.top.hash(&mut h);
    // A shim compiles against the headers of every model it includes.
    let shim = if m.shim.is_empty() { String::new() } else { std::fs::read_to_string(m.shim).unwrap_or_else(|e| panic!("read {}: {e}", m.shim)) };
    let included = MODELS.iter().filter(|x| shim.contains(&format!("\"V{}.h\"", x.top))).flat_map(|x| x.sv.iter().copied());
    // And against the csrc/ headers it includes (pipe.h).
    let headers: Vec<String> = shim.lines().filter_map(|l| l.trim().strip_prefix("#include \"")?.strip_suffix('"').map(|h| format!("csrc/{h}"))).filter(|h| Path::new(h).exists()).collect();
    for f in std::iter::once(pkg).chain(m.sv.iter().copied()).chain(included).chain(std::iter::once(m.shim)).chain(headers.iter().map(String::as_str)).filter(|f| !f.is_empty()) {
        f.hash(&mut h);
        std::fs::read(f).unwrap_or_else(|e| panic!("read {f}: {e}")).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn verilate(out: &Path, pkg: &str, m: &Model) {
    let mdir = out.join(format!("vobj_{}", m.top));
    let lib = format!("prism_rtl_{}", m.top);
    let stamp = out.join(format!("{lib}.fingerprint"));
    let print = fingerprint(pkg, m);
    if out.join(format!("lib{lib}.a")).exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(print.as_str()) {
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static={lib}");
        return;
    }
    let _ = std::fs::remove_file(&stamp);
    // A fresh directory: files of an earlier build must not be compiled in.
    let _ = std::fs::remove_dir_all(&mdir);
    let status = Command::new("verilator")
        // C++ only: the files are compiled once, below, by cc on cargo's
        // jobserver (`--build` would compile every one a second time).
        .args(["--cc", "-Wall", "-O2", "--top-module", m.top, "--Mdir"])
        .arg(&mdir)
        .arg(pkg)
        .args(m.sv)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("verilator failed ({s}) on {:?}", m.sv),
        Err(e) => panic!("verilator not found ({e}): install it with `apt-get install verilator` (scripts/test.sh does)"),
    }
    // Every generated C++ file, whatever Verilator's makefile chose to split it into.
    let prefix = format!("V{}", m.top);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&mdir)
        .expect("verilator output")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.starts_with(&prefix) && n.ends_with(".cpp") && !n.ends_with("__ALL.cpp")
        })
        .collect();
    files.sort();
    if !m.shim.is_empty() {
        files.push(PathBuf::from(m.shim));
    }
    let inc = PathBuf::from(INC);
    // A shim may use several models: every model directory is on its include path.
    let out_dir = mdir.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut includes: Vec<PathBuf> = MODELS.iter().map(|x| out_dir.join(format!("vobj_{}", x.top))).collect();
    includes.push(inc.clone());
    includes.push(inc.join("vltstd"));
    let refs: Vec<&Path> = includes.iter().map(PathBuf::as_path).collect();
    // Verilator's `__Slow` files (construction, initial blocks, the first
    // settle) run once per model instance: compiled without optimisation they
    // take a quarter of the time (a third of the switch's C++, 41 s -> 11 s a
    // file at -O0); the per-cycle code at -O1 (40 s -> 16 s a file, switch_diff
    // about 10-30% slower than at -O2).
    let (slow, fast): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|p| p.to_string_lossy().ends_with("__Slow.cpp"));
    let slow_objs = if slow.is_empty() { Vec::new() } else { config(&slow, &refs, OPT_SLOW).compile_intermediates() };
    let mut b = config(&fast, &refs, OPT_FAST);
    b.objects(slow_objs);
    b.compile(&lib);
    std::fs::write(&stamp, print).expect("write the model's fingerprint");
}

fn config(files: &[PathBuf], includes: &[&Path], opt: u32) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .files(files)
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", "0")
        .define("VM_TRACE_FST", "0")
        .define("VM_TRACE_VCD", "0")
        .opt_level(opt)
        .flag_if_supported("-std=c++17")
        // As Verilator's own verilated.mk builds its output: its C++ of the
        // node's simulation checks compares unsigned words with int
        // constants, dozens of warnings in every build of the model.
        .flag_if_supported("-Wno-sign-compare")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-but-set-variable");
    for i in includes {
        b.include(i);
    }
    b
}

fn main() {
    println!("cargo:rerun-if-changed=sv");
    println!("cargo:rerun-if-changed=csrc");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let pkg = out.join("prism_pkg.sv");
    std::fs::write(&pkg, svpkg::generate()).expect("write prism_pkg.sv");
    let pkg = pkg.to_string_lossy().into_owned();
    // For `cargo check` only (scripts/test.sh's step without DPDK): nothing is
    // linked there, so nothing needs verilating. A build with it set fails to link.
    println!("cargo:rerun-if-env-changed=PRISM_RTL_NO_MODELS");
    if std::env::var_os("PRISM_RTL_NO_MODELS").is_some() {
        println!("cargo:warning=PRISM_RTL_NO_MODELS is set: no Verilated models, for `cargo check` only");
        return;
    }
    for m in MODELS {
        verilate(&out, &pkg, m);
    }
    // Verilator's runtime once, shared by every model.
    let inc = PathBuf::from(INC);
    config(&[inc.join("verilated.cpp"), inc.join("verilated_threads.cpp")], &[inc.as_path(), inc.join("vltstd").as_path()], 2).compile("prism_rtl_runtime");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
