#!/usr/bin/python3
"""What a baseline written by `qaudit gate --write-baseline` pins, held against gdb, a reader of
the same DWARF that shares no code with qaudit: every type's size and every pinned member's
offset and size (dotted names are members of members), as gdb's Python API gives them.
Prints how many figures were compared; exits 1 on a difference or when fewer than MINIMUM were.

usage: gate_truth.py BASELINE BINARY MINIMUM"""
import json
import subprocess
import sys

GDB_SCRIPT = r"""
import json
def lookup(name):
    for spelled in ("struct " + name, "union " + name, name):
        try:
            return gdb.lookup_type(spelled).strip_typedefs()
        except gdb.error:
            pass
    return None
def member(t, path):
    offset = 0
    for part in path.split("."):
        found = [f for f in t.strip_typedefs().fields() if f.name == part]
        if not found:
            return None
        offset += found[0].bitpos // 8
        t = found[0].type
    return [offset, t.strip_typedefs().sizeof]
asked = json.loads(ASKED)
answers = {}
for name, paths in asked.items():
    t = lookup(name)
    answers[name] = None if t is None else {
        "size": t.sizeof, "members": {p: member(t, p) for p in paths}}
print("@@" + json.dumps(answers))
"""


def main():
    baseline, binary, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3])
    types = json.load(open(baseline))["types"]
    asked = {name: sorted(rules.get("members", {})) for name, rules in types.items()}
    script = GDB_SCRIPT.replace("ASKED", repr(json.dumps(asked)))
    done = subprocess.run(["gdb", "-batch", "-nx", "-ex", "python " + script,
                           binary], capture_output=True, text=True, timeout=120)
    line = next((l for l in done.stdout.splitlines() if l.startswith("@@")), None)
    if line is None:
        sys.exit(f"gate_truth: gdb gave no answer: {done.stderr.strip()[:500]}")
    answers = json.loads(line[2:])
    compared, wrong = 0, []
    for name, rules in types.items():
        gdb = answers.get(name)
        if gdb is None:
            wrong.append(f"gdb knows no type {name}")
            continue
        for key in ("size", "max_size"):
            if key in rules:
                compared += 1
                if rules[key] != gdb["size"]:
                    wrong.append(f"{name}: {key} {rules[key]}, gdb's sizeof {gdb['size']}")
        for path, pinned in rules.get("members", {}).items():
            compared += 1
            seen = gdb["members"].get(path)
            if seen != [pinned.get("offset"), pinned.get("size")]:
                wrong.append(f"{name}.{path}: {pinned}, gdb: offset and size {seen}")
    for w in wrong:
        print("FAIL:", w)
    print(f"gate_truth: {compared} figures compared with gdb")
    if compared < minimum:
        print(f"FAIL: fewer than {minimum}")
    sys.exit(1 if wrong or compared < minimum else 0)


if __name__ == "__main__":
    main()
