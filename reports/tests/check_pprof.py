#!/usr/bin/python3
"""Reads qaudit's pprof export back with `go tool pprof` and holds it against qaudit's own text
report (and the JSON report where the text rounds bytes): -top and -traces must give the same
total and the same top sites; the folded export must hold the same stacks as the traces. With
TRUTH (the figures fixture_known_sites writes of itself), the export is held to the program's own
counts too: every allocation counted, each site is a leaf with exactly its allocations, bytes and
live bytes; sampled, each site that must have been sampled (20 samples expected or more) is one.
usage: check_pprof.py QAUDIT DUMP WORK_DIR NAME [TRUTH]   (prints ok:/FAIL: lines, exits 1 on a
failure)"""
import json
import os
import re
import subprocess
import sys

qaudit, dump, work, name = sys.argv[1:5]
truth_path = sys.argv[5] if len(sys.argv) > 5 else None
failures = 0
TOP = 5


def check(what, condition, detail=""):
    global failures
    if condition:
        print(f"ok: {name}: {what}")
    else:
        failures += 1
        print(f"FAIL: {name}: {what} {detail}")


def run(*args):
    """The output of a command that must exit 0 (qaudit report: none of these dumps has a check
    that can fail; go tool pprof)."""
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {name}: {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def pprof(*args):
    return run("go", "tool", "pprof", "-symbolize=none", *args, profile)


def number(text):
    return int(text.lstrip("~").replace(",", ""))


# --- qaudit's own text report, every site shown (--top large), and its pprof export.
profile = os.path.join(work, f"{name}.pb.gz")
run(qaudit, "report", dump, "--format", "pprof", "-o", profile)
text = run(qaudit, "report", dump, "--top", "1000000")
report = json.loads(run(qaudit, "report", dump, "--format", "json"))


def text_sites(text):
    """{site id: (allocations, [frame names innermost first])} from the text report."""
    table = text.split("By allocations (")[1].split("By bytes (")[0]
    allocs = {}
    for line in table.splitlines():
        m = re.match(r"^  #(\d+)\s+(~?[\d,]+)\s", line)
        if m:
            allocs[int(m.group(1))] = number(m.group(2))
    stacks, current = {}, None
    section = text.split("Stacks of the sites above, innermost frame first:")[1]
    for line in section.splitlines():
        m = re.match(r"^  site #(\d+):", line)
        if m:
            current = int(m.group(1))
            stacks[current] = []
            continue
        m = re.match(r"^      #\d+ (.*)$", line)
        if m and current is not None:
            for level in m.group(1).split(" <- "):
                level = re.sub(r" \?$", "", level)
                level = re.sub(r" \[inlined\]$", "", level)
                level = re.sub(r" \([^()]*:\d+\)$", "", level)
                stacks[current].append(level)
        elif not line.startswith("  "):
            current = None
    return {i: (allocs[i], stacks.get(i, ["(no stack)"])) for i in allocs}


def traces(sample_index):
    """[(value, [frame names leaf first])] from pprof -traces."""
    out = pprof("-traces", f"-sample_index={sample_index}")
    result = []
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        frames, value = [], None
        for line in block.splitlines():
            m = re.match(r"^\s*(\d+)\s{3}(\S.*)$", line)
            if value is None and m and ":" not in line.split()[0]:
                value, first = int(m.group(1)), m.group(2)
                frames.append(first)
            elif value is not None and line.strip():
                frames.append(line.strip())
        if value is not None:
            result.append((value, [re.sub(r" \(inline\)$", "", f) for f in frames]))
    return result


def top(sample_index, unit=None):
    """(total, [(flat, name)]) from pprof -top, every node."""
    args = ["-top", f"-sample_index={sample_index}", "-nodecount=1000000", "-nodefraction=0"]
    if unit:
        args.append(f"-unit={unit}")
    out = pprof(*args)
    total = int(re.search(r"of (\d+)B? total", out).group(1))
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.*)$", line)
        if m and int(m.group(1)) > 0:  # nodes without flat count are callers only
            rows.append((int(m.group(1)), re.sub(r" \(inline\)$", "", m.group(2).strip())))
    return total, rows


sites = text_sites(text)
text_total = sum(a for a, _ in sites.values())
check("the text report shows sites to compare", len(sites) >= 1, f"({len(sites)})")

# --- totals: -top's, the sum of -traces, the sum of the text report's sites.
total, rows = top("alloc_objects")
check("-top total equals the text report's sites' allocations", total == text_total,
      f"(pprof {total}, text {text_total})")
trace_list = traces("alloc_objects")
check("-traces sum equals the text report's", sum(v for v, _ in trace_list) == text_total,
      f"(traces {sum(v for v, _ in trace_list)}, text {text_total})")
if all(s["precision"] == "exact" for s in report["sites"]):
    t = report["totals"]
    check("exact: the total is every allocation (allocs + reallocs)",
          total == t["allocs"] + t["reallocs"], f"({total} vs {t['allocs']} + {t['reallocs']})")

# --- top sites: the text report's first sites by allocations are traces with the same count and
# the same frames; -top's first functions have the flat counts of the text's sites ending there.
ranked = sorted(sites.items(), key=lambda kv: -kv[1][0])[:TOP]
pool = list(trace_list)
for site, (allocs, frames) in ranked:
    match = (allocs, frames) in pool
    if match:
        pool.remove((allocs, frames))
    check(f"site #{site} ({allocs} allocations at {frames[0]}) is a trace", match,
          f"\n  text: {frames}\n  pprof: {[f for v, f in trace_list if v == allocs]}")
flat = {}
for allocs, frames in sites.values():
    flat[frames[0]] = flat.get(frames[0], 0) + allocs
for value, function in rows[:TOP]:
    check(f"-top {function} flat {value} equals the text's sites ending there",
          flat.get(function) == value, f"(text {flat.get(function)})")
check("-top's first counts are the text's", [v for v, _ in rows[:TOP]] ==
      sorted(flat.values(), reverse=True)[:TOP])

# --- bytes allocated and live (exact in the JSON report; the text rounds them to KiB).
site_bytes = sum(round(s["bytes"]) for s in report["sites"])
live_bytes = sum(round(s["live_bytes"]) for s in report["sites"])
check("alloc_space total equals the report's", top("alloc_space", "B")[0] == site_bytes,
      f"({top('alloc_space', 'B')[0]} vs {site_bytes})")
if live_bytes > 0:
    check("inuse_space total equals the report's live bytes", top("inuse_space", "B")[0] == live_bytes,
          f"({top('inuse_space', 'B')[0]} vs {live_bytes})")
raw = pprof("-raw")
check("inuse_space is the default sample type", "inuse_space/bytes[dflt]" in raw)
mappings = raw.split("Mappings\n")[1].splitlines()
check("the first mapping has a build id", re.search(r" [0-9a-f]{40} ", mappings[0] + " ") is not None,
      mappings[0])

# --- the program's own counts, where it wrote them (fixture_known_sites).
if truth_path:
    truth = json.load(open(truth_path))
    objects = dict((f, v) for v, f in top("alloc_objects")[1])
    space = dict((f, v) for v, f in top("alloc_space", "B")[1])
    inuse = dict((f, v) for v, f in top("inuse_space", "B")[1])
    config = json.load(open(dump))["config"]
    if config["stacks"] == "always":
        for site, t in truth.items():
            got = (objects.get(site), space.get(site), inuse.get(site, 0))
            want = (t["allocs"], t["bytes"], t["live_bytes"])
            check(f"{site}: allocations, bytes and live bytes are the program's own {want}",
                  got == want, f"(pprof {got})")
    else:
        every, by_bytes = config["sample_every"], config["sample_by_bytes"]
        sure = [site for site, t in truth.items()
                if (t["bytes"] if by_bytes else t["allocs"]) / every >= 20]
        check(f"sampled: the sites sure to be sampled ({', '.join(sure)}) are leaves",
              len(sure) >= 3 and all(objects.get(site, 0) > 0 for site in sure),
              f"(leaves {sorted(objects)})")

# --- folded: the same stacks as the traces, root first, summed per stack; the counts add up.
folded = run(qaudit, "report", dump, "--format", "folded")
lines = {}
parsed = True
for line in folded.splitlines():
    m = re.match(r"^(.+) (\d+)$", line)
    parsed = parsed and m is not None and m.group(1) not in lines
    if m:
        lines[m.group(1)] = int(m.group(2))
check("folded: every line is 'frames count', each stack once", parsed)
expected = {}
for value, frames in trace_list:
    key = ";".join(reversed(frames))
    expected[key] = expected.get(key, 0) + value
check("folded: the stacks and counts of pprof -traces", lines == expected,
      f"\n  only folded: {sorted(set(lines) - set(expected))[:3]}"
      f"\n  only pprof: {sorted(set(expected) - set(lines))[:3]}")
check("folded: counts sum to the text report's allocations", sum(lines.values()) == text_total)
for weight, want in (("bytes", site_bytes), ("live", live_bytes)):
    out = run(qaudit, "report", dump, "--format", "folded", "--weight", weight)
    got = sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines())
    check(f"folded --weight {weight}: counts sum to the report's", got == want, f"({got} vs {want})")

sys.exit(1 if failures else 0)
