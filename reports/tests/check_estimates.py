#!/usr/bin/env python3
"""Compares qaudit reports of fixture_known_sites with the figures the program knows it made.

usage: check_estimates.py MODE WORK_DIR SEEDS
Reads WORK_DIR/truth-MODE-SEED.json (written by the program) and WORK_DIR/report-MODE-SEED.json
(qaudit report --format json) for each seed. For each of the program's sites and each figure
(allocations, bytes, and live bytes for the leak), the truth must lie in the report's range in at
least 95 % of the seeds. A site the report does not show counts as a miss. Every seed must give
every figure of the four sites (9 in all: the leak's live bytes too), and dumps sampled by bytes
must carry each sample's weight (sites[].allocs_estimate), without which a site's allocations
come from its mean sampled size.
Prints one line per site and figure; exits 1 when one falls short."""
import json
import sys

mode, work, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
FIGURES = ("allocs", "bytes", "live_bytes")
hits, runs, unweighted = {}, {}, []
for seed in range(1, seeds + 1):
    truth = json.load(open(f"{work}/truth-{mode}-{seed}.json"))
    report = json.load(open(f"{work}/report-{mode}-{seed}.json"))
    dump = json.load(open(report["dumps"][0]["source"]))
    weights = any("allocs_estimate" in s for s in dump["sites"])
    by_bytes = (report["dumps"][0]["sampling"] or {}).get("by") == "bytes"
    if by_bytes and not weights:
        unweighted.append(seed)
    sites = {}
    for s in report["sites"]:
        sites.setdefault(s["where"].split(" ")[0], []).append(s)
    for name, t in truth.items():
        for figure in FIGURES:
            if figure == "live_bytes" and t[figure] == 0:
                continue
            key = (name, figure)
            low = sum(s["range"][figure][0] for s in sites.get(name, []))
            high = sum(s["range"][figure][1] for s in sites.get(name, []))
            runs[key] = runs.get(key, 0) + 1
            hits[key] = hits.get(key, 0) + (low <= t[figure] <= high and name in sites)

failed = len(runs) != 9 or any(n != seeds for n in runs.values()) or bool(unweighted)
if len(runs) != 9:
    print(f"FAIL: {mode}: {len(runs)} site figures compared, not 9: {sorted(runs)}")
for key in sorted(k for k in runs if runs[k] != seeds):
    print(f"FAIL: {mode} {key[0]} {key[1]}: compared in {runs[key]} of {seeds} runs")
if unweighted:
    print(f"FAIL: {mode}: the dumps of seeds {unweighted} are sampled by bytes and carry no "
          f"sites[].allocs_estimate")
for key in sorted(runs):
    share = hits[key] / runs[key]
    ok = share >= 0.95
    failed = failed or not ok
    print(f"{'ok' if ok else 'FAIL'}: {mode} {key[0]} {key[1]}: truth within the range in "
          f"{hits[key]} of {runs[key]} runs")
sys.exit(1 if failed else 0)
