//! What the page knows before its first IPC call.
//!
//! The header needs the app's version and workspace to show the chat window. Asking for them
//! with `app_info` cost a round trip through the UI thread at the busiest moment of startup
//! (250–400 ms in bench/app's breakdown, most of the time from the UI mounting to content), so
//! the same [`AppInfo`] is handed to the page as `window.__GD_BOOT__` by an initialization
//! script, which WebKit runs before the page's own scripts. `app_info` stays for later callers
//! (and the UI falls back to it when the value is missing).

use tauri::Runtime;
use tauri::plugin::{Builder, TauriPlugin};

use crate::commands::AppInfo;

/// The initialization script defining `window.__GD_BOOT__` (read-only) as `info`.
pub fn script(info: &AppInfo) -> String {
    // JSON is a JavaScript expression; serde_json escapes everything a path may contain.
    let json = serde_json::to_string(info).unwrap_or_else(|_| "null".into());
    format!(
        "Object.defineProperty(window, \"__GD_BOOT__\", {{ value: Object.freeze({json}), \
         writable: false, configurable: false }});"
    )
}

/// A plugin that only carries the initialization script.
pub fn plugin<R: Runtime>(info: &AppInfo) -> TauriPlugin<R> {
    Builder::new("boot").js_init_script(script(info)).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_defines_the_info_as_json_whatever_the_path_holds() {
        let info = AppInfo {
            version: "0.1.0".into(),
            commit: "0123456789ab".into(),
            workspace: Some("/home/a \"b\"\\c/</script>\u{2028}".into()),
        };
        let script = script(&info);
        let start = script.find("Object.freeze(").unwrap() + "Object.freeze(".len();
        let end = script.rfind("), writable").unwrap();
        let value: serde_json::Value = serde_json::from_str(&script[start..end]).unwrap();
        assert_eq!(value["version"], "0.1.0");
        assert_eq!(value["workspace"], "/home/a \"b\"\\c/</script>\u{2028}");
        let none = super::script(&AppInfo::new("1", None));
        assert!(none.contains(r#""workspace":null"#), "{none}");
    }
}
