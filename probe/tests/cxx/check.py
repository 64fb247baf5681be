#!/usr/bin/python3
"""test_layout_cxx: qaudit's C++ layouts against the compiler and against gdb.

Each corpus is built with g++ and clang++ in several dialects and DWARF flavours (4 and 5, type
units, split DWARF). Each build prints its own sizeof, alignof, offsetof and base offsets
(layout_facts.h); every one must match `qaudit layout --format json` of the whole binary (which
must read: exit 0), and every type size, member offset and member size gdb's `ptype /o` shows must
match too. Each build has a least number of facts and of gdb comparisons, so that none passes
by checking nothing.

  classes   classes.cpp, other_unit.cpp, sharing.cpp: inheritance of every kind, storage sharing,
            names; C++20 in eleven DWARF flavours. Then libstdc++'s own debug build
            (libstdc++6-12-dbg): its iostreams' virtual bases where a program built against the
            same headers finds them, and no false ODR conflicts.
  programs  stdlib.cpp (the standard library as programs use it) and libs.cpp (Debian's fmt,
            spdlog, nlohmann-json and boost headers), each compiler's default dialect and C++11,
            C++14, C++20 across the DWARF flavours (libs.cpp in the defaults and C++20); and
            declared/, a library whose classes its user only declares, read with the library's
            DWARF, its .gnu_debuglink file, or none.

usage: check.py QAUDIT CORPUS_DIR [classes|programs]; exit 0 pass, 1 fail, 77 skipped (a
package the corpus needs is missing: scripts/deps.sh installs them)."""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

QAUDIT, CORPUS = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
WHICH = sys.argv[3] if len(sys.argv) > 3 else "classes"
SKIP = 77  # ctest's SKIP_RETURN_CODE for every test (tests/CMakeLists.txt)
CLASS_FLAVOURS = [
    (compiler, ["-std=c++20", *flags])
    for compiler in ("g++", "clang++")
    for flags in (
        ["-gdwarf-4"],
        ["-gdwarf-5"],
        ["-gdwarf-4", "-fdebug-types-section"],
        ["-gdwarf-5", "-fdebug-types-section"],
        ["-gdwarf-5", "-gsplit-dwarf"],
    )
] + [("g++", ["-std=c++20", "-gdwarf-4", "-gsplit-dwarf"])]
# Each compiler's default dialect (g++ 12: gnu++17, clang++ 14: gnu++14), C++11, C++14 and
# C++20, each dialect in another DWARF flavour for each compiler.
PROGRAM_FLAVOURS = [
    ("g++", ["-gdwarf-5"]),
    ("g++", ["-std=c++11", "-gdwarf-4", "-fdebug-types-section"]),
    ("g++", ["-std=c++14", "-gdwarf-5", "-gsplit-dwarf"]),
    ("g++", ["-std=c++20", "-gdwarf-4"]),
    ("clang++", ["-gdwarf-4", "-fdebug-types-section"]),
    ("clang++", ["-std=c++11", "-gdwarf-5"]),
    ("clang++", ["-std=c++14", "-gdwarf-4"]),
    ("clang++", ["-std=c++20", "-gdwarf-5", "-gsplit-dwarf"]),
]
# The libraries' headers take seconds to compile: libs.cpp in the defaults and C++20.
LIB_FLAVOURS = [PROGRAM_FLAVOURS[i] for i in (0, 3, 4, 7)]
# The least facts a build prints and types gdb shows, per corpus (fewer: the test checked little).
LEAST = {"classes": (180, 50), "stdlib": (40, 4), "libs": (18, 2), "declared": (20, 3)}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def norm(name):
    """Names compare without blanks: "Ring<int, 3>" and "Ring<int,3>", "> >" and ">>"."""
    return re.sub(r"\s+", "", name)


def run(command, cwd=None):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def build(scratch, corpus, compiler, flags, sources, extra=()):
    name = corpus + "-" + compiler.replace("+", "x") + "".join(flags).replace("-", "_")
    where = os.path.join(scratch, name)
    os.mkdir(where)
    binary = os.path.join(where, corpus)
    rc, _, err = run([compiler, "-Wno-invalid-offsetof", "-I", CORPUS, *flags,
                      *[os.path.join(CORPUS, f) for f in sources], "-o", binary, *extra],
                     cwd=where)
    return f"{corpus} {compiler} {' '.join(flags)}", binary if rc == 0 else None, err


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


def type_size(m):
    """sizeof the member's type: type_size where the member takes less (docs/layout-format.md)."""
    return m.get("type_size", m["size"])


def member_fact(where, name, found, kind, fields):
    member, value = norm(fields[2]), fields[3]
    rows = [m for t in found for m in own_members(t) if norm(m["name"]) == member]
    if kind == "member":
        ok = any(m["offset"] == int(value) and not m.get("base") for m in rows)
    elif kind == "base":
        ok = any(m["offset"] == int(value) and m.get("base") and not m.get("virtual") for m in rows)
    elif kind == "virtual":
        ok = rows and len(rows) == len(found) and all(
            m["offset"] == int(value) and m.get("base") and m.get("virtual") for m in rows)
    elif kind == "bit":
        ok = any(m["bit_offset"] == int(value) for m in rows)
    elif kind == "takes":
        ok = any(m["size"] == int(value) for m in rows)
    elif kind == "sizeof":
        ok = any(type_size(m) == int(value) and not m.get("size_derived") for m in rows)
    else:  # from: a library's file, derived, or binary (the binary defines it)
        ok = any(m.get("size_derived") if value == "derived" else
                 not m.get("size_derived") and "defined_in" not in m if value == "binary" else
                 m.get("defined_in", "").endswith("/" + value) for m in rows)
    if not ok:
        fail(where, f"{name}: {kind} {fields[2]} {value}, layout has "
                    f"{[{k: v for k, v in m.items() if k not in ('name', 'type')} for m in rows]}")


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
        # an unknown alignment is the least it can be, marked (align_unknown facts check where)
        if not any(t["size"] == want[0] and (t["align"] == want[1] or (
                t.get("align_unknown") and t["align"] < want[1])) for t in found):
            fail(where, f"{name}: size, align {[(t['size'], t['align']) for t in found]} != {want}")
    elif kind in ("member", "base", "virtual", "bit", "takes", "sizeof", "from"):
        member_fact(where, name, found, kind, fields)
    elif kind in ("padding", "holes"):
        key = "padding" if kind == "padding" else "hole_bytes"
        if not any(t[key] == int(fields[2]) for t in found):
            fail(where, f"{name}: {kind} {[t[key] for t in found]} != {fields[2]}")
    elif kind in ("align_unknown", "padding_unknown"):
        if not any(bool(t.get(kind)) == (fields[2] == "1") for t in found):
            fail(where, f"{name}: {kind} {[t.get(kind, False) for t in found]} != {fields[2]}")
    elif kind == "absent":
        if any(norm(m["name"]) == norm(fields[2]) for t in found for m in t["members"]):
            fail(where, f"{name}: {fields[2]} is listed (a static member, or a virtual base "
                        f"nothing can place)")
    else:
        fail(where, f"unknown fact {fields}")


def check_facts(where, binary, doc, args=()):
    rc, out, _ = run([binary, *args])
    if rc != 0:
        fail(where, f"{binary} exit {rc}")
        return []
    types = by_name(doc)
    facts = [line.split("|") for line in out.splitlines()]
    for fields in facts:
        check_fact(where, types, fields)
    vptrs = [(t["name"], m["type"], m.get("artificial")) for t in doc["types"]
             for m in own_members(t) if m["name"].startswith("_vptr")]
    if not vptrs or any(spelled != "int (**)(void)" or not artificial
                        for _, spelled, artificial in vptrs):  # (each corpus has dynamic classes)
        fail(where, f"vptrs not spelled as gdb spells them, or not artificial: {vptrs[:3]}")
    for t in doc["types"]:
        if t["odr_conflict"]:
            fail(where, f"{t['name']}: an ODR conflict in a program that has none")
    return [f for f in facts if f[0] != "note"]


def gdb_blocks(binary, names):
    """ptype /o of each name: {name: (total size, [(offset, size, declaration text)])}, top
    level only (a bit-field's size is None)."""
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
        row = re.match(r"/\*\s+(\d+)(?::\s*(\d+))?\s*\|\s*(\d+) \*/ {4}(\S.*)$", line)
        close = re.match(r" {31}(\}.*;)$", line)
        if size and total is None and opened is None:
            total = int(size.group(1))
        elif row and opened is None:
            # a bit-field's place is "byte: bit", compared in bits
            bits = row.group(2) is not None
            at = int(row.group(1)) * 8 + int(row.group(2)) if bits else int(row.group(1))
            entry = (at, None if bits else int(row.group(3)), row.group(4))
            if row.group(4).endswith("{"):
                opened = entry
            else:
                members.append(entry)
        elif close and opened is not None:
            members.append((opened[0], opened[1], close.group(1)))
            opened = None
    return blocks


def check_gdb(where, binary, doc, facts):
    """Returns how many types and member rows were compared."""
    types = by_name(doc)
    names = sorted({f[1] for f in facts if f[0] == "size"
                    and len(types.get(norm(f[1]), [])) == 1 and len(f[1]) < 200})
    blocks = gdb_blocks(binary, names)
    compared = 0
    unknown = [name for name in names if name not in blocks]
    if unknown:  # (gdb misses some of clang's type units: LEAST keeps the check from thinning)
        print(f"note: {where}: gdb has no ptype /o for {', '.join(unknown)}")
    for name in names:
        if name not in blocks:
            continue
        total, rows = blocks[name]
        t = types[norm(name)][0]
        if total != t["size"]:
            fail(where, f"{name}: size {t['size']}, gdb says {total}")
        for m in own_members(t):
            if m.get("base") or m.get("artificial") or not m["name"]:
                continue  # gdb prints no bases, no vptr
            at = m["bit_offset"] if m["bit_offset"] is not None else m["offset"]
            mine = [r for r in rows if r[0] == at and m["name"] in re.findall(r"\w+", r[2])]
            if not mine:
                fail(where, f"{name}: member {m['name']} at {m['offset']}, gdb: {rows}")
                continue
            compared += 1
            # gdb sizes a member by its type; where the binary only declares it, gdb (reading
            # the binary alone) has no size for it
            if (m["bit_offset"] is None and not m.get("size_derived") and "defined_in" not in m
                    and mine[0][1] != type_size(m)):
                fail(where, f"{name}: member {m['name']} sizeof {type_size(m)}, gdb {mine[0][1]}")
    return len(blocks), compared


def check_build(corpus, flavour, binary, err, args=(), extra_types=()):
    if binary is None:
        fail(flavour, f"does not build: {err.strip()[:500]}")
        return
    doc = layout(flavour, binary)
    if doc is None:
        return
    facts = check_facts(flavour, binary, doc, args)
    shown, rows = check_gdb(flavour, binary, doc, facts)
    for name in extra_types:
        one = layout(flavour, binary, "--type", name)
        if one is not None and [t["name"] for t in one["types"]] != [name]:
            fail(flavour, f"--type {name} gives {[t['name'] for t in one['types']]}")
    least_facts, least_types = LEAST[corpus]
    if len(facts) < least_facts or shown < least_types:
        fail(flavour, f"{len(facts)} facts and {shown} types against gdb: fewer than "
                      f"{least_facts} and {least_types}, the least this corpus prints")
    print(f"{flavour}: {len(facts)} facts, {shown} types and {rows} members checked against gdb")


def libstdcxx_debug():
    """The debug build of the libstdc++ that g++ links (libstdc++6-12-dbg installs it in debug/
    next to the library, under the same file name)."""
    _, out, _ = run(["g++", "-print-file-name=libstdc++.so"])
    library = os.path.realpath(out.strip())
    return os.path.join(os.path.dirname(library), "debug", os.path.basename(library))


def check_libstdcxx(scratch):
    """The iostreams of libstdc++'s debug build, against a program built with the same headers."""
    where = "libstdc++ debug build"
    binary = os.path.join(scratch, "iostreams")
    rc, _, err = run(["g++", "-std=c++17", "-Wno-deprecated", "-I", CORPUS,
                      os.path.join(CORPUS, "iostreams.cpp"), "-o", binary])
    if rc != 0:
        fail(where, f"iostreams.cpp does not build: {err.strip()[:500]}")
        return
    doc = layout(where, libstdcxx_debug())
    if doc is None:
        return
    rc, out, _ = run([binary])
    types = by_name(doc)
    facts = [line.split("|") for line in out.splitlines()]
    for fields in facts:
        check_fact(where, types, fields)
    local = [t["name"] for t in doc["types"] if "(anonymous namespace)" in t["name"]]
    false = [n for n in local if any(t["odr_conflict"] for t in types[norm(n)])]
    if not local or false or len(facts) < 20:
        fail(where, f"{len(facts)} facts, {len(local)} types in anonymous namespaces, ODR "
                    f"conflicts on {false[:4]}")
    print(f"{where}: {len(facts)} facts, {len(local)} types in anonymous namespaces")


def check_gate(scratch, flavour, binary):
    """The CI gate on g++'s default dialect, which once failed on std::set's node handle."""
    baseline = os.path.join(scratch, "baseline.json")
    rc, _, err = run([QAUDIT, "gate", "--write-baseline", baseline, "--type", "Registry",
                      "--type", "Modern", binary])
    if rc == 0:
        rc, _, err = run([QAUDIT, "gate", "--baseline", baseline, binary])
    if rc != 0:
        fail(flavour, f"qaudit gate exit {rc}: {err.strip()[:300]}")


def build_declared(scratch, compiler, how):
    """libshape.so with its DWARF (own), with it moved to a .gnu_debuglink file, or stripped;
    and its user, which finds it by its DT_RUNPATH."""
    where = os.path.join(scratch, f"declared-{compiler.replace('+', 'x')}-{how}")
    os.mkdir(where)
    lib = os.path.join(where, "libshape.so")
    steps = [[compiler, "-g", "-fPIC", "-shared", os.path.join(CORPUS, "declared", "shape.cpp"),
              "-o", lib]]
    if how == "debuglink":
        steps += [["objcopy", "--only-keep-debug", lib, lib + ".debug"], ["strip", "-g", lib],
                  ["objcopy", f"--add-gnu-debuglink={lib}.debug", lib]]
    elif how == "stripped":
        steps += [["strip", "-g", lib]]
    steps += [[compiler, "-g", "-Wno-invalid-offsetof", "-I", CORPUS, "-I",
               os.path.join(CORPUS, "declared"), os.path.join(CORPUS, "declared", "user.cpp"),
               "-L", where, "-lshape", "-Wl,-rpath,$ORIGIN", "-o", os.path.join(where, "user")]]
    for step in steps:
        rc, _, err = run(step, cwd=where)
        if rc != 0:
            return f"declared {compiler} {how}", None, err
    return f"declared {compiler} {how}", os.path.join(where, "user"), ""


def missing_packages(which):
    """What the corpus needs that is not installed (scripts/deps.sh installs it)."""
    needs = {"gdb": shutil.which("gdb"), "clang++": shutil.which("clang++"),
             "libstdc++6-12-dbg": os.path.exists(libstdcxx_debug())}
    if which == "programs":
        needs.update({pkg: os.path.exists(header) for pkg, header in (
            ("libfmt-dev", "/usr/include/fmt/format.h"),
            ("libspdlog-dev", "/usr/include/spdlog/logger.h"),
            ("nlohmann-json3-dev", "/usr/include/nlohmann/json.hpp"),
            ("libboost-dev", "/usr/include/boost/optional.hpp"))})
    return [pkg for pkg, present in needs.items() if not present]


def check_classes(scratch, pool):
    sources = ("classes.cpp", "other_unit.cpp", "sharing.cpp")
    builds = pool.map(lambda f: build(scratch, "classes", *f, sources), CLASS_FLAVOURS)
    for flavour, binary, err in builds:
        check_build("classes", flavour, binary, err,
                    extra_types=("anon_t", "lc::A", "f()::Local", "lc::Outer::Inner"))
    check_libstdcxx(scratch)


def check_programs(scratch, pool):
    _, flags, _ = run(["pkg-config", "--cflags", "--libs", "spdlog", "fmt"])
    jobs = [("stdlib", c, f, ("stdlib.cpp",), ()) for c, f in PROGRAM_FLAVOURS]
    jobs += [("libs", c, f, ("libs.cpp",), flags.split()) for c, f in LIB_FLAVOURS]
    builds = pool.map(lambda j: (j[0], build(scratch, *j)), jobs)
    declared = [(compiler, how) for compiler in ("g++", "clang++")
                for how in ("own", "debuglink", "stripped")]
    for corpus, (flavour, binary, err) in builds:
        check_build(corpus, flavour, binary, err)
        if binary is not None and flavour == "stdlib g++ -gdwarf-5":
            check_gate(scratch, flavour, binary)
    for (compiler, how), (flavour, binary, err) in zip(
            declared, pool.map(lambda d: build_declared(scratch, *d), declared)):
        check_build("declared", flavour, binary, err, args=(how,))


def main():
    missing = missing_packages(WHICH)
    if missing:
        print(f"skipped: {', '.join(missing)} not installed (scripts/deps.sh installs them)")
        return SKIP
    scratch = tempfile.mkdtemp(prefix="qaudit-cxx-")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            (check_programs if WHICH == "programs" else check_classes)(scratch, pool)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
