#!/usr/bin/python3
"""test_layout_rust: qaudit's layouts of Rust types against rustc's own.

layouts.rs prints each type's size_of and align_of and its fields' offsets, variants' fields
included, as the compiled program places them. `qaudit layout --expand --format json` of the
same binary must say the same: names qualified by their modules (layouts::Msg), an enum's
variants as one unnamed union that covers the enum (not padding), its fields under the variant's
name (Close.code). The whole binary (the standard library's types too) must read with exit 0 and
no ODR conflict: generic instances and variants of the same short name are different types, not
one type defined twice. At least MIN_FACTS comparisons, so that the test cannot pass by checking
nothing.

Built with each rustc there is: Debian's (1.63 on Debian 12, which marks an unsized tail as a
bit-field of 0 bits) and the first on PATH (rustup's, newer) when that is another.

usage: check.py QAUDIT LAYOUTS_RS; exit 0 pass, 1 fail (rustc missing fails: scripts/deps.sh
installs it)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

QAUDIT, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MIN_FACTS = 24
ENUMS = ("layouts::Msg", "layouts::Tagged", "core::option::Option<alloc::string::String>")
failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL: {what}")


def truth(binary):
    """{type: (size, align)}, {type: {member path: offset}} as the program prints them."""
    sizes, offsets = {}, {}
    for line in subprocess.run([binary], check=True, capture_output=True, text=True).stdout.splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "size":
            name, size, align = rest.rsplit(" ", 2)
            sizes[name] = (int(size), int(align))
        elif kind == "offset":
            head, offset = rest.rsplit(" ", 1)
            name, member = head.rsplit(" ", 1)
            offsets.setdefault(name, {})[member] = int(offset)
    return sizes, offsets


def layout(binary, *args):
    run = subprocess.run([QAUDIT, "layout", binary, *args], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"qaudit layout {' '.join(args)}: exit {run.returncode}: {run.stderr.strip()}")
        return None
    return run.stdout


def check(rustc, work):
    """The facts compared for one rustc's build of layouts.rs."""
    facts = 0
    binary = os.path.join(work, "layouts")
    subprocess.run([rustc, "-g", "-o", binary, SOURCE], check=True, cwd=work)
    sizes, offsets = truth(binary)
    args = ["--expand", "--format", "json"]
    for name in sizes:
        args += ["--type", name]
    text = layout(binary, *args)
    types = {t["name"]: t for t in json.loads(text)["types"]} if text else {}
    for name, (size, align) in sizes.items():
        t = types.get(name)
        if t is None:
            fail(f"{name}: not in the layout (found {sorted(types)[:8]})")
            continue
        facts += 2
        if (t["size"], t["align"]) != (size, align):
            fail(f"{name}: size {t['size']} align {t['align']}, rustc says {size} and {align}")
        members = {m["name"]: m for m in t["members"]}
        for member, offset in offsets.get(name, {}).items():
            facts += 1
            got = members.get(member, {}).get("offset")
            if got != offset:
                fail(f"{name}.{member}: offset {got}, rustc places it at {offset}")
    for name in ENUMS:
        t = types.get(name)
        if t is None:
            continue
        unions = [m for m in t["members"] if m["type"] == "union {...}" and m.get("depth", 0) == 0]
        facts += 1
        if len(unions) != 1 or unions[0]["size"] != t["size"] or t["padding"] != 0:
            fail(f"{name}: its variants are not one union over its {t['size']} bytes "
                 f"(padding {t['padding']}, unions {unions})")
    whole = layout(binary, "--format", "json")
    if whole:
        every = json.loads(whole)["types"]
        conflicts = sorted({t["name"] for t in every if t["odr_conflict"]})
        facts += 1
        if len(every) < 50 or conflicts:
            fail(f"whole binary: {len(every)} types, ODR conflicts claimed for {conflicts[:6]}")
        # OsStr's Slice { inner: [u8] } is unsized: 0 bytes, its tail a flexible array that takes
        # none of them (rustc 1.63 writes a bit-field of 0 bits, later ones the element's type).
        slices = [t for t in every if re.fullmatch(r"std::sys::(unix::)?os_str(::bytes)?::Slice", t["name"])]
        facts += len(slices)
        if not slices or any(t["size"] != 0 or [(m["type"], m["size"]) for m in t["members"]] != [("u8[]", 0)]
                             for t in slices):
            fail(f"std's unsized Slice: {slices or 'not in the layout'}")
    return facts


def main():
    # Debian's rustc (1.63 on Debian 12, what CI has), and the one first on PATH when another
    # (rustup's): each writes its own DWARF habits.
    found = [shutil.which("rustc"), "/usr/bin/rustc" if os.access("/usr/bin/rustc", os.X_OK) else None]
    compilers = {}  # by version: rustup's rustc is a link to rustup, which goes by its name
    for rustc in filter(None, found):
        version = subprocess.run([rustc, "--version"], capture_output=True, text=True).stdout.strip()
        compilers.setdefault(version, rustc)
    if not compilers:
        print("FAIL: rustc is not installed (scripts/deps.sh installs Debian's rustc)")
        return 1
    for version, rustc in sorted(compilers.items()):
        before = len(failures)
        with tempfile.TemporaryDirectory() as work:
            facts = check(rustc, work)
        print(f"{version}: {facts} facts compared, {len(failures) - before} failure(s)")
        if facts < MIN_FACTS:
            fail(f"{version}: only {facts} facts compared, fewer than {MIN_FACTS}")
    return 1 if failures else 0


sys.exit(main())
