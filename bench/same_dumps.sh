#!/usr/bin/env bash
# Two builds of libqaudit-preload.so give the same dumps: each program below runs under each
# preload with address randomisation off (setarch -R), the same seed, environment and working
# directory; the dumps are compared after removing what differs from run to run by nature (times,
# pids, the resident set and anonymous memory, the preload's own module entry, site ids, and
# where modules were mapped: frames compare as module+offset). A case
# the old build does not give twice alike (threads racing to register first, so their sampling
# streams swap) is said so and left out.
# usage: bench/same_dumps.sh OLD.so NEW.so BIN_DIR   (BIN_DIR: build/bin, with the fixtures)
set -uo pipefail
old=$(realpath "$1") new=$(realpath "$2") bin=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
programs=(
  "$bin/fixture_exact_counts"
  "$bin/fixture_threads 1 20000"
  "$bin/fixture_forker"
  "$bin/fixture_fork_inherit"
  "$bin/fixture_queue_inline depth9"
  "$bin/fixture_queue_ring depth1"
  "$bin/fixture_cpp_new"
  "$bin/fixture_half_written"
  "/usr/bin/python3 -c 'import json; d = [json.dumps({\"k\": i}) for i in range(20000)]'"
  "/usr/bin/perl -e 'my @a; push @a, \"x\" x \$_ for 1 .. 5000'"
)
run() { # run PRELOAD STACKS NAME PROGRAM...
  local preload=$1 stacks=$2 dir=$work/$3
  shift 3
  mkdir -p "$dir"
  (cd "$dir" && setarch -R env -i PATH=/usr/bin:/bin LD_PRELOAD="$preload" \
    QAUDIT_STACKS="$stacks" QAUDIT_SEED=7 QAUDIT_TIMELINE=off QAUDIT_OUT="$dir/d-%p.json" \
    PERL_HASH_SEED=0 PYTHONHASHSEED=0 "$@" \
    >/dev/null 2>&1)
}
normalise() { # the dumps of a directory, in the order of their (pid-less) content
  python3 - "$1" <<'PY'
import json, sys, glob, os
out = []
drop = {"pid", "ppid", "start_time_ns", "dump_time_ns", "end_time_ns", "rss_bytes",
        "anonymous_bytes", "anonymous_bytes_at_start", "sample_seed", "anonymous_memory_from"}
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in drop}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v
def relative(frame, modules):
    a = int(frame, 16)
    for m in modules:
        if int(m["start"], 16) <= a < int(m["end"], 16):
            if "preload" in m["path"]:  # the interposer's own (its dlopen under a stack): moved code
                return "preload"
            return "%s+%x" % (os.path.basename(m["path"]), a - int(m["base"], 16))
    return frame
def frames_relative(v, modules):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "frames":
                v[k] = [relative(f, modules) for f in x]
            else:
                frames_relative(x, modules)
    elif isinstance(v, list):
        for x in v:
            frames_relative(x, modules)
for path in glob.glob(os.path.join(sys.argv[1], "d-*.json")):
    d = json.load(open(path))
    modules = d["modules"]
    frames_relative({k: d[k] for k in d if k != "modules"}, modules)
    d["modules"] = [{"path": m["path"], "build_id": m["build_id"]} for m in modules
                    if "preload" not in m["path"]]
    for site in d.get("sites", []):
        site.pop("id", None)
    d["sites"] = sorted(d.get("sites", []), key=lambda x: json.dumps(x, sort_keys=True))
    d.get("process", {}).pop("forked_from", None)
    out.append(json.dumps(clean(d), sort_keys=True))
print("\n".join(sorted(out)))
PY
}
same=0 differ=0 unsteady=0
for stacks in off sampled:65536b always; do
  for i in "${!programs[@]}"; do
    eval "argv=(${programs[$i]})"
    run "$old" "$stacks" "old-$i-$stacks" "${argv[@]}"
    run "$old" "$stacks" "again-$i-$stacks" "${argv[@]}"
    run "$new" "$stacks" "new-$i-$stacks" "${argv[@]}"
    a=$(normalise "$work/old-$i-$stacks") b=$(normalise "$work/new-$i-$stacks")
    if [ "$a" != "$(normalise "$work/again-$i-$stacks")" ]; then
      unsteady=$((unsteady + 1))
      echo "left out, not the same twice under the old build: $stacks ${programs[$i]}"
    elif [ -n "$a" ] && [ "$a" = "$b" ]; then
      same=$((same + 1))
    else
      differ=$((differ + 1))
      echo "differ: $stacks ${programs[$i]}"
      diff <(echo "$a" | python3 -m json.tool --json-lines 2>/dev/null) \
           <(echo "$b" | python3 -m json.tool --json-lines 2>/dev/null) | head -20
    fi
  done
done
echo "same: $same, differ: $differ, left out: $unsteady"
[ "$differ" -eq 0 ]
