//! Finds the system DPDK with pkg-config and compiles the C shim that turns
//! DPDK's static-inline fast path (rx/tx burst, mbuf alloc/free, mtod) into
//! linkable functions.

fn main() {
    println!("cargo:rerun-if-changed=csrc/shim.c");
    let lib = match pkg_config::Config::new().atleast_version("22.11").probe("libdpdk") {
        Ok(l) => l,
        Err(e) => {
            eprintln!("dpdk-sys: DPDK 22.11 not found through pkg-config ({e}).");
            eprintln!("dpdk-sys: install it with: apt-get install libdpdk-dev (scripts/test.sh does this)");
            std::process::exit(1);
        }
    };
    let mut build = cc::Build::new();
    build.file("csrc/shim.c").opt_level(3).flag_if_supported("-Wno-unused-parameter");
    for p in &lib.include_paths {
        build.include(p);
    }
    // pkg-config's other cflags: -include rte_config.h and -march.
    let cflags = std::process::Command::new("pkg-config").args(["--cflags-only-other", "libdpdk"]).output().expect("pkg-config");
    let cflags = String::from_utf8_lossy(&cflags.stdout);
    let mut words = cflags.split_whitespace();
    while let Some(w) = words.next() {
        if w == "-include" {
            if let Some(h) = words.next() {
                build.flag("-include").flag(h);
            }
        } else {
            build.flag(w);
        }
    }
    build.compile("prism_dpdk_shim");
}
