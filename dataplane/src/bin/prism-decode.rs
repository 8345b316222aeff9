//! prism-decode: print the frames of a pcap, one line each, with PRISM decoded.

use clap::Parser;
use prism_dataplane::decode::{describe, Verbosity};
use prism_dataplane::pcap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decode PRISM frames in a pcap capture, like tcpdump.
///
/// Non-PRISM frames print as plain Layer-2 frames; a malformed PRISM frame
/// prints its reject reason and the byte where it was found.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Capture to read; without it, the embedded golden capture (testdata/golden.pcap).
    file: Option<PathBuf>,
    /// Print every field; twice (-vv) prints every value of every group.
    #[arg(short, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Exit with status 1 when any PRISM frame is malformed.
    #[arg(long)]
    strict: bool,
}

const GOLDEN: &[u8] = include_bytes!("../../../testdata/golden.pcap");

fn main() -> ExitCode {
    let args = Args::parse();
    let frames = match &args.file {
        None => pcap::read_all(GOLDEN),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => pcap::read_all(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("prism-decode: cannot open {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    let frames = match frames {
        Ok(f) => f,
        Err(e) => {
            eprintln!("prism-decode: {}: {e}", args.file.as_deref().map_or("embedded capture".into(), |p| p.display().to_string()));
            return ExitCode::from(2);
        }
    };
    if args.file.is_none() {
        eprintln!("prism-decode: no file given; decoding the embedded golden capture ({} frames)", frames.len());
    }
    let v = Verbosity { fields: args.verbose >= 1, all_values: args.verbose >= 2 };
    let mut out = std::io::stdout().lock();
    let mut malformed = 0;
    for (i, f) in frames.iter().enumerate() {
        let text = describe(i + 1, f.ts, &f.data, v);
        malformed += text.contains("PRISM malformed") as usize;
        if out.write_all(text.as_bytes()).is_err() {
            return ExitCode::SUCCESS; // closed pipe (e.g. `| head`)
        }
    }
    eprintln!("prism-decode: {} frames, {} malformed", frames.len(), malformed);
    if args.strict && malformed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
