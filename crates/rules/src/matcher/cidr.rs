//! IPv4 and IPv6 networks for the `cidr` modifier.

use crate::error::{ErrorKind, RuleError};
use std::net::IpAddr;

/// A network: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cidr {
    net: u128,
    mask: u128,
    v4: bool,
}

impl Cidr {
    /// Parses `a.b.c.d/n`, `x::y/n`, or a bare address (a full-length prefix).
    pub fn parse(s: &str) -> Result<Cidr, RuleError> {
        let (addr, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let ip: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| ErrorKind::NotANetwork(s.to_string()))?;
        let (bits, v4, value) = match ip {
            IpAddr::V4(a) => (32u32, true, u128::from(u32::from(a))),
            IpAddr::V6(a) => (128u32, false, u128::from(a)),
        };
        let len = match len {
            Some(l) => l
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&l| l <= bits)
                .ok_or_else(|| ErrorKind::PrefixLength(s.to_string()))?,
            None => bits,
        };
        let mask = if len == 0 {
            0
        } else {
            (u128::MAX << (bits - len)) & (u128::MAX >> (128 - bits))
        };
        Ok(Cidr {
            net: value & mask,
            mask,
            v4,
        })
    }

    /// Whether `text` is an address inside the network.
    pub fn contains(&self, text: &str) -> bool {
        let Ok(ip) = text.parse::<IpAddr>() else {
            return false;
        };
        let value = match (ip, self.v4) {
            (IpAddr::V4(a), true) => u128::from(u32::from(a)),
            (IpAddr::V6(a), false) => match a.to_ipv4_mapped() {
                Some(_) => return false,
                None => u128::from(a),
            },
            (IpAddr::V6(a), true) => match a.to_ipv4_mapped() {
                Some(v4) => u128::from(u32::from(v4)),
                None => return false,
            },
            (IpAddr::V4(_), false) => return false,
        };
        value & self.mask == self.net
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v4_and_v6() {
        let n = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(n.contains("10.1.2.3"));
        assert!(!n.contains("11.1.2.3"));
        assert!(!n.contains("not an ip"));
        assert!(n.contains("::ffff:10.0.0.1"));
        let z = Cidr::parse("0.0.0.0/0").unwrap();
        assert!(z.contains("8.8.8.8"));
        let v6 = Cidr::parse("fe80::/10").unwrap();
        assert!(v6.contains("fe80::1"));
        assert!(!v6.contains("2001:db8::1"));
        assert!(!v6.contains("10.0.0.1"));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
    }
}
