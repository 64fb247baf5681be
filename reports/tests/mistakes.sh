#!/usr/bin/env bash
# One line per mistake (issue 21): --out DIR writes inside DIR; a write that fails says the system's
# reason; a missing program gets one line, and so does one that no preload can reach (static, or
# built for another machine); a misspelled option or command gets one line naming the
# nearest valid one, and exit 2.
# usage: mistakes.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2

# expect STATUS WHAT LINE-PATTERN COMMAND...: exit STATUS, and stderr exactly one line matching.
expect() {
  local want=$1 what=$2 pattern=$3
  shift 3
  "$@" >"$work/out" 2>"$work/err"
  local got=$? lines
  lines=$(wc -l <"$work/err")
  if [ "$got" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -Eq "$pattern" "$work/err"; then
    pass "$what: exit $got, $(cat "$work/err")"
  else
    fail "$what: exit $got (wanted $want), $lines lines: $(head -c 600 "$work/err")"
  fi
}

echo "--- --out DIR writes inside DIR"
mkdir "$work/dumps"
"$qaudit" run --out "$work/dumps" -- "$bin/fixture_first_hour" 2>"$work/err"
inside=$(ls "$work/dumps")
beside=$(ls -d "$work"/dumps.* 2>/dev/null)
[ -n "$inside" ] && [ -z "$beside" ] && grep -q "dump $work/dumps/qaudit-[0-9]*.json (exit)" "$work/err" &&
  pass "run --out DIR: the dump is inside ($inside), none beside it" || fail "--out DIR: inside '$inside', beside '$beside'"
"$qaudit" run --out "$work/made/deeper/" -- true 2>"$work/err"
grep -qx "qaudit run: made the directory $work/made/deeper/" "$work/err" &&
  grep -q "^qaudit run: dump $work/made/deeper/qaudit-[0-9]*.json (exit)" "$work/err" &&
  pass "run --out DIR/ that does not exist: made, with its parent, and the dump inside" ||
  fail "--out missing dir/: $(cat "$work/err")"
expect 2 "run --out a missing name without an extension" \
  "^qaudit run: --out $work/d: no such directory; $work/d/ makes it, a dump's file name has an extension \($work/d.json\)$" \
  "$qaudit" run --out "$work/d" -- true
[ ! -e "$work/d" ] && pass "nothing made for it" || fail "--out d made $(ls -d "$work"/d*)"
touch "$work/plain"
expect 2 "run --out FILE/ on a file" "^qaudit run: --out: cannot make the directory $work/plain/: Not a directory$" \
  "$qaudit" run --out "$work/plain/" -- true

echo "--- every write failure gives the system's reason"
dump=$(ls "$work"/dumps/*.json)
expect 2 "report -o into a missing directory" "cannot write $work/none/r.txt: No such file or directory$" \
  "$qaudit" report "$dump" -o "$work/none/r.txt"
expect 2 "report -o on a full device" "cannot write /dev/full: No space left on device$" \
  "$qaudit" report "$dump" -o /dev/full
expect 2 "report -o a directory" "cannot write $work/dumps: Is a directory$" "$qaudit" report "$dump" -o "$work/dumps"
expect 2 "report to a full standard output" "cannot write standard output: No space left on device$" \
  sh -c "exec '$qaudit' report '$dump' >/dev/full"
expect 2 "diff -o on a full device" "cannot write /dev/full: No space left on device$" \
  "$qaudit" diff "$dump" "$dump" -o /dev/full
expect 2 "diff's pprof pair into a file's place" "cannot (make|write) .*: Not a directory$" \
  "$qaudit" diff "$dump" "$dump" --format pprof -o "$dump/pair"

echo "--- a missing program: one line"
expect 127 "run of a missing program" "^qaudit run: cannot run /nonexistent/program: No such file or directory$" \
  "$qaudit" run --out "$work/x-%p.json" -- /nonexistent/program
expect 127 "run of a missing command on PATH" "^qaudit run: cannot run no-such-command-21: No such file or directory$" \
  "$qaudit" run --out "$work/x-%p.json" -- no-such-command-21
expect 126 "run of a file that is not executable" "^qaudit run: cannot run /etc/passwd: Permission denied$" \
  "$qaudit" run --out "$work/x-%p.json" -- /etc/passwd
ls "$work"/x-*.json >/dev/null 2>&1 && fail "a program that never ran left a dump" || pass "no dump for a program that never ran"

echo "--- a program no preload can reach: one line, and it does not run"
expect 2 "run of a statically linked program" \
  "^qaudit run: $bin/fixture_static_sleeper is statically linked: no dynamic loader reads LD_PRELOAD for it" \
  "$qaudit" run --out "$work/x-%p.json" -- "$bin/fixture_static_sleeper"
grep -q ready "$work/out" && fail "the static program ran" || pass "the static program did not run"
# Set-user-ID to another user: exec runs it in secure mode, and the loader ignores LD_PRELOAD.
if [ "$(id -u)" = 0 ]; then
  cp /bin/echo "$work/suid-echo" && chown 65534 "$work/suid-echo" && chmod u+s "$work/suid-echo"
  if python3 -c 'import os,sys; sys.exit(0 if os.statvfs(sys.argv[1]).f_flag & os.ST_NOSUID else 1)' "$work"; then # nosuid
    "$qaudit" run --out "$work/nosuid-%p.json" -- "$work/suid-echo" ran >"$work/out" 2>"$work/err"
    ls "$work"/nosuid-*.json >/dev/null 2>&1 && pass "set-user-ID on a nosuid mount: run, and a dump" ||
      fail "set-user-ID on a nosuid mount: $(head -c 600 "$work/err")"
  else
    expect 2 "run of a set-user-ID program of another user" \
      "^qaudit run: $work/suid-echo is set-user-ID \(owner uid 65534\): exec runs it in secure mode, in which the loader ignores LD_PRELOAD" \
      "$qaudit" run --out "$work/x-%p.json" -- "$work/suid-echo" ran
    grep -q ran "$work/out" && fail "the set-user-ID program ran" || pass "the set-user-ID program did not run"
  fi
else
  fail "cannot test a set-user-ID program of another user: not root"
fi
# An i386 executable's header (ELF32, EM_386, no program headers): exec would hand it to sh.
python3 -c 'import struct,sys; sys.stdout.buffer.write(b"\x7fELF\x01\x01\x01" + bytes(9) + struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, 0x8048000, 0, 0, 0, 52, 32, 0, 40, 0, 0))' >"$work/i386"
chmod +x "$work/i386"
expect 2 "run of a program built for another machine" \
  "^qaudit run: $work/i386 is built for i386 and the preload for x86-64: the loader would skip the preload" \
  "$qaudit" run --out "$work/x-%p.json" -- "$work/i386"
"$qaudit" run --out "$work/ldso-%p.json" -- "$(readlink -f /lib64/ld-linux-x86-64.so.2)" "$bin/fixture_first_hour" 2>"$work/err"
grep -q "dump $work/ldso-[0-9]*.json (exit)" "$work/err" && pass "the loader run as a program is not refused: a dump" ||
  fail "ld.so PROGRAM: $(head -c 600 "$work/err")"

echo "--- misspelled options and commands: one line, the nearest, exit 2"
expect 2 "report --fromat" "unknown option --fromat \(did you mean --format\?\)$" "$qaudit" report "$dump" --fromat md
expect 2 "run --stakcs" "unknown option --stakcs \(did you mean --stacks\?\)$" "$qaudit" run --stakcs always -- true
expect 2 "diff --sortt" "unknown option --sortt \(did you mean --sort\?\)$" "$qaudit" diff "$dump" "$dump" --sortt bytes
expect 2 "layout --tpye" "unknown option --tpye \(did you mean --type\?\)$" "$qaudit" layout "$bin/ringkv" --tpye x
expect 2 "gate --basline" "unknown option --basline \(did you mean --baseline\?\)$" "$qaudit" gate --basline b.json "$bin/ringkv"
expect 2 "compare --dumpp" "unknown option --dumpp \(did you mean --dump\?\)$" "$qaudit" compare "$bin/ringkv" --dumpp x.json
expect 2 "classes --prbe" "unknown option --prbe \(did you mean --probe\?\)$" "$qaudit" classes --prbe 64
expect 2 "snapshot --timout" "unknown option --timout \(did you mean --timeout\?\)$" "$qaudit" snapshot --timout 3 1
expect 2 "snapshot without a pid" "^qaudit snapshot: expected one PID" "$qaudit" snapshot
expect 2 "an option far from any" "unknown option --zzzzzzzz \(qaudit report --help lists them\)$" \
  "$qaudit" report "$dump" --zzzzzzzz
expect 2 "a flag that takes no value" "^qaudit report: --no-symbols takes no value$" "$qaudit" report "$dump" --no-symbols=1
expect 2 "an option without its value" "^qaudit report: --format wants a value" "$qaudit" report "$dump" --format
expect 2 "qaudit reprot" "^qaudit: unknown command 'reprot' \(did you mean report\?\)$" "$qaudit" reprot "$dump"
expect 2 "qaudit dif" "^qaudit: unknown command 'dif' \(did you mean diff\?\)$" "$qaudit" dif a b
expect 2 "report without a dump" "^qaudit report: expected at least one DUMP" "$qaudit" report
expect 2 "diff with one side" "^qaudit diff: expected BASE and NEW" "$qaudit" diff "$dump"
expect 2 "layout BINARY TYPE, the type without --type" \
  "^qaudit layout: expected one BINARY, got 2 arguments \('$bin/ringkv', 'connection'\): a type is named with --type NAME or -C NAME" \
  "$qaudit" layout "$bin/ringkv" connection
"$qaudit" layout -C connection "$bin/ringkv" >"$work/pahole-C.txt" 2>&1 && grep -q "^struct connection {" "$work/pahole-C.txt" &&
  pass "layout -C NAME, as in pahole" || fail "layout -C connection: $(head -3 "$work/pahole-C.txt")"
expect 2 "layout -C of a misspelt type" \
  "^qaudit layout: no struct, class or union matches 'Conection' in $bin/ringkv \(did you mean connection\?\)$" \
  "$qaudit" layout -C Conection "$bin/ringkv"
expect 2 "layout -C in another case" "\(did you mean rxq\?\)$" "$qaudit" layout -C RXQ "$bin/ringkv"
expect 2 "layout -C of a type far from any" "^qaudit layout: no struct, class or union matches 'zzzzzzzz' in $bin/ringkv$" \
  "$qaudit" layout -C zzzzzzzz "$bin/ringkv"

echo "--- report takes a directory of dumps or a quoted glob, as diff does"
"$qaudit" report "$dump" >"$work/by-file.txt" 2>&1
"$qaudit" report "$work/dumps" >"$work/by-dir.txt" 2>&1 && cmp -s "$work/by-file.txt" "$work/by-dir.txt" &&
  pass "report DIR: the report of the dumps in it" || fail "report DIR: $(diff "$work/by-file.txt" "$work/by-dir.txt" | head -5)"
"$qaudit" report "$work/dumps/" >"$work/by-dir-slash.txt" 2>&1 && cmp -s "$work/by-file.txt" "$work/by-dir-slash.txt" &&
  pass "report DIR/: the same, its paths without a double slash" ||
  fail "report DIR/: $(diff "$work/by-file.txt" "$work/by-dir-slash.txt" | head -5)"
"$qaudit" report "$work/dumps/*.json" >"$work/by-glob.txt" 2>&1 && cmp -s "$work/by-file.txt" "$work/by-glob.txt" &&
  pass "report 'DIR/*.json': the report of the dumps it matches" || fail "report GLOB: $(head -3 "$work/by-glob.txt")"
mkdir "$work/no-dumps"
expect 2 "report an empty directory" "^qaudit report: $work/no-dumps: a directory without dumps \(files of format qaudit-alloc/1\)$" \
  "$qaudit" report "$work/no-dumps"
expect 2 "report a glob that matches nothing" "^qaudit report: $work/dumps/none-\*\.json: no dump matches$" \
  "$qaudit" report "$work/dumps/none-*.json"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
