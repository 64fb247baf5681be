#!/usr/bin/python3
"""test_doc_links: documents and build files point only at what the repository holds (issue 40).

Read: every *.md, CMakeLists.txt, Makefile, .ci/* and scripts/* file. Checked in each:
- a path from the top of the repository (`probe/src/...`, `docs/design.md`) names a file or
  directory that exists; in a CMakeLists.txt, `${CMAKE_CURRENT_SOURCE_DIR}/PATH` and the source
  files its commands list are looked up beside it;
- a section named with its document (`docs/design.md, "Tests"`, `design.md#tests`) is a heading
  of that document, or a list item it names in bold (`- **Forks cost little.**`);
- nothing points outside the repository: no absolute path into a machine's own directories
  (/work, /home, /root, /Users) and no ../ that climbs above the top.
Paths written as patterns (a *, %, {...}, <...> or $ in them) and build outputs are not files to
find. Each problem is one line, FILE:LINE: what. Usage: doc_links.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

TOPS = ("queue", "server", "interpose", "probe", "reports", "cli", "tests", "bench", "docs",
        "scripts", "common", ".ci")
PATH = re.compile(r"(?<![\w./$}{@-])((?:%s)/[\w./+-]*)" % "|".join(re.escape(t) for t in TOPS))
SECTION = re.compile(r"([\w./-]*\.md)`?(?:,? \(?\"([^\"]+)\"|#([\w-]+))")
UP = re.compile(r"(?<![\w./-])((?:\.\./)+[\w./+-]*\.\w+)")  # a file: ../lib beside a program is not
OUTSIDE = re.compile(r"(?<![\w.$}-])(/(?:work|home|root|Users)/[\w./+-]*)")
CMAKE_HERE = re.compile(r"\$\{CMAKE_CURRENT_SOURCE_DIR\}/([\w./+-]+)")
CMAKE_SOURCE = re.compile(r"(?<![\w./$}{-])([\w+-][\w./+-]*\.(?:c|h|cpp|inc|sh|py))\b(?![\w/$])")
PATTERN_NEXT = set("*%{<$")


def documents(top):
    try:
        out = subprocess.run(["git", "-C", top, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = []
        for here, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != ".git" and
                       not os.path.exists(os.path.join(here, d, "CMakeCache.txt"))]
            out += [os.path.relpath(os.path.join(here, f), top) for f in files]
    for f in sorted(p for p in out if p):
        base = os.path.basename(f)
        if (f.endswith(".md") or base in ("CMakeLists.txt", "Makefile") or f.startswith(".ci/")
                or f.startswith("scripts/")) and os.path.isfile(os.path.join(top, f)):
            yield f


def slug(heading):
    """GitHub's anchor for a heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path, cache={}):
    if path not in cache:
        titles = []
        try:
            with open(path, encoding="utf-8") as f:
                fence = False
                for line in f:
                    if line.startswith("```"):
                        fence = not fence
                    elif not fence and line.startswith("#"):
                        titles.append(line.lstrip("#").strip().replace("`", ""))
                    elif not fence and re.match(r"[-*] \*\*", line):  # - **A named item.**
                        titles.append(line[4:].split("**")[0].replace("`", ""))
        except OSError:
            pass
        cache[path] = titles
    return cache[path]


def a_pattern(text, end):
    return end < len(text) and text[end] in PATTERN_NEXT


def inside(top, path):
    real = os.path.realpath(path)
    return real == top or real.startswith(top + os.sep)


def found(full):
    """A file or directory; a public header by its include name (probe/layout.h:
    probe/include/probe/layout.h); a program by its source (bench/fork_pages: bench/fork_pages.c)."""
    if os.path.exists(full):
        return True
    part, name = os.path.split(full)
    if os.path.exists(os.path.join(part, "include", os.path.basename(part), name)):
        return True
    return "." not in name and any(os.path.exists(full + e) for e in (".c", ".cpp", ".sh", ".py"))


def check_path(top, doc, number, wheres, path, problems):
    path = path.rstrip(".,:;")
    fulls = [os.path.normpath(os.path.join(w, path)) for w in wheres]
    if not any(inside(top, f) for f in fulls):
        problems.append(f"{doc}:{number}: {path} is outside the repository")
    elif not any(inside(top, f) and found(f) for f in fulls):
        problems.append(f"{doc}:{number}: {path} does not exist")


def check_section(top, doc, number, md, title, anchor, problems):
    here = os.path.join(top, os.path.dirname(doc))
    candidates = [os.path.join(top, md), os.path.join(here, md)]
    if "/" not in md:
        candidates += [os.path.join(top, "docs", md)]
    path = next((c for c in candidates if os.path.isfile(c)), None)
    if path is None:
        if not md.startswith((".", "/")):  # ../ and absolute paths: said by check_path
            problems.append(f"{doc}:{number}: {md} does not exist")
        return
    titles = headings(path)
    if title is not None and not any(t.startswith(title) for t in titles):
        problems.append(f"{doc}:{number}: {md} has no section \"{title}\"")
    if anchor is not None and anchor not in (slug(t) for t in titles):
        problems.append(f"{doc}:{number}: {md} has no section #{anchor}")


def check(top, doc, problems):
    where = os.path.dirname(os.path.join(top, doc))
    cmake = os.path.basename(doc) == "CMakeLists.txt"
    fence = False
    with open(os.path.join(top, doc), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if doc.endswith(".md") and line.startswith("```"):
                fence = not fence
            for m in OUTSIDE.finditer(line):
                problems.append(f"{doc}:{number}: {m.group(1)} is outside the repository")
            for m in UP.finditer(line):
                if not a_pattern(line, m.end()):
                    check_path(top, doc, number, [where], m.group(1), problems)
            for m in PATH.finditer(line):
                if not a_pattern(line, m.end()) and "/build" not in m.group(1):
                    check_path(top, doc, number, [top, where] if cmake else [top], m.group(1),
                               problems)
            for m in SECTION.finditer(line):
                check_section(top, doc, number, m.group(1), m.group(2), m.group(3), problems)
            if not cmake:
                continue
            for m in CMAKE_HERE.finditer(line):
                if not a_pattern(line, m.end()):
                    check_path(top, doc, number, [where], m.group(1), problems)
            code = line.split("#", 1)[0]
            for m in CMAKE_SOURCE.finditer(code):
                if not a_pattern(code, m.end()) and not m.group(1).startswith(TOPS):
                    check_path(top, doc, number, [where], m.group(1), problems)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: doc_links.py SOURCE_DIR")
    top = os.path.realpath(sys.argv[1])
    problems, count = [], 0
    for doc in documents(top):
        count += 1
        check(top, doc, problems)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print(f"{len(problems)} problems in {count} documents and build files")
        sys.exit(1)
    print(f"ok: {count} documents and build files point only at what the repository holds")


if __name__ == "__main__":
    main()
