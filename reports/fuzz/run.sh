#!/usr/bin/env bash
# Builds the dump-reader fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the dumps in reports/fuzz/corpus. usage: run.sh [SECONDS] (default 60)
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz-dump
mkdir -p "$out/new"
src=$top/reports/src
# pprof's profile.proto in C, as reports/CMakeLists.txt generates it.
mkdir -p "$out/proto"
protoc-c --c_out="$out/proto" --proto_path="$top/reports/proto" "$top/reports/proto/profile.proto"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -I "$top/reports/include" -I "$src" -I "$top/probe/include" -I "$top/probe/src" \
  "$top/reports/fuzz/fuzz_dump.c" "$src/dump_reader.c" "$src/model.c" "$src/merge.c" "$src/symbolize.c" \
  "$src/document.c" "$src/content.c" "$src/render_text.c" "$src/render_markdown.c" \
  "$src/render_html.c" "$src/svg.c" "$src/render_json.c" "$src/estimate.c" "$src/checks.c" \
  "$src/precision.c" "$src/fold.c" "$src/figures.c" "$src/content_sites.c" "$top/probe/src/render.c" \
  "$src/stacks.c" "$src/render_pprof.c" "$src/render_folded.c" "$src/elf_build_id.c" \
  "$src/profile_index.c" "$src/gzip_sink.c" \
  -I "$out/proto" "$out/proto/profile.pb-c.c" \
  "$top/probe/src/classes.c" -ljansson -ldw -lelf -liberty -lprotobuf-c -lz -lm -o "$out/fuzz_dump"
# New inputs go to build/fuzz-dump/new; merge them into the corpus by hand with -merge=1.
"$out/fuzz_dump" -max_total_time="$seconds" -max_len=16384 -timeout=10 -print_final_stats=1 \
  "$out/new" "$top/reports/fuzz/corpus"
