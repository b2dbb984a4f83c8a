//! glibc malloc's arenas.
//!
//! glibc gives each thread that allocates concurrently an arena of its own, up to 8 per core,
//! and memory freed into an arena stays with it. The app's threads (Tauri's and the agent's
//! tokio workers, blocking-pool threads, WebKit's and GTK's) each end up holding one with a few
//! partly used pages: 1.5 MB of the idle app process on the 2-core benchmark VM with one arena
//! instead (bench/RESULTS.md, desktop section), and more on machines with more cores, where there are
//! more workers and arenas. The app allocates little and rarely from many threads at once, so
//! two arenas are plenty. The web and network processes are separate programs, not affected.

/// At most this many malloc arenas.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAX_ARENAS: libc::c_int = 2;

/// Caps the arenas. Must run before the process has other threads (first thing in `run`).
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets a malloc tunable; called while single-threaded.
        let ok = unsafe { libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS) };
        if ok != 1 {
            // Not fatal: malloc keeps its default.
            eprintln!("gemini-desktop: mallopt(M_ARENA_MAX) failed");
        }
    }
}
