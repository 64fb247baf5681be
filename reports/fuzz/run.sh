#!/usr/bin/env bash
# Builds the dump-reader fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the dumps in reports/fuzz/corpus. usage: run.sh [SECONDS] (default 60)
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz-dump
mkdir -p "$out/new"
src=$top/reports/src
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -I "$top/reports/include" -I "$src" -I "$top/probe/include" -I "$top/probe/src" \
  "$top/reports/fuzz/fuzz_dump.c" "$src/dump_reader.c" "$src/model.c" "$src/merge.c" "$src/symbolize.c" \
  "$src/document.c" "$src/content.c" "$src/render_text.c" "$src/render_markdown.c" \
  "$src/render_html.c" "$src/svg.c" "$src/render_json.c" "$src/estimate.c" "$src/checks.c" \
  "$src/precision.c" "$src/fold.c" "$src/figures.c" "$src/content_sites.c" "$top/probe/src/render.c" \
  "$top/probe/src/classes.c" -ljansson -ldw -lelf -liberty -lm -o "$out/fuzz_dump"
# New inputs go to build/fuzz-dump/new; merge them into the corpus by hand with -merge=1.
"$out/fuzz_dump" -max_total_time="$seconds" -max_len=16384 -timeout=10 -print_final_stats=1 \
  "$out/new" "$top/reports/fuzz/corpus"
