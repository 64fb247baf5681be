#!/usr/bin/env bash
# Fails when ctest reported a test as skipped (exit 77: a test that could not run, docs/design.md
# "Tests") or disabled, naming each with the line it printed about it. `make test`
# writes the JUnit file; `.ci/run` calls this after each test run.
# usage: no_skips.sh BUILD_DIR/ctest-junit.xml
set -euo pipefail
junit=${1:?usage: no_skips.sh CTEST_JUNIT_XML}
[ -s "$junit" ] || { echo "no_skips: $junit is missing or empty (did ctest run?)" >&2; exit 2; }
python3 - "$junit" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
cases = suite.findall("testcase")
if not cases:
    sys.exit(f"no_skips: {sys.argv[1]} lists no test")
bad = [c for c in cases if c.get("status") in ("notrun", "disabled") or c.find("skipped") is not None]
for c in bad:
    out = (c.findtext("system-out") or "").strip().splitlines()
    why = next((l for l in out if "skip" in l.lower()), out[-1] if out else "")
    print(f"no_skips: {c.get('name')}: {c.get('status')}: {why[:300]}")
if bad:
    sys.exit(f"no_skips: {len(bad)} of {len(cases)} tests did not run (skipped or disabled)")
print(f"no_skips: all {len(cases)} tests ran")
PY
