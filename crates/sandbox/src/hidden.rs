//! What a sandboxed command must not see: the user's secrets and the sockets that would let it
//! act outside the sandbox through a service that is not confined.
//!
//! A hidden folder becomes an empty read-only tmpfs, a hidden file `/dev/null` (read-only), so a
//! program that looks finds nothing instead of failing on an unreadable path. Only paths that
//! exist are hidden (a missing one holds nothing to read; and bubblewrap would create it).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::policy::Network;

/// Under the home folder: keys, tokens, credential stores, keyrings, browser profiles.
/// `.gemini` whole: the CLI's and this app's credentials and settings live there, and nothing a
/// command runs needs them.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".gemini",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    // git's other credential-store file ($XDG_CONFIG_HOME/git/credentials).
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    // Podman's registry logins (Docker's are in .docker).
    ".config/containers/auth.json",
    ".vault-token",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    "snap/firefox",
    "snap/chromium",
    ".pki",
    // The X server's cookie: with it a command could type into the user's other windows
    // (reachable with the host's network, through X11's abstract socket).
    ".Xauthority",
    // This app's conversations (they can hold what the user pasted).
    ".local/share/gemini-desktop",
];

/// Sockets of services that act for whoever connects: the user's session (D-Bus session bus →
/// Secret Service and `systemd --user`, ssh-agent, gpg-agent, Wayland and PipeWire all live in
/// `/run/user/<uid>`; the whole of `/run/user` is hidden, which also covers other users'
/// when running as root), container engines (a container with `/` mounted is the host), the
/// system bus and systemd's private socket (as root: any unit, any command).
pub const SYSTEM_SOCKETS: &[&str] = &[
    "/run/user",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman",
    "/run/containerd/containerd.sock",
    "/run/snapd.socket",
    "/run/libvirt",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/systemd/private",
];

/// With no network, the local services that resolve names for a program (glibc asks nscd and
/// systemd-resolved through Unix sockets, which a network namespace does not cut): else a name
/// lookup would still leave the machine, a channel out (DNS) and a way to reach the network.
pub const RESOLVER_SOCKETS: &[&str] = &[
    "/run/systemd/resolve/io.systemd.Resolve",
    "/run/systemd/resolve/io.systemd.Resolve.Monitor",
    "/run/nscd",
    "/var/run/nscd",
    "/run/avahi-daemon/socket",
];

/// What the environment adds: the agent and bus sockets it names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Environment {
    /// `$SSH_AUTH_SOCK`.
    pub ssh_auth_sock: Option<PathBuf>,
    /// `$DBUS_SESSION_BUS_ADDRESS`.
    pub dbus_session_bus_address: Option<String>,
    /// `$XAUTHORITY`.
    pub xauthority: Option<PathBuf>,
}

impl Environment {
    pub fn current() -> Self {
        let path = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Self {
            ssh_auth_sock: path("SSH_AUTH_SOCK"),
            dbus_session_bus_address: std::env::var("DBUS_SESSION_BUS_ADDRESS").ok(),
            xauthority: path("XAUTHORITY"),
        }
    }
}

/// Every path to hide (whether it exists or not; absolute ones only).
pub fn candidates(homes: &[PathBuf], network: Network, env: &Environment) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for home in homes.iter().filter(|h| h.is_absolute()) {
        out.extend(HOME_SECRETS.iter().map(|rel| home.join(rel)));
    }
    out.extend(SYSTEM_SOCKETS.iter().map(PathBuf::from));
    if network == Network::None {
        out.extend(RESOLVER_SOCKETS.iter().map(PathBuf::from));
    }
    out.extend(env.ssh_auth_sock.iter().cloned());
    out.extend(env.xauthority.iter().cloned());
    if let Some(address) = &env.dbus_session_bus_address {
        out.extend(dbus_paths(address));
    }
    out.retain(|p| p.is_absolute());
    out
}

/// The socket paths of a D-Bus address list (`unix:path=/run/user/1000/bus,guid=…;…`), with
/// its `%xx` escapes decoded. Abstract sockets (`unix:abstract=`) have no path: only a network
/// namespace of its own (`Network::None`) cuts them off.
pub fn dbus_paths(address: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in address.split(';') {
        let Some(params) = entry.trim().strip_prefix("unix:") else {
            continue;
        };
        for param in params.split(',') {
            if let Some(value) = param.strip_prefix("path=") {
                let bytes = unescape(value);
                if !bytes.is_empty() {
                    out.push(PathBuf::from(OsStr::from_bytes(&bytes)));
                }
            }
        }
    }
    out
}

/// D-Bus address values escape bytes as `%xx`.
fn unescape(value: &str) -> Vec<u8> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Some(byte) = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dbus_addresses_give_their_unix_paths() {
        assert_eq!(
            dbus_paths(
                "unix:path=/run/user/1000/bus,guid=abc;unix:abstract=/tmp/dbus-x;tcp:host=h"
            ),
            vec![PathBuf::from("/run/user/1000/bus")]
        );
        assert_eq!(
            dbus_paths("unix:path=/tmp/a%20b%2c"),
            vec![PathBuf::from("/tmp/a b,")]
        );
        assert_eq!(
            dbus_paths("unix:path=/x%zz%4"),
            vec![PathBuf::from("/x%zz%4")]
        );
        assert!(dbus_paths("").is_empty());
        assert!(dbus_paths("unix:path=").is_empty());
    }

    #[test]
    fn candidates_cover_home_sockets_and_the_environment() {
        let env = Environment {
            ssh_auth_sock: Some("/tmp/ssh-x/agent.1".into()),
            dbus_session_bus_address: Some("unix:path=/run/user/7/bus".into()),
            xauthority: Some("relative/not/kept".into()),
        };
        let all = candidates(
            &[PathBuf::from("/home/u"), "relative".into()],
            Network::None,
            &env,
        );
        for p in [
            "/home/u/.ssh",
            "/home/u/.gemini",
            "/home/u/.cargo/credentials.toml",
            "/run/user",
            "/run/docker.sock",
            "/run/nscd",
            "/tmp/ssh-x/agent.1",
            "/run/user/7/bus",
        ] {
            assert!(all.contains(&PathBuf::from(p)), "{p}");
        }
        assert!(all.iter().all(|p| p.is_absolute()));
        let with_net = candidates(&[], Network::All, &Environment::default());
        assert!(!with_net.contains(&PathBuf::from("/run/nscd")));
        assert!(!with_net.iter().any(|p| p.starts_with("/home")));
    }
}
