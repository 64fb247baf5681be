#!/usr/bin/python3
"""test_layout_cxx: qaudit's C++ layouts against the compiler and against gdb.

The corpus (classes.cpp, other_unit.cpp) is built with g++ and clang++, DWARF 4 and 5, with and
without -fdebug-types-section, and with -gsplit-dwarf. Each build prints its own sizeof, alignof,
offsetof and base offsets (report.h); every one must match `qaudit layout --format json`, and
every type size and member offset gdb's `ptype /o` shows must match too. Then libstdc++'s own
debug build (libstdc++6-12-dbg), a library this repository did not write: its iostreams' virtual
bases where a program built against the same headers finds them, and no false ODR conflicts.
Each comparison has a floor (MINIMUM): a corpus or a gdb that yields fewer facts fails. Without
libstdc++'s debug build (the one of the libstdc++ g++ links), the test exits 77: skipped.

usage: check.py QAUDIT CORPUS_DIR"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

QAUDIT, CORPUS = sys.argv[1], sys.argv[2]
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for every test (tests/CMakeLists.txt)
# The fewest facts each check must compare (today's corpus: 132 lines of which 130 facts, 41
# types in gdb; libstdc++ 12: 25 facts, 109 types in anonymous namespaces).
MINIMUM = {"facts": 120, "gdb types": 40, "libstdc++ facts": 20, "anonymous types": 100}
FLAVOURS = [
    (compiler, flags)
    for compiler in ("g++", "clang++")
    for flags in (
        ["-gdwarf-4"],
        ["-gdwarf-5"],
        ["-gdwarf-4", "-fdebug-types-section"],
        ["-gdwarf-5", "-fdebug-types-section"],
        ["-gdwarf-5", "-gsplit-dwarf"],
    )
] + [("g++", ["-gdwarf-4", "-gsplit-dwarf"])]

failures = []
skips = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def norm(name):
    """Names compare without blanks: "Ring<int, 3>" and "Ring<int,3>", "> >" and ">>"."""
    return re.sub(r"\s+", "", name)


def run(command, cwd=None):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def build(scratch, compiler, flags):
    name = compiler.replace("+", "x") + "".join(flags).replace("-", "_")
    where = os.path.join(scratch, name)
    os.mkdir(where)
    binary = os.path.join(where, "corpus")
    sources = [os.path.join(CORPUS, f) for f in ("classes.cpp", "other_unit.cpp")]
    rc, _, err = run([compiler, "-std=c++20", "-Wno-invalid-offsetof", "-I", CORPUS, *flags,
                      *sources, "-o", binary], cwd=where)
    return f"{compiler} {' '.join(flags)}", binary if rc == 0 else None, err


def layout(where, binary, *extra):
    rc, out, err = run([QAUDIT, "layout", "--format", "json", *extra, binary])
    if rc != 0:
        fail(where, f"qaudit layout {' '.join(extra)} exit {rc}: {err.strip()}")
        return None
    return json.loads(out)


def by_name(doc):
    types = {}
    for t in doc["types"]:
        types.setdefault(norm(t["name"]), []).append(t)
    return types


def own_members(t):
    return [m for m in t["members"] if "depth" not in m]


def check_fact(where, types, fields):
    kind, name = fields[0], fields[1]
    if kind == "note":
        return
    found = types.get(norm(name), [])
    if kind == "types":
        if len(found) != int(fields[2]) or any(t["odr_conflict"] for t in found):
            fail(where, f"{name}: {len(found)} types (want {fields[2]}), "
                        f"ODR conflicts {[t['odr_conflict'] for t in found]}")
        return
    if not found:
        fail(where, f"type {name} is not in the layout")
        return
    if kind == "size":
        want = (int(fields[2]), int(fields[3]))
        if not any((t["size"], t["align"]) == want for t in found):
            fail(where, f"{name}: size, align {[(t['size'], t['align']) for t in found]} != {want}")
    elif kind in ("member", "base", "virtual", "bit"):
        member, value = norm(fields[2]), int(fields[3])
        rows = [m for t in found for m in own_members(t) if norm(m["name"]) == member]
        if kind == "member":
            ok = any(m["offset"] == value and not m.get("base") for m in rows)
        elif kind == "base":
            ok = any(m["offset"] == value and m.get("base") and not m.get("virtual") for m in rows)
        elif kind == "virtual":
            ok = (len(rows) == len(found) and
                  all(m["offset"] == value and m.get("base") and m.get("virtual") for m in rows))
        else:
            ok = any(m["bit_offset"] == value for m in rows)
        if not ok:
            fail(where, f"{name}: {kind} {fields[2]} at {value}, layout has "
                        f"{[(m['offset'], m['bit_offset'], m.get('base'), m.get('virtual')) for m in rows]}")
    elif kind == "padding":
        if not any(t["padding"] == int(fields[2]) for t in found):
            fail(where, f"{name}: padding {[t['padding'] for t in found]} != {fields[2]}")
    elif kind == "holes":
        if not any(t["hole_bytes"] == int(fields[2]) for t in found):
            fail(where, f"{name}: hole bytes {[t['hole_bytes'] for t in found]} != {fields[2]}")
    elif kind == "absent":
        if any(norm(m["name"]) == norm(fields[2]) for t in found for m in t["members"]):
            fail(where, f"{name}: static member {fields[2]} takes room")


def checked(facts):
    return sum(1 for f in facts if f[0] != "note")


def at_least(where, what, count):
    if count < MINIMUM[what]:
        fail(where, f"{count} {what} compared, fewer than the {MINIMUM[what]} expected")


def libstdcxx_debug():
    """The debug build of the libstdc++ that g++ links (libstdc++6-12-dbg installs it in debug/
    next to the library, under the same file name)."""
    _, out, _ = run(["g++", "-print-file-name=libstdc++.so"])
    library = os.path.realpath(out.strip())
    return os.path.join(os.path.dirname(library), "debug", os.path.basename(library))


def check_facts(where, binary, doc):
    rc, out, _ = run([binary])
    if rc != 0:
        fail(where, f"{binary} exit {rc}")
        return []
    types = by_name(doc)
    facts = [line.split("|") for line in out.splitlines()]
    for fields in facts:
        check_fact(where, types, fields)
    vptrs = [(t["name"], m["type"]) for t in doc["types"] for m in own_members(t)
             if m["name"].startswith("_vptr")]
    if not vptrs or any(spelled != "int (**)(void)" for _, spelled in vptrs):
        fail(where, f"vptrs not spelled as gdb spells them: {vptrs[:3]}")
    for t in doc["types"]:
        if t["odr_conflict"]:
            fail(where, f"{t['name']}: an ODR conflict in a program that has none")
    return facts


def gdb_blocks(binary, names):
    """ptype /o of each name: {name: (total size, [(offset, declaration text)])}, top level only."""
    command = ["gdb", "-batch", "-nx"]
    for name in names:
        quoted = f"'{name}'" if "(" in name else name  # gdb reads 'VL' as a character
        command += ["-ex", f"echo @@{name}\\n", "-ex", f"ptype /o {quoted}"]
    _, out, _ = run(command + [binary])
    blocks, name, total, members, opened = {}, None, None, [], None
    for line in out.splitlines() + ["@@"]:
        if line.startswith("@@"):
            if name is not None and total is not None:
                blocks[name] = (total, members)
            name, total, members, opened = line[2:], None, [], None
            continue
        size = re.search(r"total size \(bytes\):\s*(\d+)", line)
        row = re.match(r"/\*\s+(\d+)(?::\s*(\d+))?\s*\|\s*\d+ \*/ {4}(\S.*)$", line)
        close = re.match(r" {31}(\}.*;)$", line)
        if size and total is None and opened is None:
            total = int(size.group(1))
        elif row and opened is None:
            # a bit-field's place is "byte: bit", compared in bits
            at = int(row.group(1)) * 8 + int(row.group(2)) if row.group(2) else int(row.group(1))
            if row.group(3).endswith("{"):
                opened = at
            else:
                members.append((at, row.group(3)))
        elif close and opened is not None:
            members.append((opened, close.group(1)))
            opened = None
    return blocks


def check_gdb(where, binary, doc, facts):
    types = by_name(doc)
    names = sorted({f[1] for f in facts if f[0] == "size"
                    and len(types.get(norm(f[1]), [])) == 1 and len(f[1]) < 200})
    blocks = gdb_blocks(binary, names)
    for name in names:
        if name not in blocks:
            fail(where, f"gdb has no ptype /o for {name}")
            continue
        total, rows = blocks[name]
        t = types[norm(name)][0]
        if total != t["size"]:
            fail(where, f"{name}: size {t['size']}, gdb says {total}")
        for m in own_members(t):
            if m.get("base") or m["name"].startswith("_vptr") or not m["name"]:
                continue  # gdb prints no bases, no vptr
            at = m["bit_offset"] if m["bit_offset"] is not None else m["offset"]
            if not any(off == at and m["name"] in re.findall(r"\w+", text) for off, text in rows):
                fail(where, f"{name}: member {m['name']} at {m['offset']}, gdb: {rows}")
    return len(blocks)


def check_flavour(flavour, binary, err):
    if binary is None:
        fail(flavour, f"does not build: {err.strip()[:500]}")
        return
    doc = layout(flavour, binary)
    if doc is None:
        return
    facts = check_facts(flavour, binary, doc)
    shown = check_gdb(flavour, binary, doc, facts)
    at_least(flavour, "facts", checked(facts))
    at_least(flavour, "gdb types", shown)
    for name in ("anon_t", "lc::A", "f()::Local", "lc::Outer::Inner"):
        one = layout(flavour, binary, "--type", name)
        if one is not None and [t["name"] for t in one["types"]] != [name]:
            fail(flavour, f"--type {name} gives {[t['name'] for t in one['types']]}")
    print(f"{flavour}: {checked(facts)} facts, {shown} types checked against gdb")


def check_libstdcxx(scratch):
    """The iostreams of libstdc++'s debug build, against a program built with the same headers."""
    debug = libstdcxx_debug()
    if not os.path.exists(debug):
        skips.append(f"{debug} absent (apt-get install libstdc++6-12-dbg, scripts/deps.sh)")
        return
    where = "libstdc++ debug build"
    binary = os.path.join(scratch, "iostreams")
    rc, _, err = run(["g++", "-std=c++17", "-Wno-deprecated", "-I", CORPUS,
                      os.path.join(CORPUS, "iostreams.cpp"), "-o", binary])
    if rc != 0:
        fail(where, f"iostreams.cpp does not build: {err.strip()[:500]}")
        return
    doc = layout(where, debug)
    if doc is None:
        return
    rc, out, _ = run([binary])
    types = by_name(doc)
    facts = [line.split("|") for line in out.splitlines()]
    for fields in facts:
        check_fact(where, types, fields)
    local = [t["name"] for t in doc["types"] if "(anonymous namespace)" in t["name"]]
    false = [n for n in local if any(t["odr_conflict"] for t in types[norm(n)])]
    if not local or false:
        fail(where, f"{len(local)} types in anonymous namespaces, ODR conflicts on {false[:4]}")
    at_least(where, "libstdc++ facts", checked(facts))
    at_least(where, "anonymous types", len(local))
    print(f"{where}: {checked(facts)} facts, {len(local)} types in anonymous namespaces")


def main():
    scratch = tempfile.mkdtemp(prefix="qaudit-cxx-")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            builds = list(pool.map(lambda f: build(scratch, *f), FLAVOURS))
        for flavour, binary, err in builds:
            check_flavour(flavour, binary, err)
        check_libstdcxx(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in failures:
        print("FAIL", line)
    for line in skips:
        print("SKIPPED", line)
    return 1 if failures else SKIPPED if skips else 0


if __name__ == "__main__":
    sys.exit(main())
