//! A freedesktop notification service (`org.freedesktop.Notifications`) on the app's private
//! session bus, playing the desktop's notification daemon: it records what the app asks to show
//! and can "click" a notification (the `ActionInvoked` signal with the default action), so a
//! test drives the app's real notification path end to end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

/// One notification the app asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub id: u32,
    pub app_name: String,
    pub summary: String,
    pub body: String,
    /// Action keys and labels, alternating (as the protocol sends them).
    pub actions: Vec<String>,
}

struct Daemon {
    shown: Arc<Mutex<Vec<Shown>>>,
    next: AtomicU32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Daemon {
    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.shown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Shown {
                id,
                app_name,
                summary,
                body,
                actions,
            });
        id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "gd-e2e".into(),
            "gemini-desktop".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;
}

/// The service, running on a bus until dropped.
pub struct Notifications {
    connection: zbus::Connection,
    shown: Arc<Mutex<Vec<Shown>>>,
}

impl Notifications {
    /// Serves `org.freedesktop.Notifications` on the bus at `address` (an app's private session
    /// bus: [`crate::App::session_bus_address`]).
    pub async fn serve(address: &str) -> Result<Self> {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let daemon = Daemon {
            shown: shown.clone(),
            next: AtomicU32::new(0),
        };
        let connection = zbus::connection::Builder::address(address)
            .context("the bus address")?
            .name(NAME)?
            .serve_at(PATH, daemon)?
            .build()
            .await
            .context("serve org.freedesktop.Notifications")?;
        Ok(Self { connection, shown })
    }

    /// The notifications shown so far, in order.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Clicks notification `id` (its default action), as a user would.
    pub async fn click(&self, id: u32) -> Result<()> {
        let daemon = self
            .connection
            .object_server()
            .interface::<_, Daemon>(PATH)
            .await?;
        Daemon::action_invoked(daemon.signal_emitter(), id, "default").await?;
        Ok(())
    }
}
