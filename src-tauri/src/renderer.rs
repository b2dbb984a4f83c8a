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
//!
//! With compositing off nothing in the app's own process draws with GL either, so GDK's GL
//! support is turned off too (`GDK_GL=disable`, unless the user set `GDK_GL`). Otherwise GDK
//! sets up GLX when it opens the display, to pick a visual for GL windows we never create: on a
//! machine without a GPU that loads Mesa's llvmpipe (libLLVM), ~150 ms of a 2-core VM's start
//! spent before the window and its web process are created (bench/RESULTS.md, desktop section). WebKit
//! still needs an EGL display of its own, which it opens while its web process starts, in
//! parallel.

/// Environment variable that keeps WebKit's GPU compositing on.
pub const GPU_ENV: &str = "GEMINI_DESKTOP_GPU";

const WEBKIT_COMPOSITING_ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// GTK 3's switch for GDK's GL support (`disable` turns it off).
const GDK_GL_ENV: &str = "GDK_GL";

/// Whether compositing should be turned off, given the two variables' values.
fn disable_compositing(gpu: Option<&str>, webkit: Option<&str>) -> bool {
    webkit.is_none() && !matches!(gpu, Some("1" | "true" | "yes"))
}

/// Whether GDK's GL support should be turned off: when compositing is, unless the user chose
/// (`GDK_GL` set to anything).
fn disable_gdk_gl(compositing_disabled: bool, gdk_gl: Option<&std::ffi::OsStr>) -> bool {
    compositing_disabled && gdk_gl.is_none()
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
        if disable_gdk_gl(true, std::env::var_os(GDK_GL_ENV).as_deref()) {
            // SAFETY: as above.
            unsafe { std::env::set_var(GDK_GL_ENV, "disable") };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{disable_compositing, disable_gdk_gl};

    #[test]
    fn off_by_default_on_with_the_gpu_switch_and_user_choice_wins() {
        assert!(disable_compositing(None, None));
        assert!(!disable_compositing(Some("1"), None));
        assert!(disable_compositing(Some("0"), None));
        assert!(!disable_compositing(None, Some("0")));
        assert!(!disable_compositing(None, Some("1")));
    }

    #[test]
    fn gdk_gl_goes_with_compositing_unless_the_user_set_it() {
        use std::ffi::OsStr;
        assert!(disable_gdk_gl(true, None));
        assert!(!disable_gdk_gl(false, None));
        assert!(!disable_gdk_gl(true, Some(OsStr::new("always"))));
        assert!(!disable_gdk_gl(true, Some(OsStr::new(""))));
    }
}
