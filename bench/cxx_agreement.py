#!/usr/bin/env python3
"""Names and layouts of real C++ projects against gdb's, type by type.

Builds leveldb, googletest and fmt from sources you fetched (bench/cxx_projects.sh: g++ 12 and
clang++ 14, DWARF 4, DWARF 5, type units, split DWARF) and, for every struct, class and union
`qaudit layout --format json` reads from each binary:

- its name against the names gdb 13 lists (`info types`): identical; or differing only where gdb
  keeps g++'s integer literal without its type (g++ writes "array<int, 3>", gdb prints that, the
  demangler and clang "array<int, 3ul>", which qaudit prints for both); or differing where gdb
  leaves a g++ name as g++ wrote it because it cannot parse it ("std::function<char*(long
  unsigned int)>", qaudit's "std::function<char* (unsigned long)>"), or names a lambda in a
  template argument as its producer does ("<lambda(int)>", "(lambda at f.cc:3:4)"), both matched
  to gdb's name by evening out those spellings; or a class local to a
  function, which gdb does not list but finds by its qualified name (`ptype 'f(int)::L'`), or
  that the binary's demangled symbols name (`nm -C`: "f(int)::L::get()", or the function "f(int)")
  where gdb finds no such function (inlined), or of a function inlined everywhere, which neither
  gdb nor the symbols can check; or a lambda's closure, which gdb does not name (counted again as in the
  symbols or not: g++ 12 numbers a scope's lambdas in one sequence, the ABI, clang and qaudit per
  parameter list); or different (each listed; g++'s own name of the
  x86-64 va_list record, "typedef __va_list_tag __va_list_tag", which gdb keeps, among them);
- its layout against gdb's (what `ptype /o` prints, read through gdb's Python API, which goes on
  where a ptype would stop at a name it cannot parse: gdb.lookup_type, and for a local class the
  function's block): the size and the name and offset of every member of its own (bases and the
  vtable pointer aside, which ptype /o does not list either), for every type gdb finds by name.

Then, per project and compiler, whether the four debug formats give the same names and layouts.

usage: cxx_agreement.py SRC OUT [QAUDIT]   (SRC holds leveldb/, googletest/, fmt/; OUT keeps the
       builds; QAUDIT defaults to build/bin/qaudit)"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = 4


def run(command, timeout=3600):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def gdb_names(binary):
    """The struct, class, union and enum names gdb lists (typedefs left out)."""
    _, out, _ = run(["gdb", "-batch", "-nx", "-ex", "info types", binary])
    names = set()
    for line in out.splitlines():
        m = re.match(r"^(?:\d+:)?\t(.*);$", line)
        if m and not m.group(1).startswith("typedef "):
            names.add(m.group(1))
    return names


def symbol_scopes(binary):
    """Every scope the binary's demangled symbols name ("f(int)::L" of "f(int)::L::get()"), and
    each function they name ("f(int)"), return types left out."""
    _, out, _ = run(["nm", "-C", "--defined-only", binary])
    scopes = set()
    for line in out.splitlines():
        symbol = line.split(" ", 2)[-1]
        depth, start = 0, 0
        for i, c in enumerate(symbol):
            depth += 1 if c in "<({" else -1 if c in ">)}" else 0
            if depth == 0 and c == " " and "::" not in symbol[start:i] and "(" not in symbol[start:i]:
                start = i + 1  # past a return type
            if depth == 0 and symbol.startswith("::", i):
                scopes.add(symbol[start:i])
        scopes.add(symbol[start:])
    return scopes


def function_of(name):
    """The function a local class is in ("f(int)" of "f(int)::L"), or None."""
    depth, cut = 0, -1
    for i, c in enumerate(name):
        depth += 1 if c in "<({" else -1 if c in ">)}" else 0
        if depth == 0 and name.startswith("::", i):
            cut = i
    head = name[:cut] if cut > 0 else ""
    return head if ")" in head.replace("(anonymous namespace)", "") else None


def untyped_literals(name):
    """name with every integer literal's suffix dropped: gdb's spelling of g++'s names."""
    return re.sub(r"(?<![\w.])(-?\d+)(?:ull|ul|ll|u|l)(?![\w.])", r"\1", name)


GCC_WORDS = [("long long unsigned int", "unsigned long long"), ("long long int", "long long"),
             ("long unsigned int", "unsigned long"), ("short unsigned int", "unsigned short"),
             ("long int", "long"), ("short int", "short"), ("__int128 unsigned", "unsigned __int128")]


def rough(name):
    """A name with what gdb leaves of g++'s spelling where it does not canonicalize (a function
    type's arguments: "std::function<char*(long unsigned int)>") evened out: g++'s words for the
    fundamental types, literals' suffixes, blanks, and a lambda's closure as "LAMBDA" with the
    parameters of its function left out (gdb keeps the producer's "<lambda(int)>" or "(lambda at
    f.cc:3:4)" and g++'s spelling of those parameters, typedefs included)."""
    name = re.sub(r"\{lambda\(.*?\)#\d+\}|<lambda\(.*?\)>|\(lambda at [^)]*\)", "LAMBDA", name)
    name = re.sub(r"\((?:[^()]|\([^()]*\))*\)(?: const)?::LAMBDA", "()::LAMBDA", name)
    for gcc, canonical in GCC_WORDS:
        name = name.replace(gcc, canonical)
    return re.sub(r"\s+", "", untyped_literals(name))


GDB_SCRIPT = r"""
import gdb, json

def local_type(name):
    # "f(int)::L": L in the block of the function f(int), as ptype 'f(int)::L' finds it
    depth, cut = 0, -1
    for i, c in enumerate(name):
        depth += c in "<(" and 1 or c in ">)" and -1 or 0
        if depth == 0 and name.startswith(")::", i):
            cut = i
    if cut < 0:
        raise gdb.error("not local")
    symbol = gdb.lookup_symbol(name[:cut + 1])[0] or gdb.lookup_static_symbol(name[:cut + 1])
    if symbol is None or symbol.addr_class != gdb.SYMBOL_LOC_BLOCK:
        raise gdb.error("no function")
    block = gdb.block_for_pc(int(symbol.value().address))
    return gdb.lookup_type(name[cut + 3:], block)

found = {}
for name in json.load(open(NAMES)):
    try:
        try:
            t = gdb.lookup_type(name)
        except gdb.error:
            try:  # (a type in a type unit gdb has not expanded yet: ptype expands it)
                gdb.execute("ptype " + ("'%s'" % name if "(" in name else name), to_string=True)
                t = gdb.lookup_type(name)
            except gdb.error:
                t = local_type(name)
        t = t.strip_typedefs()
        fields = [(f.name, f.bitpos if f.bitsize else f.bitpos // 8, f.bitsize != 0)
                  for f in t.fields()
                  if hasattr(f, "bitpos") and f.name and not f.is_base_class and not f.artificial]
        found[name] = [t.sizeof, fields]
    except (gdb.error, RuntimeError):
        pass
json.dump(found, open(OUT, "w"))
"""


def gdb_layouts(binary, names):
    """What gdb's Python API says of each name (gdb.lookup_type, the fields ptype /o prints):
    {name: [size, [(member, offset in bytes or, for a bit-field, bits, is a bit-field)]]}."""
    with tempfile.TemporaryDirectory(prefix="qaudit-agreement-") as scratch:
        base = os.path.join(scratch, "gdb")
        with open(base + ".json", "w") as f:
            json.dump(names, f)
        with open(base + ".py", "w") as f:
            f.write(f"NAMES = {base + '.json'!r}\nOUT = {base + '.out'!r}\n" + GDB_SCRIPT)
        run(["gdb", "-batch", "-nx", "-x", base + ".py", binary])
        try:
            with open(base + ".out") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None  # gdb ended without its answer: not "gdb finds none of the types"


def own_members(t):
    return [m for m in t["members"]
            if not m.get("depth") and not m.get("base") and m["name"]
            and not m["name"].startswith("_vptr")]


def layout_differs(t, layout):
    size, fields = layout
    if size != t["size"]:
        return f"size {t['size']}, gdb {size}"
    ours = sorted((m["name"], m["bit_offset"] if m["bit_offset"] is not None else m["offset"])
                  for m in own_members(t))
    theirs = sorted((name, at) for name, at, _ in fields)
    if ours != theirs:
        return f"members {sorted(set(ours) - set(theirs))[:3]}, gdb {sorted(set(theirs) - set(ours))[:3]}"
    return None


def check(qaudit, binary):
    rc, out, err = run([qaudit, "layout", "--format", "json", binary])
    if rc != 0:
        return {"error": err.strip()}
    types = json.loads(out)["types"]
    listed = gdb_names(binary)
    roughly = {}
    for gdb_name in listed:
        roughly.setdefault(rough(gdb_name), []).append(gdb_name)
    result = collections.Counter()
    examples = collections.defaultdict(list)
    lookups = {}
    for t in types:
        name = t["name"]
        result["types"] += 1
        if name in listed:
            result["identical"] += 1
            lookups[name] = name
        elif untyped_literals(name) in listed:
            result["gdb keeps g++'s untyped literal"] += 1
            lookups[name] = untyped_literals(name)
        elif name.endswith("}") and "{lambda(" in name:
            result["lambda (gdb names none)"] += 1
        elif len(roughly.get(rough(name), [])) == 1:
            kind = ("names a lambda, which gdb spells as the producer does" if "{lambda(" in name
                    else "gdb keeps a g++ spelling it does not canonicalize")
            result[kind] += 1
            examples[kind].append(f"{name} (gdb: {roughly[rough(name)][0]})")
            lookups[name] = roughly[rough(name)][0]
        else:
            lookups[name] = name  # a local class, which info types leaves out, or another name
    blocks = gdb_layouts(binary, sorted(set(lookups.values())))
    if blocks is None:
        return {"error": "gdb's Python script wrote no answer"}
    scopes = symbol_scopes(binary)
    for t in types:
        name = t["name"]
        if name.endswith("}") and "{lambda(" in name:
            kind = "lambda, as in the symbols" if name in scopes else "lambda, not in the symbols"
            result[kind] += 1
            examples[kind].append(name)
        if name in listed or lookups.get(name) != name:
            continue
        if name in blocks:
            result["local class (gdb lists none, finds it)"] += 1
        elif name in scopes or function_of(name) in scopes:
            result["local class, as in the symbols (gdb finds none)"] += 1
        elif name == "__va_list_tag":
            result["g++'s typedef __va_list_tag __va_list_tag, which gdb keeps"] += 1
        elif function_of(name) is not None:
            kind = "local class of a function inlined everywhere (nothing to check it with)"
            result[kind] += 1
            examples[kind].append(name)
        else:
            result["other name"] += 1
            examples["other name"].append(name)
        if name not in blocks:
            del lookups[name]
    for t in types:
        gdb_name = lookups.get(t["name"])
        if gdb_name is None:
            continue
        if gdb_name not in blocks:
            result["not found by gdb"] += 1
            examples["not found by gdb"].append(gdb_name)
            continue
        result["layouts compared"] += 1
        why = layout_differs(t, blocks[gdb_name])
        if why is None:
            result["layouts agree"] += 1
        else:
            examples["layout differs"].append(f"{t['name']}: {why}")
    signature = sorted((t["name"], t["size"], tuple((m["name"], m["offset"], m["bit_offset"])
                                                     for m in t["members"])) for t in types)
    return {"counts": result, "examples": examples, "signature": signature}


def main():
    src, out = sys.argv[1], sys.argv[2]
    qaudit = sys.argv[3] if len(sys.argv) > 3 else os.path.join(TOP, "build", "bin", "qaudit")
    rc, listing, err = run([os.path.join(TOP, "bench", "cxx_projects.sh"), src, out], 36000)
    if rc != 0:
        sys.exit(f"cxx_projects.sh failed: {err.strip()}")
    binaries = listing.split()
    columns = ["types", "identical", "gdb keeps g++'s untyped literal",
               "g++'s typedef __va_list_tag __va_list_tag, which gdb keeps",
               "gdb keeps a g++ spelling it does not canonicalize",
               "names a lambda, which gdb spells as the producer does",
               "local class (gdb lists none, finds it)",
               "local class, as in the symbols (gdb finds none)",
               "local class of a function inlined everywhere (nothing to check it with)",
               "lambda (gdb names none)",
               "lambda, as in the symbols", "other name", "layouts compared", "layouts agree",
               "not found by gdb"]
    print("| binary | " + " | ".join(columns) + " |")
    print("| --- " * (len(columns) + 1) + "|")
    totals = collections.Counter()
    by_build = collections.defaultdict(dict)
    notes = []
    out = os.path.abspath(out)
    for binary in binaries:
        build = os.path.relpath(binary, out).split(os.sep)[0]  # e.g. leveldb-g-dwarf5
        label = f"{build}/{os.path.basename(binary)}"
        r = check(qaudit, binary)
        if "error" in r:
            print(f"| {label} | exit 2: {r['error'][:120]} |" + " |" * (len(columns) - 1))
            continue
        totals.update(r["counts"])
        print(f"| {label} | " + " | ".join(str(r["counts"][c]) for c in columns) + " |")
        for kind, names in r["examples"].items():
            notes.append(f"- {label}, {kind} ({len(names)}): " +
                         "; ".join(f"`{n}`" for n in names[:EXAMPLES]))
        project, compiler, flavour = build.rsplit("-", 2)
        by_build[(project, compiler, os.path.basename(binary))][flavour] = r["signature"]
    print("| all | " + " | ".join(str(totals[c]) for c in columns) + " |")
    print()
    for (project, compiler, name), flavours in sorted(by_build.items()):
        first = next(iter(flavours.values()))
        same = [f for f, s in flavours.items() if s == first]
        print(f"- {project} {compiler} {name}: {len(same)} of {len(flavours)} debug formats give "
              f"identical names and layouts ({', '.join(sorted(flavours))})")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
