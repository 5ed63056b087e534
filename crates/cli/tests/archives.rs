//! Evidence as it arrives: files scanner does not read are named in the summary, and
//! archives (zip, tar, 7z, nested) are read in place, their members named by archive
//! and member in every output.

mod support;

use support::{root, scanner_utc, scratch, text};

#[test]
fn files_not_read_are_counted_by_extension_in_the_summary() {
    let d = scratch("not-read");
    std::fs::copy(
        root().join("testdata/evtx/security.evtx"),
        d.join("security.evtx"),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for (name, body) in [
        ("a.txt", "x"),
        ("sub/b.TXT", "y"),
        ("c.log", "z"),
        ("README", "r"),
    ] {
        std::fs::write(d.join(name), body).unwrap();
    }
    let dir = d.display().to_string();
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        &dir,
        "-o",
        support::discard(),
        "-w",
        "-C",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not read: 4 files (.txt 2, no extension 1, .log 1)"),
        "{err}"
    );
    // A folder with nothing to read says what it met.
    std::fs::remove_file(d.join("security.evtx")).unwrap();
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        &dir,
        "-o",
        support::discard(),
        "-w",
        "-C",
    ]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("note: not read: 4 files"), "{err}");
    // So do the commands without a summary.
    let out = scanner_utc(&["eid-metrics", "-d", &dir]);
    assert!(
        text(&out.stderr).contains("note: not read: 4 files"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

use std::io::Write;
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{AesMode, CompressionMethod, ZipWriter};

/// The project's own EVTX files, by name.
fn logs() -> Vec<(&'static str, Vec<u8>)> {
    ["security.evtx", "generated.evtx"]
        .iter()
        .map(|n| {
            (
                *n,
                std::fs::read(root().join("testdata/evtx").join(n)).unwrap(),
            )
        })
        .collect()
}

/// A zip of `members` (name, bytes), each written with `options`.
fn zip_of(members: &[(String, Vec<u8>)], options: SimpleFileOptions) -> Vec<u8> {
    let mut w = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in members {
        w.start_file(name.as_str(), options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn deflated() -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
}

/// A Velociraptor offline collection of the project's logs: the logs under
/// `uploads/auto/C%3A/…` and `uploads/ntfs/%5C%5C.%5CC%3A/…`, beside the collection's
/// own JSON records and a file that is not a log.
fn collection(options: SimpleFileOptions) -> Vec<u8> {
    let logs = logs();
    let members = vec![
        (
            "uploads/auto/C%3A/Windows/System32/winevt/Logs/Security.evtx".to_string(),
            logs[0].1.clone(),
        ),
        (
            "uploads/ntfs/%5C%5C.%5CC%3A/Windows/System32/winevt/Logs/Generated.evtx".to_string(),
            logs[1].1.clone(),
        ),
        (
            "uploads.json".to_string(),
            b"{\"Type\":\"auto\"}\n".to_vec(),
        ),
        ("log.json".to_string(), b"{\"level\":\"INFO\"}\n".to_vec()),
        (
            "uploads/auto/C%3A/Windows/notes.txt".to_string(),
            b"not a log".to_vec(),
        ),
    ];
    zip_of(&members, options)
}

/// A folder holding the project's logs unpacked.
fn unpacked(d: &Path) -> PathBuf {
    let u = d.join("unpacked");
    std::fs::create_dir_all(&u).unwrap();
    for (n, b) in logs() {
        std::fs::write(u.join(n), b).unwrap();
    }
    u
}

/// The timeline (standard profile: time, rule, level, computer, channel, EventID,
/// RecordID, Details, …) of `args` with the built-in rules, the run's exit code and
/// its standard error; a private temporary folder that must be left empty.
fn timeline(d: &Path, args: &[&str]) -> (String, Option<i32>, String) {
    let out = d.join("out.csv");
    let tmp = d.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let o = out.display().to_string();
    let mut all = vec!["csv-timeline", "--builtin-rules", "-w", "-C", "-o", &o];
    all.extend_from_slice(args);
    let run = support::scanner_in(&tmp, &all);
    assert_eq!(
        support::names_in(&tmp),
        Vec::<String>::new(),
        "nothing is left in the temporary folder"
    );
    let csv = std::fs::read_to_string(&out).unwrap_or_default();
    (csv, run.status.code(), text(&run.stderr))
}

/// The expected timeline: the unpacked logs'.
fn expected(d: &Path) -> String {
    let u = unpacked(d).display().to_string();
    let (csv, code, err) = timeline(d, &["-d", &u]);
    assert_eq!(code, Some(0), "{err}");
    assert!(csv.lines().count() > 3, "{csv}");
    csv
}

#[test]
fn a_velociraptor_collection_gives_the_detections_of_its_logs_unpacked() {
    let d = scratch("velociraptor");
    let want = expected(&d);
    let c = d.join("collections");
    std::fs::create_dir_all(&c).unwrap();
    // Named as Velociraptor names it, and once more under a name that says nothing:
    // archives are told by their first bytes.
    std::fs::write(
        c.join("Collection-WS01-2024-03-12T09_00_00Z.zip"),
        collection(deflated()),
    )
    .unwrap();
    let dir = c.display().to_string();
    let (csv, code, err) = timeline(&d, &["-d", &dir]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    assert!(err.contains("not read: 3 files (.json 2, .txt 1)"), "{err}");
    // -f, and the verbose profile's EvtxFile: archive and member, decoded.
    let f = c.join("Collection-WS01-2024-03-12T09_00_00Z.zip");
    std::fs::rename(&f, c.join("evidence.bin")).unwrap();
    let f = c.join("evidence.bin").display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f, "-p", "verbose"]);
    assert_eq!(code, Some(0), "{err}");
    let security = format!("{f}/uploads/auto/C:/Windows/System32/winevt/Logs/Security.evtx");
    let generated =
        format!("{f}/uploads/ntfs/\\\\.\\C:/Windows/System32/winevt/Logs/Generated.evtx");
    assert!(csv.contains(&format!("\"{security}\"")), "{csv}");
    // So do the commands that read every record.
    let out = support::scanner_utc(&["eid-metrics", "-f", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = support::scanner_utc(&["log-metrics", "-f", &f]);
    let table = text(&out.stdout);
    assert!(
        table.contains("Security.evtx") && table.contains("Generated.evtx"),
        "{table}"
    );
    let out = support::scanner_utc(&["search", "-f", &f, "-k", "jsmith"]);
    assert!(
        text(&out.stdout).contains(&security),
        "{}",
        text(&out.stdout)
    );
    let _ = generated;
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_encrypted_collection_is_read_with_its_password_never_shown() {
    let d = scratch("password");
    let want = expected(&d);
    let secret = "Velociraptor-S3cret!";
    let z = d.join("Collection-WS01.zip");
    let aes = deflated().with_aes_encryption(AesMode::Aes256, secret);
    std::fs::write(&z, collection(aes)).unwrap();
    let f = z.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f, "--archive-password", secret]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    assert!(!err.contains(secret) && !csv.contains(secret));
    // Alone and without it: nothing can be read, an input error naming archive and
    // member, exit 3.
    let (_, code, err) = timeline(&d, &["-f", &f]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("Logs/Security.evtx: encrypted, and no password"),
        "{err}"
    );
    assert!(err.contains("no input file could be read"), "{err}");
    // Without it, or with another: an input error naming archive and member, and
    // exit 3 (beside a log read, as for other input errors).
    let u = d.join("unpacked/security.evtx").display().to_string();
    for extra in [&[][..], &["--archive-password", "wrong"][..]] {
        let mut args = vec!["-f", f.as_str(), "-f", &u];
        args.extend_from_slice(extra);
        let (_, code, err) = timeline(&d, &args);
        assert_eq!(code, Some(3), "{err}");
        let member = format!("{f}/uploads/auto/C:/Windows/System32/winevt/Logs/Security.evtx");
        assert!(err.contains(&member), "{err}");
        let why = if extra.is_empty() {
            "encrypted, and no password was given (--archive-password)"
        } else {
            "encrypted, and the password given does not open it"
        };
        assert!(err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_zip_inside_a_zip_is_read_and_named_through_both() {
    let d = scratch("nested");
    let want = expected(&d);
    let inner = zip_of(
        &logs()
            .into_iter()
            .map(|(n, b)| (n.to_string(), b))
            .collect::<Vec<_>>(),
        deflated(),
    );
    let outer = zip_of(
        &[("host/inner.zip".to_string(), inner)],
        SimpleFileOptions::default(),
    );
    let z = d.join("outer.zip");
    std::fs::write(&z, outer).unwrap();
    let f = z.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    let (csv, _, _) = timeline(&d, &["-f", &f, "-p", "verbose"]);
    assert!(
        csv.contains(&format!("\"{f}/host/inner.zip/security.evtx\"")),
        "{csv}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Sets the uncompressed size a zip of one member declares, in its local header and
/// its central directory entry, to `size`.
fn declare_size(zip: &mut [u8], size: u32) {
    assert_eq!(&zip[..4], b"PK\x03\x04");
    zip[22..26].copy_from_slice(&size.to_le_bytes());
    let c = zip
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    zip[c + 24..c + 28].copy_from_slice(&size.to_le_bytes());
}

/// Scans the archive `bytes` (written as `name`) beside a plain log; its stderr, after
/// checking it ended with exit 3 and the plain log's detections.
fn hostile(d: &Path, name: &str, bytes: &[u8]) -> String {
    let z = d.join(name);
    std::fs::write(&z, bytes).unwrap();
    let u = unpacked(d).join("security.evtx").display().to_string();
    let f = z.display().to_string();
    let (csv, code, err) = timeline(d, &["-f", &f, "-f", &u]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        csv.contains("Successful RDP Logon"),
        "the rest is read: {csv}"
    );
    err
}

#[test]
fn hostile_zips_end_with_clear_errors_and_write_nothing_outside() {
    let d = scratch("hostile");
    let security = logs()[0].1.clone();
    let one = |name: &str, o| zip_of(&[(name.to_string(), security.clone())], o);
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);

    // A member that holds more than its header declares.
    let mut lying = one("Security.evtx", stored);
    declare_size(&mut lying, 1000);
    let err = hostile(&d, "lying.zip", &lying);
    assert!(
        err.contains("lying.zip/Security.evtx: holds more than the 1000 bytes its header declares"),
        "{err}"
    );

    // A member that declares an expansion no log needs: refused before it is read.
    let mut bomb = one("bomb.evtx", deflated());
    declare_size(&mut bomb, 3 << 30);
    let err = hostile(&d, "bomb.zip", &bomb);
    assert!(err.contains("bomb.zip/bomb.evtx: expands"), "{err}");
    assert!(err.contains("(a zip bomb?)"), "{err}");

    // Names that would leave any folder they were extracted to: only shown.
    let names = [
        "../../../../../../../../../tmp/escaped.evtx",
        "/etc/absolute.evtx",
        "C:\\Windows\\drive.evtx",
        "nul\u{0}byte.evtx",
    ];
    let members: Vec<(String, Vec<u8>)> = names
        .iter()
        .map(|n| (n.to_string(), security.clone()))
        .collect();
    let z = d.join("names.zip");
    std::fs::write(&z, zip_of(&members, deflated())).unwrap();
    let f = z.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f, "-p", "verbose"]);
    assert_eq!(code, Some(0), "{err}");
    for shown in [
        format!("{f}/../../../../../../../../../tmp/escaped.evtx"),
        format!("{f}//etc/absolute.evtx"),
        format!("{f}/C:\\Windows\\drive.evtx"),
        format!("{f}/nul\u{FFFD}byte.evtx"),
    ] {
        assert!(csv.contains(&shown), "{shown} in {csv}");
    }
    assert!(!Path::new("/tmp/escaped.evtx").exists());
    assert!(!Path::new("/etc/absolute.evtx").exists());

    // Archives nested deeper than the bound: not opened.
    let mut nested = one("Security.evtx", deflated());
    for i in 0..6 {
        nested = zip_of(&[(format!("level{i}.zip"), nested)], deflated());
    }
    let err = hostile(&d, "deep.zip", &nested);
    assert!(
        err.contains("/level2.zip: an archive nested deeper than 4 archives; not opened"),
        "{err}"
    );

    // A damaged archive (cut short).
    let whole = collection(deflated());
    let err = hostile(&d, "cut.zip", &whole[..whole.len() / 2]);
    assert!(err.contains("cut.zip: not a readable zip archive"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Sets the sizes a zip64 zip of one member declares in its zip64 extra fields (local
/// header and central directory entry, where the `zip` crate writes both sizes for a
/// `large_file` member): the uncompressed size to `size`, and the compressed size to
/// `packed` when given.
fn declare_size64(zip: &mut [u8], size: u64, packed: Option<u64>) {
    let field = |zip: &mut [u8], at: usize| {
        assert_eq!(&zip[at..at + 4], b"\x01\x00\x10\x00", "a zip64 extra field");
        zip[at + 4..at + 12].copy_from_slice(&size.to_le_bytes());
        if let Some(p) = packed {
            zip[at + 12..at + 20].copy_from_slice(&p.to_le_bytes());
        }
    };
    assert_eq!(&zip[..4], b"PK\x03\x04");
    assert_eq!(&zip[18..26], &[0xFF; 8], "sizes in the zip64 extra field");
    let name = u16::from_le_bytes([zip[26], zip[27]]) as usize;
    field(zip, 30 + name);
    let c = zip
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    assert_eq!(
        &zip[c + 20..c + 28],
        &[0xFF; 8],
        "sizes in the zip64 extra field"
    );
    let name = u16::from_le_bytes([zip[c + 28], zip[c + 29]]) as usize;
    field(zip, c + 46 + name);
}

#[test]
fn zip64_members_that_lie_about_their_sizes_end_with_clear_errors() {
    let d = scratch("zip64");
    let security = logs()[0].1.clone();
    let zip64 = |o: SimpleFileOptions| {
        zip_of(
            &[("Security.evtx".to_string(), security.clone())],
            o.large_file(true),
        )
    };
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);

    // Unchanged, a zip64 member is read as any other.
    let plain = d.join("plain64.zip");
    std::fs::write(&plain, zip64(deflated())).unwrap();
    let f = plain.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert!(csv.contains("Successful RDP Logon"), "{csv}");

    // A size past any bound (2^62 bytes): refused before anything is read or written.
    let mut huge = zip64(deflated());
    declare_size64(&mut huge, 1 << 62, None);
    let err = hostile(&d, "huge64.zip", &huge);
    assert!(
        err.contains(&format!(
            "huge64.zip/Security.evtx: declares {} bytes, more than the 16 GiB a member may expand to",
            1u64 << 62
        )),
        "{err}"
    );

    // Less than the member holds: refused when the member passes what it declared.
    let mut short = zip64(stored);
    declare_size64(&mut short, 1000, None);
    let err = hostile(&d, "short64.zip", &short);
    assert!(
        err.contains(
            "short64.zip/Security.evtx: holds more than the 1000 bytes its header declares"
        ),
        "{err}"
    );

    // More than the member holds (within the bounds): the member ends early, which its
    // checksum tells.
    let mut long = zip64(stored);
    declare_size64(&mut long, 8 << 20, Some(8 << 20));
    let err = hostile(&d, "long64.zip", &long);
    assert!(
        err.contains("long64.zip/Security.evtx: damaged: Invalid checksum"),
        "{err}"
    );

    // A compressed size past the archive's end, and an expansion past the ratio.
    let mut past = zip64(deflated());
    declare_size64(&mut past, 1 << 30, Some(1 << 40));
    let err = hostile(&d, "past64.zip", &past);
    assert!(
        err.contains(&format!(
            "past64.zip/Security.evtx: holds {} of the {} bytes its header declares (damaged)",
            security.len(),
            1u64 << 30
        )),
        "{err}"
    );
    let mut bomb = zip64(deflated());
    declare_size64(&mut bomb, 15 << 30, None);
    let err = hostile(&d, "bomb64.zip", &bomb);
    assert!(err.contains("bomb64.zip/Security.evtx: expands"), "{err}");
    assert!(err.contains("(a zip bomb?)"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A tar of `members` (name, bytes), with a symbolic and a hard link to the first.
fn tar_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, bytes.as_slice()).unwrap();
    }
    for (kind, name) in [
        (tar::EntryType::Symlink, "link-to-passwd.evtx"),
        (tar::EntryType::Link, "hard-link.evtx"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        h.set_cksum();
        b.append_link(&mut h, name, "/etc/passwd").unwrap();
    }
    b.into_inner().unwrap()
}

/// A KAPE target's layout of the project's logs, with a file that is not a log.
fn kape_members() -> Vec<(String, Vec<u8>)> {
    let mut m: Vec<(String, Vec<u8>)> = logs()
        .into_iter()
        .map(|(n, b)| (format!("C/Windows/System32/winevt/Logs/{n}"), b))
        .collect();
    m.push(("C/$MFT".to_string(), vec![0x46; 1024]));
    m
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn bzip2_of(bytes: &[u8]) -> Vec<u8> {
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    bz.write_all(bytes).unwrap();
    bz.finish().unwrap()
}

#[test]
fn a_kape_tree_and_tar_gz_bz2_and_a_tar_in_a_zip_give_the_detections_of_the_logs() {
    let d = scratch("kape");
    let want = expected(&d);
    // The tree a KAPE target writes.
    let tree = d.join("kape");
    for (name, bytes) in kape_members() {
        let p = tree.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let t = tree.display().to_string();
    let (csv, code, err) = timeline(&d, &["-d", &t]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    assert!(err.contains("not read: 1 file (no extension 1)"), "{err}");
    // The same as tar, tar.gz, tgz, tar.bz2, and a tar.gz inside a zip.
    let tar = tar_of(&kape_members());
    let a = d.join("archives");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join("host.tar"), &tar).unwrap();
    std::fs::write(a.join("host.tgz"), gzip(&tar)).unwrap();
    std::fs::write(a.join("host.tar.bz2"), bzip2_of(&tar)).unwrap();
    let zipped = zip_of(&[("host.tar.gz".to_string(), gzip(&tar))], deflated());
    std::fs::write(a.join("sent.zip"), zipped).unwrap();
    for name in ["host.tar", "host.tgz", "host.tar.bz2", "sent.zip"] {
        let f = a.join(name).display().to_string();
        let (csv, code, err) = timeline(&d, &["-f", &f]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert_eq!(csv, want, "{name}");
        // $MFT and the two links are not read; the links are never followed.
        assert!(
            err.contains("not read: 3 files (.evtx 2, no extension 1)"),
            "{name}: {err}"
        );
    }
    let f = a.join("sent.zip").display().to_string();
    let (csv, _, _) = timeline(&d, &["-f", &f, "-p", "verbose"]);
    let shown = format!("\"{f}/host.tar.gz/C/Windows/System32/winevt/Logs/security.evtx\"");
    assert!(csv.contains(&shown), "{csv}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hostile_tars_end_with_clear_errors() {
    let d = scratch("hostile-tar");
    // A stream that expands past the ratio allowed: stopped as it is read.
    let bomb = tar_of(&[("bomb.evtx".to_string(), vec![0u8; 80 << 20])]);
    let err = hostile(&d, "bomb.tar.bz2", &bzip2_of(&bomb));
    // Listed by its first bytes, it is stopped where the stream passes the bound, then
    // and when it is read.
    let listed = "bomb.tar.bz2: stops after 1 of its entries: the archive expands";
    assert!(err.contains(listed), "{err}");
    let read = "bomb.tar.bz2/bomb.evtx: damaged: the archive expands";
    assert!(err.contains(read), "{err}");
    assert!(err.contains("past the 2000 allowed (a bomb?)"), "{err}");
    // Cut short in its second member.
    let tar = tar_of(&kape_members());
    let err = hostile(&d, "cut.tar", &tar[..tar.len() / 2]);
    assert!(err.contains("cut.tar"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A 7z (solid, LZMA2) of `members`, encrypted with AES-256 when `secret` is given.
fn sevenz_of(members: &[(String, Vec<u8>)], secret: Option<&str>) -> Vec<u8> {
    use sevenz_rust2::{encoder_options::AesEncoderOptions, ArchiveEntry, ArchiveWriter};
    let mut w = ArchiveWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    if let Some(s) = secret {
        w.set_content_methods(vec![
            AesEncoderOptions::new(s.into()).into(),
            sevenz_rust2::EncoderMethod::LZMA2.into(),
        ]);
    }
    let entries = members
        .iter()
        .map(|(n, _)| ArchiveEntry::new_file(n))
        .collect();
    let readers = members
        .iter()
        .map(|(_, b)| sevenz_rust2::SourceReader::new(b.as_slice()))
        .collect();
    w.push_archive_entries(entries, readers).unwrap();
    w.finish().unwrap().into_inner()
}

#[test]
fn a_7z_plain_or_encrypted_gives_the_detections_of_the_logs() {
    let d = scratch("sevenz");
    let want = expected(&d);
    let plain = d.join("host.7z");
    std::fs::write(&plain, sevenz_of(&kape_members(), None)).unwrap();
    let f = plain.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    assert!(err.contains("not read: 1 file (no extension 1)"), "{err}");
    let (csv, _, _) = timeline(&d, &["-f", &f, "-p", "verbose"]);
    let shown = format!("\"{f}/C/Windows/System32/winevt/Logs/security.evtx\"");
    assert!(csv.contains(&shown), "{csv}");
    // Encrypted: read with its password; without it an error naming the archive.
    let secret = "7z-S3cret";
    let locked = d.join("locked.7z");
    std::fs::write(&locked, sevenz_of(&kape_members(), Some(secret))).unwrap();
    let f = locked.display().to_string();
    let (csv, code, err) = timeline(&d, &["-f", &f, "--archive-password", secret]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv, want);
    let u = d.join("unpacked/security.evtx").display().to_string();
    let (_, code, err) = timeline(&d, &["-f", &f, "-f", &u]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("locked.7z"), "{err}");
    assert!(err.contains("encrypted"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}
