#!/usr/bin/env python3
"""Agreement of `qaudit layout --format json` with pahole's text output on the same binary.

For every struct or union both print under one name: the size, and the offset of every
top-level member in order (bit-fields by their bit offset). Prints the counts, then up to
five disagreements with what differs. usage: layout_agreement.py QAUDIT.json PAHOLE.txt
"""
import json
import re
import sys

MEMBER = re.compile(r"/\*\s+(\d+)(?::\s*(\d+))?\s+\d+\s+\*/\s*$")
SIZE = re.compile(r"/\* size: (\d+),")
HEADER = re.compile(r"^(struct|union|class) (\S+) \{")


def pahole_types(path):
    """name -> (size, [offset in bits of each top-level member], has _Atomic); pahole prints each
    name once, and prints no size for a top-level union (then size is None: offsets compared)."""
    types, name, depth, members, atomic = {}, None, 0, [], False
    for line in open(path, errors="replace"):
        if name is None:
            m = HEADER.match(line)
            if m:
                name, depth, members, atomic, size = m.group(2), 1, [], False, None
            continue
        depth += line.count("{") - line.count("}")
        if "_Atomic" in line:
            atomic = True
        m = MEMBER.search(line)
        if m and depth == 1 and not line.lstrip().startswith("/*"):
            byte, bit = int(m.group(1)), int(m.group(2) or 0)
            members.append(byte * 8 + bit)
        s = SIZE.search(line)
        if s:
            size = int(s.group(1))
        if depth == 0:
            types[name] = (size, members, atomic)
            name = None
    return types


def qaudit_types(path):
    """name -> (size, offsets); names with two different definitions (ODR) apart."""
    types, odr = {}, set()
    for t in json.load(open(path))["types"]:
        if t["odr_conflict"]:
            odr.add(t["name"])
            continue
        offsets = []
        for m in t["members"]:
            if m.get("depth", 0):
                continue
            if m["bit_offset"] is not None:
                offsets.append(m["bit_offset"])
            else:
                offsets.append(m["offset"] * 8)
        types[t["name"]] = (t["size"], offsets)
    return types, odr


def main():
    (ours, odr), theirs = qaudit_types(sys.argv[1]), pahole_types(sys.argv[2])
    common = sorted(set(ours) & set(theirs))
    agree, differ, atomic_only = 0, [], 0
    for name in common:
        size, offsets = ours[name]
        psize, poffsets, atomic = theirs[name]
        if (psize is None or size == psize) and offsets == poffsets:
            agree += 1
        elif atomic:
            atomic_only += 1  # pahole 1.24 drops _Atomic members (DW_TAG_atomic_type)
            differ.append((name, "pahole mis-reads an _Atomic member", size, psize))
        else:
            differ.append((name, "offsets" if size == psize else "size", size, psize))
    print(f"qaudit types: {len(ours)}, pahole types: {len(theirs)}, both: {len(common)}")
    print(f"agree: {agree} of {len(common)} ({100.0 * agree / max(1, len(common)):.1f} %); "
          f"differ where pahole mis-reads _Atomic: {atomic_only}; other differences: "
          f"{len(differ) - atomic_only}")
    for name, what, size, psize in differ[:5]:
        print(f"  {name}: {what} (qaudit size {size}, pahole size {psize})")
    if odr:
        print(f"  {len(odr)} names have two different definitions (ODR): qaudit reports both "
              f"and marks them, pahole prints one; left out above: {', '.join(sorted(odr)[:8])}")
    only_pahole = sorted(set(theirs) - set(ours) - odr)
    only_qaudit = sorted(set(ours) - set(theirs))
    if only_pahole or only_qaudit:
        print(f"  only in pahole: {', '.join(only_pahole[:8]) or '-'}; "
              f"only in qaudit: {', '.join(only_qaudit[:8]) or '-'}")


if __name__ == "__main__":
    main()
