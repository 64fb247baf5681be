#!/bin/bash
# e2e_rust: a Rust program under qaudit run, built by each rustc installed (Debian's, and rustup's
# when another is first on PATH). Rust allocates through alloc::alloc (exchange_malloc, Global's
# alloc_impl, __rust_alloc, the System allocator): those frames fold away, so that the report
# names the program's own functions. Held against the program's known counts: leak_boxes leaks
# exactly 300 blocks of 100 bytes (its own site), format_names makes 2,000 strings, 2,000 calls or more (through std's
# format_inner, which stays a site of its own, as std::vector's growth does in C++).
# usage: rust.sh QAUDIT SOURCE
set -uo pipefail
qaudit=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

compilers=()
versions=()
for rustc in "$(command -v rustc)" /usr/bin/rustc; do
  [ -x "$rustc" ] || continue
  version=$("$rustc" --version)
  case " ${versions[*]} " in *" $version "*) continue ;; esac
  compilers+=("$rustc")
  versions+=("$version")
done
[ ${#compilers[@]} -gt 0 ] || { echo "FAIL: rustc is not installed (scripts/deps.sh installs Debian's rustc)"; exit 1; }

for i in "${!compilers[@]}"; do
  rustc=${compilers[$i]} dir="$work/$i"
  mkdir "$dir"
  echo "--- ${versions[$i]}"
  "$rustc" -g -o "$dir/rust_leaks" "$source" || { fail "${versions[$i]} could not build $source"; continue; }
  "$qaudit" run --out "$dir/d-%p.json" -- "$dir/rust_leaks" >/dev/null 2>"$dir/run.err" ||
    { fail "run: $(cat "$dir/run.err")"; continue; }
  "$qaudit" report "$dir"/d-*.json --format json -o "$dir/r.json" 2>"$dir/report.err" ||
    { fail "report: $(cat "$dir/report.err")"; continue; }
  python3 - "$dir/r.json" <<'PY' && pass "${versions[$i]}: leak_boxes's 300 blocks at leak_boxes, format_names's 2,000 strings under it; no site named after alloc::alloc" || fail "${versions[$i]}: see above"
import json, sys
r = json.load(open(sys.argv[1]))
def functions(site):  # each frame's own function (the last of its locations), innermost first
    return [f["locations"][-1]["function"] for f in site["frames"] if f["locations"]]
def where(site):
    f = functions(site)
    return f[0] if f else ""
sites = r["sites"]
leak = [s for s in sites if where(s).endswith("::leak_boxes")]
names = [s for s in sites if any(f.endswith("::format_names") for f in functions(s))]
runtime = sorted({where(s) for s in sites if where(s).startswith(("alloc::alloc::", "__rust_", "__rdl_"))})
problems = []
if len(leak) != 1 or (leak[0]["allocs"], leak[0]["bytes"], leak[0]["live_blocks"]) != (300, 30000, 300):
    problems.append(f"leak_boxes: {[(s['allocs'], s['bytes'], s['live_blocks']) for s in leak]}")
if sum(s["allocs"] for s in names) < 2000:  # one String each, and std's growth of it
    problems.append(f"format_names: {[(where(s), s['allocs']) for s in names]}")
if runtime:
    problems.append(f"sites named after Rust's allocator: {runtime}")
if problems:
    print("\n".join(problems))
    print("sites:", [(where(s), s["allocs"]) for s in sites][:12])
sys.exit(1 if problems else 0)
PY
done
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
