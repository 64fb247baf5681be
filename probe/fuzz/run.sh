#!/usr/bin/env bash
# Builds the layout-reader fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the ELF seeds in probe/fuzz/corpus (object files and small linked programs with DWARF
# 4 and 5 and type units; named .elf because the repository ignores *.o; make_seeds.sh rebuilds
# the linked ones). Besides whole ELF files, inputs are lists of byte flips in the seeds' DWARF,
# checked against the seed's own layout (fuzz_layout.c says how). Every probe source (and
# common/'s helpers) is compiled in, so a new one needs no edit here. usage: run.sh [SECONDS]
# (default 60); the build goes to $QAUDIT_FUZZ_OUT (default build/fuzz-layout).
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${QAUDIT_FUZZ_OUT:-$top/build/fuzz-layout}
mkdir -p "$out/new"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -DSEEDS="\"$top/probe/fuzz/corpus\"" -I "$top/probe/include" -I "$top/probe/src" \
  -I "$top/common/include" "$top/probe/fuzz/fuzz_layout.c" "$top"/probe/src/*/*.c \
  "$top"/common/src/*.c -ldw -lelf -ljansson -liberty -o "$out/fuzz_layout"
# New inputs go to $out/new (merge them into the corpus by hand with -merge=1), failing ones to
# $out/crash-*; FUZZ_LAYOUT_DUMP=FILE $out/fuzz_layout CRASH writes the file a flip input made.
"$out/fuzz_layout" -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$out/" \
  "$out/new" "$top/probe/fuzz/corpus"
