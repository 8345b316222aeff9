//! Writes rtl/sv/prism_pkg.sv from the Rust wire module.
fn main() -> std::io::Result<()> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sv/prism_pkg.sv");
    std::fs::write(&path, prism_rtl::svpkg::generate())?;
    println!("wrote {}", path.display());
    Ok(())
}
