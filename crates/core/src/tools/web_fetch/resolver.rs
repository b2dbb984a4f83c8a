//! Name resolution for `web_fetch`: an injectable resolver, and the
//! reqwest resolver that only hands out addresses the guard already
//! checked.
//!
//! Resolving a name once to check it and again to connect lets a DNS server
//! answer "public" to the check and "127.0.0.1" to the connection (DNS
//! rebinding). So each hop resolves exactly once, in the guard; the HTTP
//! client then gets its addresses from [`PinnedResolver`], which answers from
//! the checked results and never asks DNS for those names again.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tracing::debug;

/// Turns a host name into addresses. The real one asks the system; tests
/// inject one that maps names to loopback addresses and records queries.
pub trait Resolver: Send + Sync {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// The system resolver (`getaddrinfo` through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host, port)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// The HTTP client's resolver for one `web_fetch` call: names the guard
/// checked are answered with exactly the checked addresses. Any other name
/// is the configured proxy's (targets are always pinned before a request),
/// which the user chose, so it is resolved normally.
pub(super) struct PinnedResolver {
    pins: Mutex<HashMap<String, Vec<IpAddr>>>,
    fallback: Arc<dyn Resolver>,
}

impl PinnedResolver {
    pub(super) fn new(fallback: Arc<dyn Resolver>) -> Self {
        Self {
            pins: Mutex::new(HashMap::new()),
            fallback,
        }
    }

    /// Connections to `host` go to `addrs` (and nowhere else) from now on.
    pub(super) fn pin(&self, host: &str, addrs: Vec<IpAddr>) {
        self.pins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(host.to_ascii_lowercase(), addrs);
    }

    fn pinned(&self, host: &str) -> Option<Vec<IpAddr>> {
        self.pins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&host.to_ascii_lowercase())
            .cloned()
    }
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        if let Some(addrs) = self.pinned(&host) {
            // Port 0: hyper puts in the URL's port.
            let addrs: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            return Box::pin(async move { Ok(addrs) });
        }
        debug!(%host, "resolving a host web_fetch did not check (a proxy)");
        let fallback = self.fallback.clone();
        Box::pin(async move {
            let ips = fallback.lookup(&host, 0).await?;
            let addrs: Addrs = Box::new(
                ips.into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}
