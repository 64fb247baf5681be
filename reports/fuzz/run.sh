#!/usr/bin/env bash
# Builds the dump-reader fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the dumps in reports/fuzz/corpus. usage: run.sh [SECONDS] (default 60)
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz-dump
mkdir -p "$out/new"
src=$top/reports/src # every file of the reports library (reports/CMakeLists.txt builds the same)
# pprof's profile.proto in C, as reports/CMakeLists.txt generates it.
mkdir -p "$out/proto"
protoc-c --c_out="$out/proto" --proto_path="$top/reports/proto" "$top/reports/proto/profile.proto"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -I "$top/reports/include" -I "$src" -I "$top/probe/include" -I "$top/probe/src" \
  -I "$top/common/include" \
  -DQAUDIT_VERSION="\"fuzz\"" "$top/reports/fuzz/fuzz_dump.c" "$src"/*/*.c \
  "$top"/probe/src/*/*.c "$top"/common/src/*.c \
  -I "$out/proto" "$out/proto/profile.pb-c.c" \
  -ljansson -ldw -lelf -liberty -lprotobuf-c -lz -lm -o "$out/fuzz_dump"
# New inputs go to build/fuzz-dump/new; merge them into the corpus by hand with -merge=1.
"$out/fuzz_dump" -max_total_time="$seconds" -max_len=16384 -timeout=10 -print_final_stats=1 \
  "$out/new" "$top/reports/fuzz/corpus"
