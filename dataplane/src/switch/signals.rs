//! SIGINT/SIGTERM ask for a clean stop; SIGUSR1 asks for a stats dump.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static DUMP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work: atomic stores.
    if sig == libc::SIGUSR1 {
        DUMP.store(true, Ordering::Relaxed);
    } else {
        STOP.store(true, Ordering::Relaxed);
    }
}

/// Installs the handlers.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGUSR1] {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// Whether a stop was requested.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Whether a stats dump was requested (clears the request).
pub fn take_dump_request() -> bool {
    DUMP.swap(false, Ordering::Relaxed)
}
