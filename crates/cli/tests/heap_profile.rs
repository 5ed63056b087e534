//! `--heap-profile FILE`: refused with a clear message without the `jemalloc-prof`
//! feature; with it, a gzip pprof profile naming scanner's functions and a flamegraph
//! beside it.

mod support;
use support::*;

/// A timeline of the demo corpus with the built-in rules, profiled into `profile`,
/// with `tmp` as the temporary folder. The heap is small (about 1 MiB): jemalloc samples
/// every 4 KiB (2^12) instead of 64 KiB so that the rules' allocations are surely in.
fn profiled_run(tmp: &std::path::Path, profile: &std::path::Path) -> std::process::Output {
    command()
        .args([
            "csv-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "-q",
            "-o",
            discard(),
            "-C",
            "--heap-profile",
            profile.to_str().unwrap(),
        ])
        .env("TZ", "UTC")
        .env("TMPDIR", tmp)
        .env("_RJEM_MALLOC_CONF", "lg_prof_sample:12")
        .output()
        .expect("run scanner")
}

#[cfg(not(feature = "jemalloc-prof"))]
#[test]
fn heap_profile_needs_the_feature() {
    let d = scratch("heap-profile-unbuilt");
    let profile = d.join("heap.pb.gz");
    let o = profiled_run(&d, &profile);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--features jemalloc-prof"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        names_in(&d).is_empty(),
        "nothing written: {:?}",
        names_in(&d)
    );
    // The flag is global: it is refused the same way before a subcommand.
    let o = scanner(&["--heap-profile", profile.to_str().unwrap(), "list-profiles"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

#[cfg(feature = "jemalloc-prof")]
#[test]
fn heap_profile_is_gzip_pprof_naming_scanner_functions() {
    use std::io::Read;
    let d = scratch("heap-profile");
    let tmp = scratch("heap-profile-tmp");
    let profile = d.join("heap.pb.gz");
    let o = profiled_run(&tmp, &profile);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let gz = std::fs::read(&profile).expect("the profile is written");
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
    let mut proto = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut proto)
        .expect("the profile decompresses");
    assert!(proto.len() > 1000, "{} bytes of protobuf", proto.len());
    // The string table holds the symbolised function names and the sample type.
    let strings = text(&proto);
    assert!(strings.contains("inuse_space"), "sample type");
    assert!(
        strings.contains("scanner_rules::"),
        "a function of the rules crate (where rule loading allocates)"
    );
    let svg = std::fs::read_to_string(d.join("heap.pb.gz.svg")).expect("the flamegraph");
    assert!(svg.contains("<svg") && svg.contains("scanner_rules::"));
    assert_eq!(names_in(&d), ["heap.pb.gz", "heap.pb.gz.svg"]);
    // jemalloc's dumps went to a private folder of the temporary folder, removed at exit.
    assert!(names_in(&tmp).is_empty(), "{:?}", names_in(&tmp));

    // An existing profile is never replaced: refused before the run, left as it was.
    let o = profiled_run(&tmp, &profile);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("exists"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&profile).unwrap(), gz);
}
