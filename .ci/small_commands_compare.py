#!/usr/bin/env python3
"""Compares scanner's expand-list and config-critical-systems with Hayabusa 3.9.0's.

usage: small_commands_compare.py REFERENCE_DIR EXPAND_LIST_OUTPUT CRITICAL_SYSTEMS_OUTPUT

expand-list: the placeholder names are compared as sets (Hayabusa prints its hash set's
order, scanner sorts them). scanner also names the placeholders of `|expand` keys inside
lists and of lists of values, which Hayabusa does not read (EXTRA_PLACEHOLDERS, with the
rules that use them): with a file for each name it lists, `rules check --expand-dir`
disables no rule for a missing placeholder. The count line must count the names listed.

config-critical-systems: Hayabusa 3.9.0 has no reference file (it panicked when its
output was not a terminal, after listing one domain controller,
01566s-win16-ir.threebeesco.com; see ../shared/reference/README.md), so only that
listing is compared; the file servers it never printed are not checked here.
"""
import sys

REFERENCE_DOMAIN_CONTROLLERS = {"01566s-win16-ir.threebeesco.com"}

# Placeholders only scanner lists, and where hayabusa-rules uses them (sigma/builtin/
# placeholder/security/): `- SubjectAccountName|expand: '%Administrators%'`, a key inside
# a list (win_security_modification_of_msds_dmsa_link_attribute.yml,
# win_security_msds_dmsa_object_creation.yml), and `ComputerName|expand:` with a list of
# '%ServerSystems%' and '%DomainControllers%' (win_security_susp_interactive_logons.yml).
EXTRA_PLACEHOLDERS = {"Administrators", "ServerSystems", "DomainControllers"}


def names_after(lines, header_prefix):
    """The names listed after the line starting with header_prefix, to a blank line."""
    out, on = [], False
    for line in lines:
        if line.startswith(header_prefix):
            on = True
            continue
        if on:
            if not line.strip():
                break
            out.append(line.strip())
    return out


def ratio(a, b):
    return len(a & b) / len(a) if a else 1.0


def main():
    ref_dir, ours_expand, ours_critical = sys.argv[1:4]
    failed = False

    ref = open(f"{ref_dir}/expand-list.txt", encoding="utf-8").read().splitlines()
    ours = open(ours_expand, encoding="utf-8").read().splitlines()
    count = lambda ls: next(l for l in ls if "unique expand placeholders found" in l)
    ref_names = set(names_after(ref, count(ref)))
    our_names = set(names_after(ours, count(ours)))
    equal = len(ref_names & our_names)
    print(f"expand-list: {equal} of {len(ref_names)} rows equal "
          f"({len(our_names)} in scanner's; count line: {count(ours)!r})")
    if count(ours) != f"{len(our_names)} unique expand placeholders found:":
        print(f"  count line does not count the {len(our_names)} names listed")
        failed = True
    if our_names - ref_names - EXTRA_PLACEHOLDERS:
        print(f"  unexplained: {sorted(our_names - ref_names - EXTRA_PLACEHOLDERS)}")
        failed = True
    if ratio(ref_names, our_names) < 0.99:
        print(f"  only Hayabusa: {sorted(ref_names - our_names)}; only scanner: {sorted(our_names - ref_names)}")
        failed = True

    crit = open(ours_critical, encoding="utf-8").read().splitlines()
    dcs = set(names_after(crit, "Domain Controllers found"))
    equal = len(dcs & REFERENCE_DOMAIN_CONTROLLERS)
    print(f"config-critical-systems (domain controllers): {equal} of "
          f"{len(REFERENCE_DOMAIN_CONTROLLERS)} rows equal ({len(dcs)} in scanner's)")
    if dcs != REFERENCE_DOMAIN_CONTROLLERS:
        print(f"  scanner listed {sorted(dcs)}")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
