//! `--sort-memory`: the bytes of detections a scan sorts in memory before it spills
//! sorted runs to disk, as given, or by default sized by the machine. Spilling costs a
//! write and a read of every row past the bound, which on the 1.1 GB corpus (161,730
//! rows, 30 copies of the attack corpus) was within the noise of the CPU time (3.7-4.7 s
//! user held in memory, 3.7-4.1 s spilled at 64 or 128 MiB, three interleaved rounds),
//! while holding them all took 215-229 MB of peak RSS against 95-98 MB and 126-141 MB;
//! so the default is modest: memory is what a fleet-wide run on a workstation runs out
//! of first.

const MIB: usize = 1 << 20;

/// `--sort-memory MiB` in bytes.
pub fn from_mib(mib: f64) -> Result<usize, String> {
    if !(mib >= 0.0 && mib.is_finite()) {
        return Err(format!(
            "--sort-memory {mib}: give a number of MiB, 0 or more"
        ));
    }
    Ok((mib * 1048576.0).min(usize::MAX as f64) as usize)
}

/// The bound when `--sort-memory` is not given: a 128th of the memory this process may
/// use (`MemTotal` of `/proc/meminfo`, or its control group's limit when lower, as in a
/// container), within 64..=512 MiB; 64 MiB where it cannot be read.
pub fn default() -> usize {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let limits = [
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
    ];
    let meminfo = read("/proc/meminfo");
    for_memory(usable(
        meminfo.as_deref(),
        limits.iter().flatten().map(String::as_str),
    ))
}

/// The default bound for `memory` usable bytes (`None`: not known).
fn for_memory(memory: Option<usize>) -> usize {
    memory.map_or(64 * MIB, |bytes| (bytes / 128).clamp(64 * MIB, 512 * MIB))
}

/// The memory a process may use: `MemTotal`, or a control group limit below it (`max`,
/// cgroup v2's "no limit", and v1's huge "no limit" numbers leave `MemTotal`).
fn usable<'a>(meminfo: Option<&str>, limits: impl Iterator<Item = &'a str>) -> Option<usize> {
    let total = meminfo.and_then(mem_total)?;
    let limit = limits.filter_map(|l| l.trim().parse::<usize>().ok()).min();
    Some(limit.map_or(total, |l| l.min(total)))
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: usize = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then(|| kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_a_128th_of_the_machine_within_bounds() {
        let meminfo = "MemTotal:       24634416 kB\nMemFree:        1000 kB\n";
        let total = mem_total(meminfo);
        assert_eq!(total, Some(24634416 * 1024));
        assert_eq!(for_memory(total), 24634416 * 1024 / 128);
        assert_eq!(for_memory(Some(2048 * MIB)), 64 * MIB);
        assert_eq!(for_memory(Some(1 << 40)), 512 * MIB);
        assert_eq!(for_memory(None), 64 * MIB);
        assert_eq!(mem_total("MemFree: 5 kB\n"), None);
        assert_eq!(mem_total("MemTotal: lots\n"), None);
        assert_eq!(mem_total("MemTotal: 5 MB\n"), None);
    }

    #[test]
    fn a_control_group_limit_below_the_machine_counts() {
        let meminfo = Some("MemTotal: 16777216 kB\n");
        let machine = 16 << 30;
        assert_eq!(usable(meminfo, [].into_iter()), Some(machine));
        assert_eq!(usable(meminfo, ["max\n"].into_iter()), Some(machine));
        assert_eq!(
            usable(meminfo, ["9223372036854771712\n"].into_iter()),
            Some(machine)
        );
        assert_eq!(usable(meminfo, ["2147483648\n"].into_iter()), Some(2 << 30));
        assert_eq!(
            usable(meminfo, ["max", "1073741824"].into_iter()),
            Some(1 << 30)
        );
        assert_eq!(usable(None, ["1073741824"].into_iter()), None);
        // A 2 GiB container on a 16 GiB machine keeps the 64 MiB floor, not 128 MiB.
        assert_eq!(
            for_memory(usable(meminfo, ["2147483648"].into_iter())),
            64 * MIB
        );
    }
}
