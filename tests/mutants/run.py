#!/usr/bin/python3
"""make mutants: plants each fault of tests/mutants/list.txt in a scratch copy of the tree, rebuilds
it in a build directory of its own, runs the tests that should catch it, and fails unless every
fault is caught. The worktree is never written. Prints a table: mutant, file, caught by.

A fault is an exact search/replace on a string that occurs once in its file; an entry whose
string no longer occurs exactly once is an error before anything is built (so a list that has
gone stale fails loudly instead of passing). Before the first fault, each test selection must pass
on the unchanged tree (a test that fails or skips unchanged catches nothing).

usage: run.py [--ci] [--only ID,...] [--keep | --scratch DIR] [--jobs N] [--list FILE]
       run.py --check   (only checks that every entry still applies: a ctest, test_mutants_list)
  --ci       only the entries marked `ci yes` (the sample .ci/run runs)
  --only     only these entries
  --keep     keep the scratch directory (its path is printed)
  --scratch  use (and keep) DIR: a second run rebuilds only what changed since"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIPPED = 77
FIELDS = {"file", "find", "replace", "tests", "build", "why", "ci"}


class ListError(Exception):
    pass


def unescape(text):
    return text.replace("\\n", "\n").replace("\\t", "\t")


def parse(path):
    """[{id, file, find, replace, tests: [(ctest name, filter or "")], build: [targets], ...}]"""
    entries, current = [], None
    for number, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\w+)\s+(.*)$", line)
        if m is None:
            raise ListError(f"{path}:{number}: not 'KEY VALUE': {line}")
        key, value = m.group(1), m.group(2)
        if key == "mutant":
            current = {"id": value.strip(), "line": number}
            entries.append(current)
            continue
        if current is None or key not in FIELDS:
            raise ListError(f"{path}:{number}: unknown key '{key}' (or no 'mutant' line before)")
        if key in current:
            raise ListError(f"{path}:{number}: '{key}' given twice for {current['id']}")
        current[key] = value
    ids = [e["id"] for e in entries]
    for e in entries:
        missing = {"file", "find", "replace", "tests", "why"} - set(e)
        if missing:
            raise ListError(f"{path}:{e['line']}: {e['id']} lacks {', '.join(sorted(missing))}")
        if ids.count(e["id"]) > 1:
            raise ListError(f"{path}:{e['line']}: the id {e['id']} is used twice")
        e["find"], e["replace"] = unescape(e["find"]), unescape(e["replace"])
        if e["find"] == e["replace"]:
            raise ListError(f"{path}:{e['line']}: {e['id']}: the replacement changes nothing")
        e["tests"] = [tuple((t.split(":", 1) + [""])[:2]) for t in e["tests"].split()]
        e["build"] = e.get("build", " ".join(name for name, _ in e["tests"])).split()
    return entries


def check_applies(entries, source):
    """Every find string occurs exactly once in its file: the list of those that do not."""
    stale = []
    for e in entries:
        path = os.path.join(source, e["file"])
        if not os.path.isfile(path):
            stale.append(f"{e['id']}: {e['file']} does not exist")
            continue
        count = open(path).read().count(e["find"])
        if count != 1:
            stale.append(f"{e['id']}: its search string occurs {count} times in {e['file']}, "
                         f"not once: {e['find']!r}")
    return stale


def copy_tree(source, scratch):
    """The worktree's files (tracked and untracked, not ignored) into scratch/src; a file whose
    copy there is the same is left alone, so that a kept build stays up to date."""
    listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], check=True, capture_output=True).stdout
    target = os.path.join(scratch, "src")
    for name in filter(None, listed.decode().split("\0")):
        src = os.path.join(source, name)
        if not os.path.isfile(src):
            continue  # deleted in the worktree, still in the index
        dst = os.path.join(target, name)
        if os.path.isfile(dst) and same_bytes(src, dst):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(src, dst)  # a new mtime: make must see the file as changed
    return target


def same_bytes(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def sh(command, log, env=None, timeout=None):
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                              timeout=timeout).returncode


def build(build_dir, targets, jobs, log):
    return sh(["cmake", "--build", build_dir, "-j", str(jobs), "--target", *sorted(targets)],
              log) == 0


def run_test(build_dir, name, test_filter, log):
    """ctest's exit for one test: 0 passed, 77 (ours) skipped, else failed."""
    env = dict(os.environ)
    env.pop("QAUDIT_TEST_FILTER", None)
    # A planted fault can send a dump to the preload's fallback directory (an attach that fails
    # halfway, a worker as another user): into the scratch's own, emptied after each test, so
    # that a fault leaves nothing in the system's /tmp (make test's ctest_clean.sh does the same).
    fallback = os.path.join(os.path.dirname(build_dir), "fallback")
    os.makedirs(fallback, exist_ok=True)
    os.chmod(fallback, 0o1777)
    env["QAUDIT_FALLBACK_DIR"] = fallback
    if test_filter:
        env["QAUDIT_TEST_FILTER"] = test_filter
    junit = os.path.join(build_dir, "mutant-junit.xml")
    rc = sh(["ctest", "--test-dir", build_dir, "-R", f"^{re.escape(name)}$", "--output-on-failure",
             "--output-junit", junit], log, env=env)
    for left in os.listdir(fallback):
        path = os.path.join(fallback, left)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    text = open(junit).read() if os.path.exists(junit) else ""
    if 'tests="0"' in text.replace("\n", " ").replace("\t", " ") or "<testcase" not in text:
        return "none"
    if "<skipped" in text:
        return "skipped"
    return "passed" if rc == 0 else "failed"


def label(test):
    return test[0] + (f":{test[1]}" if test[1] else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants", "list.txt"))
    parser.add_argument("--ci", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--scratch", default="")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    try:
        entries = parse(args.list)
    except ListError as e:
        sys.exit(f"mutants: {e}")
    stale = check_applies(entries, ROOT)
    if stale:
        for line in stale:
            print(f"mutants: stale entry {line}", file=sys.stderr)
        sys.exit(f"mutants: {len(stale)} entries of {args.list} no longer apply: update them")
    if len(entries) < 30:
        sys.exit(f"mutants: {len(entries)} entries in {args.list}, fewer than the 30 required")
    if args.check:
        print(f"mutants: all {len(entries)} entries of {args.list} apply")
        return 0
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {e["id"] for e in entries}
        if unknown:
            sys.exit(f"mutants: no entry {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e["id"] in wanted]
    if args.ci:
        entries = [e for e in entries if e.get("ci", "").strip() == "yes"]
    scratch = args.scratch or tempfile.mkdtemp(prefix="qaudit-mutants-")
    os.makedirs(scratch, exist_ok=True)
    # mkdtemp makes it private (0700); the tests run the copy's qaudit as other users (nginx's
    # www-data, PostgreSQL's postgres), as they do from a clone: it must be reachable as one is.
    os.chmod(scratch, 0o755)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("mutants: terminated"))
    try:
        return mutate_all(entries, scratch, args)
    finally:
        if args.keep or args.scratch:
            print(f"mutants: scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def mutate_all(entries, scratch, args):
    started = time.monotonic()
    log = os.path.join(scratch, "log.txt")
    open(log, "w").close()
    source = copy_tree(ROOT, scratch)
    build_dir = os.path.join(scratch, "build")
    print(f"mutants: {len(entries)} faults; scratch copy and build in {scratch} (log: {log})")
    if sh(["cmake", "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], log) != 0:
        return fail_with_log("cmake could not configure the scratch copy", log)
    targets = {t for e in entries for t in e["build"]}
    if not build(build_dir, targets, args.jobs, log):
        return fail_with_log("the unchanged scratch copy does not build", log)
    selections = sorted({t for e in entries for t in e["tests"]})
    for test in selections:
        outcome = run_test(build_dir, *test, log)
        if outcome != "passed":
            return fail_with_log(f"{label(test)} {outcome} on the unchanged tree: it can catch "
                                 f"nothing", log)
    print(f"mutants: {len(selections)} test selections pass on the unchanged tree "
          f"({time.monotonic() - started:.0f} s)")
    rows, dirty = [], set()
    for e in entries:
        rows.append(mutate_one(e, source, build_dir, dirty, args.jobs, log))
        print(f"  {rows[-1][0]:<34} {rows[-1][2]:<44} {rows[-1][3]:>4.0f} s", flush=True)
    if dirty and not build(build_dir, dirty, args.jobs, log):
        return fail_with_log("the restored scratch copy does not build", log)
    print_table(rows, time.monotonic() - started)
    survivors = [r for r in rows if r[2] in ("SURVIVED", "DOES NOT BUILD")]
    if survivors:
        print(f"mutants: {len(survivors)} of {len(rows)} faults not caught: "
              f"{', '.join(r[0] for r in survivors)}")
        return 1
    print(f"mutants: all {len(rows)} faults caught")
    return 0


def mutate_one(e, source, build_dir, dirty, jobs, log):
    """(id, file, caught by, seconds): plants the fault, builds, runs its tests, restores."""
    began = time.monotonic()
    path = os.path.join(source, e["file"])
    original = open(path).read()
    with open(path, "w") as f:
        f.write(original.replace(e["find"], e["replace"], 1))
    with open(log, "a") as out:
        out.write(f"\n===== mutant {e['id']} ({e['file']}): {e['why']}\n")
    try:
        if not build(build_dir, dirty | set(e["build"]), jobs, log):
            return (e["id"], e["file"], "DOES NOT BUILD", time.monotonic() - began)
        dirty.clear()
        for test in e["tests"]:
            if run_test(build_dir, *test, log) == "failed":
                return (e["id"], e["file"], label(test), time.monotonic() - began)
        return (e["id"], e["file"], "SURVIVED", time.monotonic() - began)
    finally:
        with open(path, "w") as f:
            f.write(original)
        dirty.update(e["build"])


def print_table(rows, seconds):
    print(f"\n| mutant | file | caught by | s |\n| --- | --- | --- | --- |")
    for mutant, file, caught, took in rows:
        print(f"| {mutant} | {file} | {caught} | {took:.0f} |")
    print(f"\n{len(rows)} faults in {seconds / 60:.1f} min")


def fail_with_log(message, log):
    print(f"mutants: {message}; the end of {log}:", file=sys.stderr)
    with open(log) as f:
        print("".join(f.readlines()[-40:]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
