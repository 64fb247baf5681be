#!/usr/bin/env python3
"""test_layout_reorganize: the order `qaudit layout --reorganize` suggests is the layout the
compiler gives it. For each reorganized struct of structs.c (gcc, C11) and structs.cpp (g++ in its
default dialect), a struct with the suggested members in the suggested order is compiled by the
same compiler, which prints each member's offsetof and the sizeof: every one must be what qaudit
said, and smaller than the original. The kinds left alone must say n/a with their reason, a struct
already tight must say no order is smaller, and enough structs must be reorganized to count. The
report of the fixture's run with --binary must carry the compiler's sizes in its layouts'
"reorganized", null for the others and for layouts read from a layout file. The sanitizer build
has no preload for that run: there --no-run leaves the report's half out, and says so.

usage: check.py QAUDIT SOURCE_DIR [--no-run]"""
import json
import os
import re
import subprocess
import sys
import tempfile

QAUDIT, SOURCE = sys.argv[1], os.path.abspath(sys.argv[2])
WITH_RUN = sys.argv[3:] != ["--no-run"]
# alignas on a member is not in the text's declarations: the generated struct restates it.
MEMBER_ALIGNAS = {("wide", "b"): 16}
FLAVOURS = {
    "c": {"source": "structs.c", "compiler": ["gcc", "-std=c11"], "ext": "c",
          "header": "#include <stddef.h>\n#include <stdio.h>\n#include <stdalign.h>\n",
          "reorganized": {"conn", "flex", "arrays", "calls", "wide", "mixed", "nested"},
          "at_least": 42,
          "tight": {"tight"},
          "not_applicable": {"union either": "a union", "struct bits": "bit-fields",
                             "struct squeezed": "packed"}},
    "c++": {"source": "structs.cpp", "compiler": ["g++", "-Wno-invalid-offsetof"], "ext": "cpp",
            "header": "#include <cstddef>\n#include <cstdio>\n",
            "reorganized": {"session", "registry", "slot<double>"},
            "at_least": 19,
            "tight": {"empty"},
            "not_applicable": {"struct derived": "C++ bases or a vtable pointer",
                               "struct virtuals": "C++ bases or a vtable pointer"}},
}
failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL: " + message)


def parse(text):
    """{name: (size, [(declaration, member, offset)])} of the reorganized blocks; the n/a and
    no-smaller lines as {kind name: reason}."""
    reorganized, notes = {}, {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"/\* --reorganize: (\w+) (\S+): n/a, (.*) \*/$", line)
        if m:
            notes[m.group(1) + " " + m.group(2)] = m.group(3)
            continue
        m = re.match(r"/\* --reorganize: (\w+) (\S+): no order by alignment is smaller than its "
                     r"(\d+) (bytes?) \*/$", line)
        if m:
            # "1 byte" (an empty C++ class), "16 bytes"
            tight = m.group(4) == ("byte" if m.group(3) == "1" else "bytes")
            notes[m.group(1) + " " + m.group(2)] = "tight" if tight else line
            continue
        m = re.match(r"/\* --reorganize: (\w+) (\S+) by alignment, largest first: (\d+) bytes", line)
        if not m:
            continue
        members, size = [], None
        for body in lines[i + 2:]:
            if body.startswith("};"):
                break
            d = re.match(r"\t(\S.*?);\s+/\*\s+(\d+)\s+(\d+) \*/", body)
            if d:
                members.append((d.group(1), member_name(d.group(1)), int(d.group(2))))
            s = re.match(r"\t/\* size: (\d+),", body)
            if s:
                size = int(s.group(1))
        if size != int(m.group(3)):
            fail(f"{m.group(2)}: the comment says {m.group(3)} bytes, the layout {size}")
        less = re.search(r"bytes, (\d+) less", line)
        reorganized[m.group(2)] = (size, members, size + int(less.group(1)) if less else None)
    return reorganized, notes


def member_name(declaration):
    """The member a declaration names: cb in 'void (*cb)(int)', s in 'uint16_t s[3]'."""
    pointer = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", declaration)
    if pointer:
        return pointer.group(1)
    return re.findall(r"[A-Za-z_]\w*", declaration.split("[")[0])[-1]


def generated(flavour, reorganized):
    """A program that includes the fixture and prints, for each struct in the suggested order,
    'NAME SIZE' and then 'NAME.MEMBER OFFSET' lines."""
    out = [flavour["header"], "#define main fixture_main",
           f'#include "{os.path.join(SOURCE, flavour["source"])}"', "#undef main"]
    for number, (name, (_, members, _)) in enumerate(reorganized.items()):
        out.append(f"struct reorganized_{number} {{ /* {name} */")
        for declaration, member, _ in members:
            alignas = MEMBER_ALIGNAS.get((name, member))
            out.append(f"    {'alignas(%d) ' % alignas if alignas else ''}{declaration};")
        out.append("};")
    out.append("int main(void) {")
    for number, (name, (_, members, _)) in enumerate(reorganized.items()):
        out.append(f'    printf("{name} %zu\\n", sizeof(struct reorganized_{number}));')
        for _, member, _ in members:
            out.append(f'    printf("{name}.{member} %zu\\n", '
                       f'offsetof(struct reorganized_{number}, {member}));')
    out.append("    return 0;\n}")
    return "\n".join(out) + "\n"


def check(language, flavour, work):
    binary = os.path.join(work, language.replace("+", "x"))
    subprocess.run(flavour["compiler"] + ["-g", "-o", binary, os.path.join(SOURCE, flavour["source"])],
                   check=True)
    run = subprocess.run([QAUDIT, "layout", "--reorganize", binary], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{language}: qaudit layout --reorganize exit {run.returncode}: {run.stderr.strip()}")
        return
    reorganized, notes = parse(run.stdout)
    # The fixture's own types only (the C++ one's output holds the library's too).
    reorganized = {k: v for k, v in reorganized.items() if k in flavour["reorganized"]}
    for name in sorted(flavour["reorganized"] - reorganized.keys()):
        fail(f"{language}: {name} not reorganized (notes: {notes})")
    for kind_name, reason in flavour["not_applicable"].items():
        if notes.get(kind_name) != reason:
            fail(f"{language}: {kind_name}: '{notes.get(kind_name)}', not n/a, {reason}")
    for name in flavour["tight"]:
        if not any(k.endswith(" " + name) and v == "tight" for k, v in notes.items()):
            fail(f"{language}: {name}: not said to be tight")
    if not reorganized:
        return
    program = os.path.join(work, f"{binary}_reorganized.{flavour['ext']}")
    with open(program, "w") as f:
        f.write(generated(flavour, reorganized))
    subprocess.run(flavour["compiler"] + ["-o", program + ".bin", program], check=True)
    facts = dict(line.rsplit(" ", 1) for line in subprocess.run(
        [program + ".bin"], capture_output=True, text=True, check=True).stdout.splitlines())
    compared = 0
    for name, (size, members, original) in sorted(reorganized.items()):
        if int(facts[name]) != size:
            fail(f"{language}: {name}: qaudit says {size} bytes, the compiler {facts[name]}")
        if original is None or size >= original:
            fail(f"{language}: {name}: {size} bytes is not less than the original {original}")
        for _, member, offset in members:
            got = int(facts[f"{name}.{member}"])
            if got != offset:
                fail(f"{language}: {name}.{member}: qaudit says offset {offset}, the compiler {got}")
            compared += 1
        compared += 1
        print(f"ok: {language}: {name}: {original} -> {size} bytes, "
              f"{len(members)} offsets as the compiler's")
    if compared < flavour["at_least"]:
        fail(f"{language}: only {compared} facts compared (at least {flavour['at_least']})")
    if WITH_RUN:
        check_report(language, flavour, binary, work, reorganized, facts)
    else:
        print(f"not checked: {language}: report --binary (this build has no preload to run with)")


def check_report(language, flavour, binary, work, reorganized, facts):
    """qaudit report --binary says the same of each struct: 'reorganized' with the compiler's
    size, null where --reorganize has nothing smaller or says n/a; and null from a layout file
    (its members' alignments are not in qaudit-layout/1)."""
    dump = os.path.join(work, language.replace("+", "x") + "-dump.json")
    run = subprocess.run([QAUDIT, "run", "--out", dump, "--", binary], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{language}: qaudit run exit {run.returncode}: {run.stderr.strip()}")
        return
    names = sorted(reorganized) + sorted(flavour["tight"]) + \
        [k.split(" ", 1)[1] for k in flavour["not_applicable"]]
    types = [a for n in names for a in ("--type", n)]
    report = subprocess.run([QAUDIT, "report", dump, "--binary", binary, "--format", "json"] + types,
                            capture_output=True, text=True)
    if report.returncode not in (0, 1):
        fail(f"{language}: report exit {report.returncode}: {report.stderr.strip()}")
        return
    layouts = {t["name"]: t.get("reorganized", "missing") for t in json.loads(report.stdout)["layouts"]}
    for name in names:
        want = int(facts[name]) if name in reorganized else None
        got = layouts.get(name, "absent")
        got_size = got["size"] if isinstance(got, dict) else got
        if got_size != want:
            fail(f"{language}: report --binary: {name}: reorganized {got}, want size {want}")
    print(f"ok: {language}: report --binary: reorganized sizes of {len(names)} structs as the compiler's")
    file = os.path.join(work, language.replace("+", "x") + "-layout.json")
    with open(file, "w") as f:
        subprocess.run([QAUDIT, "layout", "--format", "json", binary], stdout=f, check=True)
    report = subprocess.run([QAUDIT, "report", dump, "--layout", file, "--format", "json"] + types,
                            capture_output=True, text=True)
    read_back = [t.get("reorganized", "missing") for t in json.loads(report.stdout)["layouts"]]
    if not read_back or any(r is not None for r in read_back):
        fail(f"{language}: report --layout FILE: reorganized {read_back}, want null for each")


with tempfile.TemporaryDirectory() as work:
    for language, flavour in FLAVOURS.items():
        check(language, flavour, work)
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
