//! Files that other processes poll for (ready files, stats, summaries).

use std::path::Path;

/// Writes `bytes` to `path` through `path` with the extension `tmp`,
/// renamed into place: a reader polling `path` never sees half a file.
pub fn write_whole(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
