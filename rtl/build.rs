//! Verilates rtl/sv into a C++ model and links it with csrc/shim.cpp, so that
//! Rust can push frames into the design beat by beat.

use std::path::PathBuf;
use std::process::Command;

// The package comes from the Rust wire module, generated here for the model;
// `rtl/sv/prism_pkg.sv` is the same text checked in for users (a test compares).
#[path = "src/svpkg.rs"]
mod svpkg;

fn main() {
    for f in ["sv/prism_rx_check.sv", "sv/prism_group_walk.sv", "sv/prism_rx_validate.sv", "csrc/shim.cpp", "src/svpkg.rs"] {
        println!("cargo:rerun-if-changed={f}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let pkg = out.join("prism_pkg.sv");
    std::fs::write(&pkg, svpkg::generate()).expect("write prism_pkg.sv");
    let pkg = pkg.to_string_lossy().into_owned();
    let sv = [pkg.as_str(), "sv/prism_rx_check.sv", "sv/prism_group_walk.sv", "sv/prism_rx_validate.sv"];
    let mdir = out.join("vobj");
    // A fresh directory: files of an earlier top module must not be compiled in.
    let _ = std::fs::remove_dir_all(&mdir);
    let status = Command::new("verilator")
        .args(["--cc", "--build", "-j", "2", "-Wall", "-O2", "--top-module", "prism_rx_validate", "--Mdir"])
        .arg(&mdir)
        .args(sv)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("verilator failed ({s}) on {sv:?}"),
        Err(e) => panic!("verilator not found ({e}): install it with `apt-get install verilator` (scripts/test.sh does)"),
    }
    let inc = PathBuf::from("/usr/share/verilator/include");
    // The model (every generated C++ file, whatever Verilator's makefile chose
    // to split it into), Verilator's runtime and the shim in one static library.
    let mut model: Vec<PathBuf> = std::fs::read_dir(&mdir)
        .expect("verilator output")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.starts_with("Vprism_rx_validate") && n.ends_with(".cpp") && !n.ends_with("__ALL.cpp")
        })
        .collect();
    model.sort();
    cc::Build::new()
        .cpp(true)
        .files(&model)
        .file(inc.join("verilated.cpp"))
        .file(inc.join("verilated_threads.cpp"))
        .file("csrc/shim.cpp")
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", "0")
        .define("VM_TRACE_FST", "0")
        .define("VM_TRACE_VCD", "0")
        .opt_level(2)
        .include(&mdir)
        .include(&inc)
        .include(inc.join("vltstd"))
        .flag_if_supported("-std=c++17")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("prism_rtl_shim");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
