//! How WebKitGTK draws the window on Linux.
//!
//! WebKitGTK composites pages with OpenGL by default. Our UI is a document of text and a few
//! cards; it gains nothing visible from GPU compositing, while the compositor costs about
//! 100 MB of resident memory in the web process and, without a GPU (virtual machines, remote
//! desktops, Xvfb), renders through a software GL that makes a fast-streaming answer fall
//! seconds behind (bench/RESULTS.md, "Desktop app"). So the app turns compositing off unless the
//! user asks for it with `GEMINI_DESKTOP_GPU=1`, or set `WEBKIT_DISABLE_COMPOSITING_MODE`
//! themselves (which then wins). The end-to-end tests keep compositing on: WebKitWebDriver's
//! screenshots never answer without it.

/// Environment variable that keeps WebKit's GPU compositing on.
pub const GPU_ENV: &str = "GEMINI_DESKTOP_GPU";

const WEBKIT_COMPOSITING_ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether compositing should be turned off, given the two variables' values.
fn disable_compositing(gpu: Option<&str>, webkit: Option<&str>) -> bool {
    webkit.is_none() && !matches!(gpu, Some("1" | "true" | "yes"))
}

/// Applies the choice. Must run before WebKit starts and before the process has other threads
/// (it writes the environment, which the web processes inherit).
pub fn configure() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let gpu = std::env::var(GPU_ENV).ok();
    let webkit = std::env::var(WEBKIT_COMPOSITING_ENV).ok();
    if disable_compositing(gpu.as_deref(), webkit.as_deref()) {
        // SAFETY: called first thing in `run`, while the process is single-threaded, so no
        // other thread can read the environment concurrently.
        unsafe { std::env::set_var(WEBKIT_COMPOSITING_ENV, "1") };
    }
}

#[cfg(test)]
mod tests {
    use super::disable_compositing;

    #[test]
    fn off_by_default_on_with_the_gpu_switch_and_user_choice_wins() {
        assert!(disable_compositing(None, None));
        assert!(!disable_compositing(Some("1"), None));
        assert!(disable_compositing(Some("0"), None));
        assert!(!disable_compositing(None, Some("0")));
        assert!(!disable_compositing(None, Some("1")));
    }
}
