#!/usr/bin/env bash
# Builds the RESP parser fuzzer with clang's libFuzzer (+ASan/UBSan) and runs it for a bounded
# time over the corpus kept in server/fuzz/corpus. usage: run.sh [SECONDS] (default 60)
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out/new"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I "$top/server/src" -I "$top/server/tests" \
  "$top/server/fuzz/fuzz_resp.c" "$top/server/src/resp.c" "$top/server/tests/resp_feed.c" \
  -o "$out/fuzz_resp"
# New inputs go to build/fuzz/new; merge them into the corpus by hand with -merge=1.
"$out/fuzz_resp" -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
  "$out/new" "$top/server/fuzz/corpus"
