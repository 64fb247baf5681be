#!/usr/bin/env bash
# Builds the layout-reader fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the ELF seeds in probe/fuzz/corpus (relocatable objects with DWARF 5 and with DWARF 4
# type units; named .elf because the repository ignores *.o). usage: run.sh [SECONDS] (default 60)
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz-layout
mkdir -p "$out/new"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -I "$top/probe/include" -I "$top/probe/src" \
  "$top/probe/fuzz/fuzz_layout.c" "$top/probe/src/dwarf_reader.c" "$top/probe/src/type_names.c" \
  "$top/probe/src/holes.c" "$top/probe/src/gdb_index.c" "$top/probe/src/lean_dwarf.c" "$top/probe/src/input.c" -ldw -lelf \
  -o "$out/fuzz_layout"
# New inputs go to build/fuzz-layout/new; merge them into the corpus by hand with -merge=1.
"$out/fuzz_layout" -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
  "$out/new" "$top/probe/fuzz/corpus"
