#!/usr/bin/python3
"""test_layout_names: one name per C++ type, gdb's and the demangler's, whoever produced it.

The fixture (names.h, names.cpp, names_other_unit.cpp: template arguments of every kind, classes local
to functions of every linkage, lambdas) is built with g++ and clang++, DWARF 4 and 5, with and
without type units, and split. In every build:

- the fixture's types carry exactly the names in NAMES below (the demangler's spelling, which
  clang's symbols and gdb's own names of clang's types show), each once, none other;
- each name is the one gdb 13 lists (`info types`), but where gdb keeps what g++ wrote and cannot
  know better (an integer argument's type, "Val<500>"), and for local classes and lambdas, which
  gdb does not list: a local class must be found in its function by gdb, a lambda's name must be
  the one clang's demangled symbols give it; at least MIN_GDB names are gdb's exactly;
- `--type` finds each type under the other spellings gdb and the demangler take (SPELLINGS; in
  one build of each compiler);
- member types are spelled as gdb's ptype spells them, the same from both compilers
  (USES_MEMBERS).

usage: check.py QAUDIT FIXTURE_DIR"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

QAUDIT, FIXTURE = sys.argv[1], sys.argv[2]
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

LAMBDAS = "nm::lambdas(int)::"
NAMES = {
    "c_linkage::CL", "main::ML", "main::{lambda(int)#1}",
    "nm::(anonymous namespace)::Hidden", "nm::Box<nm::(anonymous namespace)::Hidden>",
    "nm::Box<char const* const*>", "nm::Box<char const*>", "nm::Box<char16_t>",
    "nm::Box<int (*) [3]>", "nm::Box<int (*)(int) noexcept>", "nm::Box<int (*)(int, char)>",
    "nm::Box<int (nm::M::*)() const>", "nm::Box<int [3]>", "nm::Box<int const volatile*>",
    "nm::Box<int nm::M::*>", "nm::Box<int volatile*>", "nm::Box<int>", "nm::Box<long double>",
    "nm::Box<long long>", "nm::Box<long>", "nm::Box<nm::Box<int> >", "nm::Box<nm::S [2][3]>",
    "nm::Box<short>", "nm::Box<signed char>", "nm::Box<unsigned __int128>",
    "nm::Box<unsigned char>", "nm::Box<unsigned long long>", "nm::Box<unsigned long>",
    "nm::Box<unsigned short>", "nm::Box<void (*)(int, ...)>", "nm::Box<wchar_t>",
    "nm::Buf<char, 2ul>", "nm::K", "nm::K::m(int) const::ML", "nm::Pack<>", "nm::Pack<int, long>",
    "nm::S", "nm::TTp<nm::Box>", "nm::Uses", "nm::Val<&nm::gv>", "nm::Val<(char)'a'>",
    "nm::Val<(nm::E)0>", "nm::Val<(nm::EC)1>", "nm::Val<(short)4>", "nm::Val<-3>",
    "nm::Val<-5l>", "nm::Val<3ll>", "nm::Val<3u>", "nm::Val<3ull>", "nm::Val<500ul>",
    "nm::Val<true>", "nm::internal(int)::IL", "nm::local_classes(unsigned long)::L",
    LAMBDAS + "{lambda()#1}", LAMBDAS + "{lambda(auto:1)#1}", LAMBDAS + "{lambda(int)#1}",
    LAMBDAS + "{lambda(int)#2}", LAMBDAS + "{lambda(int)#3}", LAMBDAS + "{lambda(long)#1}",
    LAMBDAS + "{lambda(long)#1}::operator()(long) const::{lambda()#1}",
    "std::_Function_base::_Base_manager<nm::lambdas(int)::{lambda(int)#3}>",
    "std::_Function_handler<int (int), nm::lambdas(int)::{lambda(int)#3}>",
    "std::remove_reference<nm::lambdas(int)::{lambda(int)#3}&>",
    "std::remove_reference<nm::lambdas(int)::{lambda(int)#3}>",
}
# Types some builds have and others not: g++ defines nm::M, clang only declares it (it needs only
# member pointers); the rest depend on which of libstdc++'s helpers each build describes.
OPTIONAL = {
    "nm::M", "std::remove_reference<nm::lambdas(int)::{lambda(int)#3} const&>",
    "std::__invoke_result<nm::lambdas(int)::{lambda(int)#3}&, int>",
    "std::function<int (int)>::_Callable<nm::lambdas(int)::{lambda(int)#3}, "
    "nm::lambdas(int)::{lambda(int)#3}, std::__invoke_result<nm::lambdas(int)::{lambda(int)#3}&, "
    "int> >",
}
# gdb lists what clang wrote for an enumerator argument (the demangler's is "(nm::E)0")
CLANG_ENUMERATORS = {"(nm::E)0": "nm::ea", "(nm::EC)1": "nm::EC::y"}
# --type spellings of the same types, as gdb or the demangler or a user would write them
SPELLINGS = [
    ("nm::Val<500UL>", "nm::Val<500ul>"), ("nm::Val<500>", "nm::Val<500ul>"),
    ("nm::Val500", "nm::Val<500ul>"), ("nm::Alias", "nm::Box<long>"),
    ("nm::Box<long unsigned int>", "nm::Box<unsigned long>"),
    ("Box<const char *>", "nm::Box<char const*>"), ("nm::Box<const char*const*>",
                                                     "nm::Box<char const* const*>"),
    ("nm::Box<volatile const int *>", "nm::Box<int const volatile*>"),
    ("nm::Box<__int128 unsigned>", "nm::Box<unsigned __int128>"),
    ("nm::Box<int(*)(int,char)>", "nm::Box<int (*)(int, char)>"),
    ("nm::Box<void(*)(int, ...)>", "nm::Box<void (*)(int, ...)>"),
    ("nm::Box<int(&)[3]>", None), ("nm::Box<int[3]>", "nm::Box<int [3]>"),
    ("nm::Box<nm::Box<int>>", "nm::Box<nm::Box<int> >"), ("nm::Val<'a'>", "nm::Val<(char)'a'>"),
    ("nm::Val<nm::ea>", None), ("nm::Val<(nm::E)0>", "nm::Val<(nm::E)0>"),
    ("nm::Val<(& nm::gv)>", "nm::Val<&nm::gv>"), ("nm::Val<-5L>", "nm::Val<-5l>"),
    ("nm::Buf<char, 2>", "nm::Buf<char, 2ul>"), ("struct nm::S", "nm::S"),
    ("nm::local_classes(unsigned long)::L", "nm::local_classes(unsigned long)::L"),
    ("local_classes(unsigned long)::L", "nm::local_classes(unsigned long)::L"),
    ("nm::K::m(int) const::ML", "nm::K::m(int) const::ML"),
    ("main::{lambda(int)#1}", "main::{lambda(int)#1}"),
    ("nm::lambdas(int)::{lambda(long)#1}", "nm::lambdas(int)::{lambda(long)#1}"),
]
SPELLING_FLAVOURS = ("g++ -gdwarf-5 -fdebug-types-section", "clang++ -gdwarf-5")
MIN_GDB = {"g++": 38, "clang++": 43}
# the member declarations of nm::Uses, as gdb's ptype prints them (C declarators, gdb's words)
USES_MEMBERS = [
    ("plain_ul", "unsigned long"), ("plain_ll", "long long"), ("plain_short", "short"),
    ("plain_uc", "unsigned char"), ("plain_ccp", "const char *"),
    ("ul", "nm::Box<unsigned long>"), ("ccpcp", "nm::Box<char const* const*>"),
    ("v_ul", "nm::Val<500ul>"), ("v_char", "nm::Val<(char)'a'>"), ("str", "std::string"),
]

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def run(command, cwd=None):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def build(scratch, compiler, flags):
    where = os.path.join(scratch, compiler.replace("+", "x") + "".join(flags).replace("-", "_"))
    os.mkdir(where)
    binary = os.path.join(where, "names")
    sources = [os.path.join(FIXTURE, f) for f in ("names.cpp", "names_other_unit.cpp")]
    rc, _, err = run([compiler, "-std=c++20", "-I", FIXTURE, *flags, *sources, "-o", binary],
                     cwd=where)
    return f"{compiler} {' '.join(flags)}", binary if rc == 0 else None, err


def fixture_names(doc):
    return [t["name"] for t in doc["types"]
            if "nm::" in t["name"] or t["name"].startswith(("main::", "c_linkage::"))]


def gdb_listed(binary):
    _, out, _ = run(["gdb", "-batch", "-nx", "-ex", "info types", binary])
    return {m.group(1) for m in (re.match(r"^(?:\d+:)?\t(.*);$", line)
                                 for line in out.splitlines()) if m}


GDB_LOCAL = r"""
import gdb
for name, function, own in CASES:
    try:
        symbol = gdb.lookup_global_symbol(function) or gdb.lookup_static_symbol(function)
        gdb.lookup_type(own, gdb.block_for_pc(int(symbol.value().address)))
        print("found " + name)
    except (gdb.error, AttributeError, RuntimeError) as e:
        print("missed " + name + ": " + str(e))
"""


ANONYMOUS = "(anonymous namespace)"


def split_local(name):
    """A local class's function and own name: ("f(int)", "L") of "f(int)::L", ("main", "L") of
    "main::L" (main and extern "C" functions go by their plain names); None for others."""
    if "{lambda" in name:
        return None
    if name.startswith(("main::", "c_linkage::")):
        return tuple(name.split("::", 1))
    cut = name.rfind("::")
    return (name[:cut], name[cut + 2:]) if ")" in name[:cut].replace(ANONYMOUS, "") else None


def gdb_finds_locals(binary, names):
    """The local classes gdb finds in their function's block (as ptype 'f(int)::L' does)."""
    cases = [(name,) + split_local(name) for name in names if split_local(name)]
    script = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    script.write(f"CASES = {cases!r}\n" + GDB_LOCAL)
    script.close()
    try:
        _, out, _ = run(["gdb", "-batch", "-nx", "-x", script.name, binary])
    finally:
        os.unlink(script.name)
    return {line[6:] for line in out.splitlines() if line.startswith("found ")}


def symbol_scopes(binary):
    """Every scope the demangled symbols name ("f(int)::{lambda()#1}" of "auto f(int)::{lambda()
    #1}::operator()() const", its return type left out)."""
    _, out, _ = run(["nm", "-C", "--defined-only", binary])
    scopes = set()
    for symbol in (line.split(" ", 2)[-1] for line in out.splitlines()):
        depth, start = 0, 0
        for i, c in enumerate(symbol):
            depth += 1 if c in "<({" else -1 if c in ">)}" else 0
            if depth == 0 and c == " " and "::" not in symbol[start:i]:
                start = i + 1  # past a return type
            if depth == 0 and symbol.startswith("::", i):
                scopes.add(symbol[start:i])
    return scopes


def as_gdb_keeps_gxx(name):
    """What gdb lists for a g++ name that lacks the type of an argument: "Val<500>" for
    "Val<500ul>", "Val<4>" for "Val<(short)4>", and g++'s "__int128 unsigned"."""
    name = re.sub(r"(?<![\w.])(-?\d+)(?:ull|ul|ll|u|l)(?![\w.])", r"\1", name)
    name = re.sub(r"\((?:short|unsigned char|signed char|unsigned short)\)(-?\d+)", r"\1", name)
    return name.replace("unsigned __int128", "__int128 unsigned")


def as_gdb_keeps_clang(name):
    for ours, clangs in CLANG_ENUMERATORS.items():
        name = name.replace(ours, clangs)
    return name


def check_names(where, names):
    seen = set()
    for name in names:
        if name in seen:
            fail(where, f"{name} is listed twice")
        seen.add(name)
    missing, unexpected = NAMES - seen, seen - NAMES - OPTIONAL
    if missing:
        fail(where, f"{len(missing)} names missing: {sorted(missing)[:6]}")
    if unexpected:
        fail(where, f"{len(unexpected)} names not expected: {sorted(unexpected)[:6]}")


def check_gdb(where, compiler, binary, names, clang_scopes):
    listed = gdb_listed(binary)
    local = gdb_finds_locals(binary, names)
    exact = 0
    for name in names:
        if name in listed:
            exact += 1
        elif compiler == "g++" and as_gdb_keeps_gxx(name) in listed:
            pass  # gdb keeps g++'s "Val<500>": the argument's type is in DWARF, not the name
        elif compiler == "clang++" and as_gdb_keeps_clang(name) in listed:
            pass
        elif "{lambda" in name:  # gdb keeps each producer's spelling; clang's symbols are ours
            inline = name.startswith(LAMBDAS) and name.endswith("}")  # (main's: clang's $_0)
            if inline and clang_scopes is not None and name not in clang_scopes:
                fail(where, f"{name}: no clang symbol names this lambda so")
        elif split_local(name):
            if name not in local:
                fail(where, f"{name}: gdb finds no such class in that function")
        else:
            fail(where, f"{name}: gdb lists no such type")
    if exact < MIN_GDB[compiler]:
        fail(where, f"only {exact} names are gdb's exactly (at least {MIN_GDB[compiler]} wanted)")
    return exact


def check_spellings(where, binary):
    for pattern, want in SPELLINGS:
        rc, out, err = run([QAUDIT, "layout", "--format", "json", "--type", pattern, binary])
        got = [t["name"] for t in json.loads(out)["types"]] if out.strip() else []
        if want is None:
            if rc != 2:
                fail(where, f"--type {pattern!r} (no such type) gives {got}, exit {rc}")
        elif rc != 0 or got != [want]:
            fail(where, f"--type {pattern!r} gives {got} (exit {rc}: {err.strip()}), want {want}")


def check_flavour(flavour, compiler, binary, err, clang_scopes):
    if binary is None:
        fail(flavour, f"does not build: {err.strip()[:400]}")
        return
    rc, out, err = run([QAUDIT, "layout", "--format", "json", binary])
    if rc != 0:
        fail(flavour, f"qaudit layout exit {rc}: {err.strip()}")
        return
    doc = json.loads(out)
    names = fixture_names(doc)
    check_names(flavour, names)
    uses = [t for t in doc["types"] if t["name"] == "nm::Uses"]
    members = {m["name"]: m["type"] for t in uses for m in t["members"]}
    for member, spelled in USES_MEMBERS:
        if members.get(member) != spelled:
            fail(flavour, f"nm::Uses::{member} is a {members.get(member)!r}, want {spelled!r}")
    exact = check_gdb(flavour, compiler, binary, names, clang_scopes)
    if flavour in SPELLING_FLAVOURS:  # (the names are the same in every build: checked above)
        check_spellings(flavour, binary)
    print(f"{flavour}: {len(names)} names, {exact} of them gdb's exactly")


def main():
    for tool in ("g++", "clang++", "gdb", "nm"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} is not installed")
            return 77
    scratch = tempfile.mkdtemp(prefix="qaudit-names-")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            builds = list(pool.map(lambda f: (f[0],) + build(scratch, *f), FLAVOURS))
        clang = [b for c, _, b, _ in builds if c == "clang++" and b is not None]
        clang_scopes = symbol_scopes(clang[0]) if clang else None
        for compiler, flavour, binary, err in builds:
            check_flavour(flavour, compiler, binary, err, clang_scopes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
