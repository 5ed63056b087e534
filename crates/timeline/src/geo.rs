//! `-G`: the six GeoIP columns (`SrcASN`, `SrcCountry`, `SrcCity`, `TgtASN`,
//! `TgtCountry`, `TgtCity`) from MaxMind's GeoLite2 ASN, Country and City databases, as
//! Hayabusa 4.0 fills them (its `src/options/geoip_search.rs`, facts only):
//!
//! - `LOCAL` (and its Japanese form `ローカル`), a loopback address and `0.0.0.0` are
//!   `Local`, `-`, `-`; an `::ffff:` prefix is removed first, so a mapped IPv4 address
//!   is looked up as IPv4;
//! - private and local ranges are `Private`, `-`, `-`: IPv4 10.0.0.0/8, 172.16.0.0/12,
//!   192.168.0.0/16; IPv6 `::` (unspecified), fe80::/10 (link local), fc00::/7 (unique
//!   local) and ff00::/8 (multicast);
//! - any other address is looked up: the ASN cell is the organisation (`-` when the
//!   network has none), the country and city cells their English names; an address a
//!   database does not hold gives an empty cell (the Country database's lookup failing,
//!   as an IPv6 address in an IPv4-only database does, gives `-`);
//! - a value that is not an address gives three empty cells.
//!
//! The databases are opened once, when the run starts, and mapped into memory rather
//! than read: a lookup touches only the pages of its path through the search tree, so a
//! run pays neither the read of the whole files (75 MB for MaxMind's three) nor their
//! copy in its memory. Each address is looked up once per run ([`GeoCache`]).

use maxminddb::{geoip2, Reader};
use memmap2::Mmap;
use scanner_rules::FxHashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

/// The databases `-G DIR` reads from DIR, in the order ASN, Country, City.
pub const GEOIP_DATABASES: [&str; 3] = [
    "GeoLite2-ASN.mmdb",
    "GeoLite2-Country.mmdb",
    "GeoLite2-City.mmdb",
];

/// The largest database read (GeoLite2 City is about 60 MiB).
const MAX_DATABASE_BYTES: u64 = 1 << 30;

/// A database that could not be opened: its path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeoIpError {
    /// The database file.
    pub path: PathBuf,
    /// Why it could not be used.
    pub reason: String,
}

impl fmt::Display for GeoIpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for GeoIpError {}

/// The three GeoLite2 databases, read.
pub struct GeoIp {
    asn: Reader<Mmap>,
    country: Reader<Mmap>,
    city: Reader<Mmap>,
}

impl fmt::Debug for GeoIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeoIp").finish_non_exhaustive()
    }
}

/// Opens one database: a regular file of at most [`MAX_DATABASE_BYTES`] with MaxMind DB
/// metadata, mapped into memory.
fn read_database(path: &Path) -> Result<Reader<Mmap>, GeoIpError> {
    let err = |reason: String| GeoIpError {
        path: path.to_path_buf(),
        reason,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // A FIFO planted under the name would block the open: it is refused below instead.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| err(e.to_string()))?;
    let meta = file.metadata().map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.len() > MAX_DATABASE_BYTES {
        return Err(err(format!(
            "{} bytes: larger than the {} MiB a GeoLite2 database may be",
            meta.len(),
            MAX_DATABASE_BYTES >> 20
        )));
    }
    // SAFETY: the map is read-only and private to this process. Its bytes change only if
    // the file is written in place while the run goes on; MaxMind's `geoipupdate` and a
    // download replace a database by renaming a new file over it, which leaves this
    // mapping on the old file. A file cut short in place would fault the run: the
    // databases are the analyst's own files, not evidence.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| err(e.to_string()))?;
    Reader::from_source(map).map_err(|e| err(format!("not a MaxMind database: {e}")))
}

impl GeoIp {
    /// Reads the three databases of `dir` ([`GEOIP_DATABASES`]); the error names the
    /// first that is missing or damaged.
    pub fn open(dir: &Path) -> Result<GeoIp, GeoIpError> {
        let [asn, country, city] = GEOIP_DATABASES.map(|n| dir.join(n));
        Ok(GeoIp {
            asn: read_database(&asn)?,
            country: read_database(&country)?,
            city: read_database(&city)?,
        })
    }

    /// The ASN, country and city cells of an address to look up.
    fn lookup(&self, addr: IpAddr) -> GeoCells {
        let asn = match self.asn.lookup(addr).map(|r| r.decode::<geoip2::Asn>()) {
            Ok(Ok(Some(a))) => a.autonomous_system_organization.unwrap_or("-"),
            _ => "",
        };
        let country = match self.country.lookup(addr) {
            Err(_) => "-",
            Ok(r) => match r.decode::<geoip2::Country>() {
                Ok(Some(c)) => c.country.names.english.unwrap_or(""),
                _ => "",
            },
        };
        let city = match self.city.lookup(addr).map(|r| r.decode::<geoip2::City>()) {
            Ok(Ok(Some(c))) => c.city.names.english.unwrap_or(""),
            _ => "",
        };
        GeoCells::new(asn, country, city)
    }
}

/// The ASN, country and city cells of one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeoCells {
    /// `SrcASN` / `TgtASN`.
    pub asn: Box<str>,
    /// `SrcCountry` / `TgtCountry`.
    pub country: Box<str>,
    /// `SrcCity` / `TgtCity`.
    pub city: Box<str>,
}

impl GeoCells {
    fn new(asn: &str, country: &str, city: &str) -> GeoCells {
        GeoCells {
            asn: asn.into(),
            country: country.into(),
            city: city.into(),
        }
    }
}

/// What an address's text asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Local,
    Private,
    Lookup(IpAddr),
    NotAnAddress,
}

fn private_v4(a: Ipv4Addr) -> bool {
    let [x, y, ..] = a.octets();
    x == 10 || (x == 172 && (16..32).contains(&y)) || (x == 192 && y == 168)
}

fn private_v6(a: Ipv6Addr) -> bool {
    let first = a.segments()[0];
    a.is_unspecified()
        || first & 0xffc0 == 0xfe80
        || first & 0xfe00 == 0xfc00
        || first & 0xff00 == 0xff00
}

fn classify(text: &str) -> Class {
    if text == "LOCAL" || text == "ローカル" {
        return Class::Local;
    }
    let stripped;
    let target = if text.starts_with("::ffff:") {
        stripped = text.replace("::ffff:", "");
        stripped.as_str()
    } else {
        text
    };
    let Ok(addr) = target.parse::<IpAddr>() else {
        return Class::NotAnAddress;
    };
    if addr.is_loopback() || text == "0.0.0.0" {
        return Class::Local;
    }
    let private = match addr {
        IpAddr::V4(a) => private_v4(a),
        IpAddr::V6(a) => private_v6(a),
    };
    if private {
        Class::Private
    } else {
        Class::Lookup(addr)
    }
}

/// One run's lookups: each address looked up once.
#[derive(Default)]
pub(crate) struct GeoCache {
    cells: FxHashMap<IpAddr, GeoCells>,
    local: Option<GeoCells>,
    private: Option<GeoCells>,
    none: Option<GeoCells>,
}

impl GeoCache {
    /// The cells of an address as recorded (`None`: the row has no such address).
    pub(crate) fn cells<'c>(&'c mut self, db: &GeoIp, text: Option<&str>) -> &'c GeoCells {
        let class = text.map_or(Class::NotAnAddress, classify);
        match class {
            Class::Local => self
                .local
                .get_or_insert_with(|| GeoCells::new("Local", "-", "-")),
            Class::Private => self
                .private
                .get_or_insert_with(|| GeoCells::new("Private", "-", "-")),
            Class::NotAnAddress => self.none.get_or_insert_with(|| GeoCells::new("", "", "")),
            Class::Lookup(addr) => self.cells.entry(addr).or_insert_with(|| db.lookup(addr)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_labelled_as_hayabusa_labels_them() {
        let local = [
            "LOCAL",
            "ローカル",
            "127.0.0.1",
            "127.8.9.1",
            "::1",
            "0.0.0.0",
            "::ffff:127.0.0.1",
        ];
        for a in local {
            assert_eq!(classify(a), Class::Local, "{a}");
        }
        let private = [
            "10.1.1.128",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.128.128",
            "::ffff:10.0.0.5",
            "::",
            "fe80::123:33ef:fe11:1",
            "febf::1",
            "fd12:3456:789a::1",
            "fc00::1",
            "ff02::1",
        ];
        for a in private {
            assert_eq!(classify(a), Class::Private, "{a}");
        }
        for (a, ip) in [
            ("172.32.0.1", "172.32.0.1"),
            ("172.15.0.1", "172.15.0.1"),
            ("192.169.0.1", "192.169.0.1"),
            ("11.0.0.1", "11.0.0.1"),
            ("::ffff:203.0.113.9", "203.0.113.9"),
            ("0.0.0.1", "0.0.0.1"),
            ("fec0::1", "fec0::1"),
            ("2001:218::1", "2001:218::1"),
            ("::FFFF:203.0.113.9", "::ffff:203.0.113.9"),
        ] {
            assert_eq!(classify(a), Class::Lookup(ip.parse().unwrap()), "{a}");
        }
        for a in [
            "-",
            "",
            "local",
            "203.0.113.9:3389",
            " 203.0.113.9",
            "[::1]",
        ] {
            assert_eq!(classify(a), Class::NotAnAddress, "{a:?}");
        }
    }

    #[test]
    fn a_missing_or_damaged_database_is_named() {
        let dir = std::env::temp_dir().join(format!("scanner-geo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = GeoIp::open(&dir).unwrap_err();
        assert_eq!(e.path, dir.join("GeoLite2-ASN.mmdb"));
        std::fs::write(dir.join("GeoLite2-ASN.mmdb"), b"not a database").unwrap();
        let e = GeoIp::open(&dir).unwrap_err();
        assert_eq!(e.path, dir.join("GeoLite2-ASN.mmdb"));
        assert!(e.reason.contains("not a MaxMind database"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
