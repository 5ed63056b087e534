//! Rules and config files as hostile input (issue 20): files that are not regular,
//! too large or YAML bombs are reported with their name, a config that fails to load
//! fails the run, and rule folders reached through links load once.

mod support;

use std::path::Path;
use support::{path_below, scanner, scratch, text};

/// A rule file that loads and matches the test logs.
const RULE: &str = "title: Logon\nid: 6a7d0b4e-0000-4000-8000-000000000001\nlevel: high\n\
logsource:\n  product: windows\n  service: security\ndetection:\n  s:\n    Channel: Security\n    EventID: 4624\n  condition: s\n";

/// A copy of the project's config folder in `dir`/config, for a test to spoil.
fn config_copy(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("config");
    std::fs::create_dir_all(&c).unwrap();
    for e in std::fs::read_dir(support::root().join("rules/config")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), c.join(e.file_name())).unwrap();
    }
    c
}

/// `mkfifo path`, or false when the platform cannot.
#[cfg(unix)]
fn mkfifo(p: &Path) -> bool {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::mkfifo(c.as_ptr(), 0o600) == 0 }
}

/// Runs a CSV timeline of the test logs with `extra` arguments, writing `out`.
fn timeline(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "csv-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    scanner(&args)
}

#[test]
fn a_config_file_that_fails_to_load_fails_the_run_and_writes_nothing() {
    let d = scratch("config-fails");
    std::fs::write(d.join("r.yml"), RULE).unwrap();
    let config = config_copy(&d);
    let out = d.join("out.csv");
    let ok = timeline(
        &out,
        &[
            "-r",
            d.join("r.yml").to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
        ],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    std::fs::remove_file(&out).unwrap();

    // Bad YAML in the log-source table.
    std::fs::write(config.join("logsource.yaml"), "category: [\n").unwrap();
    let run = timeline(
        &out,
        &[
            "-r",
            d.join("r.yml").to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
        ],
    );
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "config error: {}: ",
            config.join("logsource.yaml").display()
        )),
        "{err}"
    );
    assert!(err.contains("1 config file could not be loaded"), "{err}");
    assert!(!out.exists(), "nothing written");

    // The same through `rules check`.
    let check = scanner(&[
        "rules",
        "check",
        "-r",
        d.join("r.yml").to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn fifo_and_device_config_and_placeholder_files_are_errors_not_hangs() {
    let d = scratch("config-special");
    std::fs::write(d.join("r.yml"), RULE).unwrap();
    let config = config_copy(&d);
    let expand = d.join("expand");
    std::fs::create_dir_all(&expand).unwrap();
    if !mkfifo(&expand.join("admins.txt")) {
        println!("skipped: mkfifo failed on this platform");
        return;
    }
    std::fs::remove_file(config.join("noisy_rules.txt")).ok();
    std::os::unix::fs::symlink("/dev/zero", config.join("noisy_rules.txt")).unwrap();
    let out = d.join("out.csv");
    let run = timeline(
        &out,
        &[
            "-r",
            d.join("r.yml").to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
            "--expand-dir",
            expand.to_str().unwrap(),
        ],
    );
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}: not a regular file (a FIFO)",
            expand.join("admins.txt").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}: not a regular file (a device)",
            config.join("noisy_rules.txt").display()
        )),
        "{err}"
    );
    assert!(err.contains("2 config files could not be loaded"), "{err}");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_data_mapping_alias_bomb_is_refused_quickly() {
    let d = scratch("config-bomb");
    std::fs::write(d.join("r.yml"), RULE).unwrap();
    let config = config_copy(&d);
    std::fs::create_dir_all(config.join("data_mapping")).unwrap();
    // Eight levels of ten aliases over a 1 KB string: 100 GB if expanded.
    let mut bomb = format!(
        "Channel: Security\nEventID: 4624\nx0: &x0 '{}'\n",
        "y".repeat(1024)
    );
    for i in 1..=8 {
        bomb.push_str(&format!(
            "x{i}: &x{i} [{}]\n",
            vec![format!("*x{}", i - 1); 10].join(",")
        ));
    }
    let bad = path_below(&config, "data_mapping/bomb.yaml");
    std::fs::write(&bad, bomb).unwrap();
    let out = d.join("out.csv");
    let run = timeline(
        &out,
        &[
            "-r",
            d.join("r.yml").to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
        ],
    );
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "config error: {}: expands to more than",
            bad.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_rule_alias_bomb_is_a_rule_error_naming_the_file_and_document() {
    let d = scratch("rule-bomb");
    let mut bomb = format!(
        "title: first\n---\ntitle: B\nx0: &x0 '{}'\n",
        "y".repeat(1024)
    );
    for i in 1..=8 {
        bomb.push_str(&format!(
            "x{i}: &x{i} [{}]\n",
            vec![format!("*x{}", i - 1); 10].join(",")
        ));
    }
    std::fs::write(d.join("bomb.yml"), bomb).unwrap();
    std::fs::write(d.join("ok.yml"), RULE).unwrap();
    let run = scanner(&["rules", "check", "-r", d.to_str().unwrap()]);
    let err = text(&run.stderr);
    assert!(
        err.contains(&format!(
            "rule error: {} (document 2): invalid YAML: expands to more than",
            d.join("bomb.yml").display()
        )),
        "{err}"
    );
    assert!(
        text(&run.stdout).contains("loaded 1 of 3 rules"),
        "{}",
        text(&run.stdout)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_rejected_correlation_is_counted_once() {
    let d = scratch("correlation-count");
    std::fs::write(d.join("r.yml"), RULE).unwrap();
    std::fs::write(
        d.join("c.yml"),
        "title: C\ncorrelation:\n  type: event_count\n  rules: [nope]\n  timespan: 1h\n  condition: {gte: 2}\n",
    )
    .unwrap();
    let run = scanner(&["rules", "check", "-r", d.to_str().unwrap()]);
    assert!(
        text(&run.stdout).contains("loaded 1 of 2 rules"),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn rules_sharing_an_id_are_warned_once_per_id_and_all_load() {
    let d = scratch("duplicate-ids");
    for i in 0..5 {
        std::fs::write(d.join(format!("r{i}.yml")), RULE).unwrap();
    }
    let run = scanner(&["rules", "check", "-r", d.to_str().unwrap()]);
    let err = text(&run.stderr);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rule warning:"))
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "rule warning: rule id 6a7d0b4e-0000-4000-8000-000000000001 is shared by 5 rules: {}, {}, {} and 2 more",
            d.join("r0.yml").display(),
            d.join("r1.yml").display(),
            d.join("r2.yml").display()
        )]
    );
    assert!(
        text(&run.stdout).contains("loaded 5 of 5 rules"),
        "{}",
        text(&run.stdout)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn a_linked_rule_folder_is_followed_and_a_loop_reported() {
    let d = scratch("linked-rules");
    let real = d.join("real");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("r.yml"), RULE).unwrap();
    let top = d.join("top");
    std::fs::create_dir_all(&top).unwrap();
    std::os::unix::fs::symlink(&real, top.join("linked")).unwrap();
    std::os::unix::fs::symlink(&top, real.join("up")).unwrap();
    let run = scanner(&["rules", "check", "-r", top.to_str().unwrap()]);
    let err = text(&run.stderr);
    assert!(
        text(&run.stdout).contains("loaded 1 of 2 rules"),
        "{}{err}",
        text(&run.stdout)
    );
    let loops: Vec<&str> = err.lines().filter(|l| l.contains("(a loop)")).collect();
    assert_eq!(
        loops,
        [format!(
            "rule error: {}: a link to a folder that holds it (a loop): not followed",
            top.join("linked/up").display()
        )]
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs `scanner ARGS` and returns its exit code, standard error and peak resident
/// memory in KiB (the child's own, from `wait4`).
#[cfg(target_os = "linux")]
// The child is reaped by wait4, which std's Child does not know of.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], dir: &Path) -> (i32, String, i64) {
    let err = dir.join("stderr.txt");
    let child = support::command()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: the child is ours and not waited for elsewhere; both pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, std::fs::read_to_string(err).unwrap(), usage.ru_maxrss)
}

/// A 50 KB rule of one anchored list of 10,000 items aliased 10,000 times took
/// expand-list 34.7 s and 7.86 GB before it read rules as the loader does.
#[cfg(target_os = "linux")]
#[test]
fn expand_list_reads_an_alias_bomb_within_the_yaml_bound() {
    let d = scratch("expand-bomb");
    let rules = d.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let items = vec!["x"; 10_000].join(",");
    let aliases = vec!["*a"; 10_000].join(",");
    let bomb = format!(
        "title: bomb\ndetection:\n  a: &a [{items}]\n  b: [{aliases}]\n  s:\n    Image|expand: '%bombed%'\n  condition: s\n"
    );
    assert!(bomb.len() > 40_000 && bomb.len() < 60_000);
    std::fs::write(rules.join("bomb.yml"), bomb).unwrap();
    std::fs::write(
        rules.join("ok.yml"),
        "title: ok\ndetection:\n  s:\n    User|expand: '%admins%'\n  condition: s\n",
    )
    .unwrap();
    let (code, err, peak_kb) = run_measured(&["expand-list", "-r", rules.to_str().unwrap()], &d);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(&format!(
            "rule error: {}: invalid YAML: expands to more than",
            rules.join("bomb.yml").display()
        )),
        "{err}"
    );
    assert!(peak_kb < 100 * 1024, "peak {peak_kb} KiB");
    let _ = std::fs::remove_dir_all(&d);
}

/// Every YAML text goes through the rules crate's bounded reader: no other source file
/// of the workspace (tests aside) calls the YAML parser itself.
#[test]
fn no_source_parses_yaml_outside_the_bounded_reader() {
    let crates = support::root().join("crates");
    let mut offenders = Vec::new();
    let mut stack = vec![crates.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                // Integration tests parse the fixtures they write; the reader is the one
                // place allowed to call the parser.
                if name != "tests" && name != "target" && !p.ends_with("yaml/src") {
                    stack.push(p);
                }
                continue;
            }
            if !name.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Unit tests at the end of a file parse their own literals.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            for (i, line) in code.lines().enumerate() {
                let raw = [
                    "yaml_serde::from_",
                    "yaml_serde::Deserializer",
                    "serde_yaml",
                ];
                if raw.iter().any(|r| line.contains(r)) {
                    offenders.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "YAML parsed outside crates/yaml/src:\n{}",
        offenders.join("\n")
    );
}
