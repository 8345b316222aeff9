//! prism-golden: writes the golden captures and listings in testdata/.

use clap::Parser;
use prism_dataplane::golden;
use prism_dataplane::pcap;
use std::path::PathBuf;

/// Regenerate testdata/golden.pcap, testdata/malformed.pcap and their listings.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Directory to write into.
    #[arg(long, default_value = "testdata")]
    out: PathBuf,
    /// Also write each golden frame as one file into this directory (a fuzzing seed corpus).
    #[arg(long)]
    corpus: Option<PathBuf>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out)?;
    let (good, bad) = prism_dataplane::golden::captures();
    pcap::write_all(std::fs::File::create(args.out.join("golden.pcap"))?, &good)?;
    pcap::write_all(std::fs::File::create(args.out.join("malformed.pcap"))?, &bad)?;
    std::fs::write(args.out.join("golden.txt"), golden::listing(&good))?;
    std::fs::write(args.out.join("malformed.txt"), golden::listing(&bad))?;
    if let Some(dir) = &args.corpus {
        std::fs::create_dir_all(dir)?;
        for g in golden::frames() {
            std::fs::write(dir.join(g.name), &g.bytes)?;
        }
        for m in golden::malformed() {
            std::fs::write(dir.join(format!("malformed_{}", m.name)), &m.bytes)?;
        }
    }
    println!("wrote {} golden and {} malformed frames to {}", good.len(), bad.len(), args.out.display());
    Ok(())
}
