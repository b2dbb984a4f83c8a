//! Which addresses `web_fetch` may reach, and what a URL's host visibly is.
//!
//! The lists follow the IANA special-purpose address registries (IPv4 and
//! IPv6). Everything that is not plainly a public unicast address is
//! refused: private networks, loopback, link-local, documentation and
//! benchmarking ranges, multicast, reserved space, and IPv6 forms that embed
//! such an IPv4 address (mapped, NAT64, 6to4). Being too strict costs a
//! refused fetch; being too lax lets a model reach services on the user's
//! machine or network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

/// Decides whether an address is off limits, and why (e.g. "loopback").
/// Injectable so tests can treat one loopback address as "public" and run
/// real servers for both sides of a redirect on 127.0.0.0/8.
pub type Classifier = Arc<dyn Fn(IpAddr) -> Option<&'static str> + Send + Sync>;

/// The classifier used outside tests: [`special_purpose`].
pub fn default_classifier() -> Classifier {
    Arc::new(special_purpose)
}

/// Whether `ip` is anything but a public unicast address.
pub fn is_private(ip: IpAddr) -> bool {
    special_purpose(ip).is_some()
}

/// The kind of special-purpose range `ip` is in, or `None` for a public
/// unicast address.
pub fn special_purpose(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// `(network, prefix length, kind)` of the IPv4 ranges refused.
const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "\"this network\" (0.0.0.0/8)"),
    ([10, 0, 0, 0], 8, "private (10.0.0.0/8)"),
    (
        [100, 64, 0, 0],
        10,
        "shared carrier-grade NAT (100.64.0.0/10)",
    ),
    ([127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"),
    ([169, 254, 0, 0], 16, "link-local (169.254.0.0/16)"),
    ([172, 16, 0, 0], 12, "private (172.16.0.0/12)"),
    (
        [192, 0, 0, 0],
        24,
        "IETF protocol assignment (192.0.0.0/24)",
    ),
    ([192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"),
    ([192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99.0/24)"),
    ([192, 168, 0, 0], 16, "private (192.168.0.0/16)"),
    ([198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"),
    ([198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"),
    ([203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"),
    ([224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"),
    // Includes the limited broadcast address 255.255.255.255.
    ([240, 0, 0, 0], 4, "reserved (240.0.0.0/4)"),
];

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_RANGES.iter().find_map(|(net, len, kind)| {
        let mask = u32::MAX << (32 - u32::from(*len));
        (bits & mask == u32::from(Ipv4Addr::from(*net))).then_some(*kind)
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    let in_net = |net: u128, len: u32| bits & (u128::MAX << (128 - len)) == net;
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4).map(|_| "IPv4-mapped private or reserved");
    }
    // NAT64 (well-known prefix): DNS64 networks synthesise these for
    // IPv4-only sites, so the embedded IPv4 address decides.
    if in_net(0x0064_ff9b << 96, 96) {
        let v4 = Ipv4Addr::from(bits as u32);
        return special_v4(v4).map(|_| "NAT64 of a private or reserved IPv4 address");
    }
    if ip.is_unspecified() {
        return Some("unspecified (::)");
    }
    if ip.is_loopback() {
        return Some("loopback (::1)");
    }
    // Only 2000::/3 holds global unicast. Outside it: IPv4-compatible
    // (::/96), discard (100::/64), local-use NAT64 (64:ff9b:1::/48), SRv6
    // (5f00::/16), unique-local (fc00::/7), link-local (fe80::/10),
    // multicast (ff00::/8) and unassigned space.
    if !in_net(0x2000 << 112, 3) {
        return Some(match ip.segments()[0] {
            s if s & 0xfe00 == 0xfc00 => "unique-local (fc00::/7)",
            s if s & 0xffc0 == 0xfe80 => "link-local (fe80::/10)",
            s if s & 0xff00 == 0xff00 => "multicast (ff00::/8)",
            _ => "reserved IPv6 (outside 2000::/3)",
        });
    }
    if in_net(0x2001_0db8 << 96, 32) {
        return Some("documentation (2001:db8::/32)");
    }
    // IETF protocol assignments, including Teredo (2001::/32), whose
    // embedded client address cannot be trusted to be public.
    if in_net(0x2001 << 112, 23) {
        return Some("IETF protocol assignment or Teredo (2001::/23)");
    }
    if in_net(0x3fff << 112, 20) {
        return Some("documentation (3fff::/20)");
    }
    // 6to4: the IPv4 address in bits 16..48 decides.
    if in_net(0x2002 << 112, 16) {
        let v4 = Ipv4Addr::from((bits >> 80) as u32);
        return special_v4(v4).map(|_| "6to4 of a private or reserved IPv4 address");
    }
    None
}

/// What a URL's host is, as far as can be told without any network
/// activity. Read from the parsed URL, the same parse reqwest uses, so
/// `http://2130706433/`, `http://0x7f.1/` and `http://127.1/` are all the IP
/// address 127.0.0.1 here too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisibleHost {
    /// An IP literal.
    Ip(IpAddr),
    /// `localhost` or a name under `.localhost` (always loopback, RFC 6761).
    Localhost(String),
    /// Any other name: only resolving it tells where it points.
    Name(String),
}

impl VisibleHost {
    pub fn of(url: &reqwest::Url) -> Option<Self> {
        let host = url.host_str()?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Some(Self::Ip(ip));
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return Some(Self::Localhost(host.to_owned()));
        }
        Some(Self::Name(host.to_owned()))
    }

    /// Why the user can see, without resolving, that this host is not
    /// public; `None` for names.
    pub fn visibly_private(&self, classify: &Classifier) -> Option<&'static str> {
        match self {
            Self::Ip(ip) => classify(*ip),
            Self::Localhost(_) => Some("loopback (localhost)"),
            Self::Name(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_purpose_range_is_refused() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.0.9",
            "169.254.169.254",
            "172.16.5.4",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.0.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "3fff::1",
            "5f00::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} must be refused");
        }
    }

    #[test]
    fn public_unicast_addresses_are_allowed() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.3.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} must be allowed");
        }
    }

    #[test]
    fn numeric_host_forms_are_the_ip_addresses_reqwest_connects_to() {
        let classify = default_classifier();
        for url in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://0/",
            "http://[::1]:8080/",
            "http://[::ffff:7f00:1]/",
            "http://localhost:3000/",
            "http://LOCALHOST./",
            "http://api.localhost/",
        ] {
            let host = VisibleHost::of(&reqwest::Url::parse(url).unwrap()).unwrap();
            assert!(host.visibly_private(&classify).is_some(), "{url}: {host:?}");
        }
        let name = VisibleHost::of(&reqwest::Url::parse("http://docs.example.org/").unwrap());
        assert_eq!(name, Some(VisibleHost::Name("docs.example.org".into())));
        assert_eq!(name.unwrap().visibly_private(&classify), None);
    }
}
