#!/bin/sh
# test_commit_msg_hook: scripts/commit-msg takes a 72-character subject and refuses a 73-character
# one (comments and the body not counted), and scripts/install_hooks.sh installs it only where
# no commit-msg hook is. Usage: commit_msg_hook.sh SOURCE_DIR
top=${1:?usage: commit_msg_hook.sh SOURCE_DIR}
hook="$top/scripts/commit-msg"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
say() { echo "$1: $2"; [ "$1" = ok ] || failures=$((failures + 1)); }
subject72=$(printf 'cli: %067d' 0)
subject73="${subject72}x"
body=$(printf 'a body line longer than the subject may be, %080d' 0)

printf '%s\n\n%s\n' "$subject72" "$body" >"$work/m72"
if "$hook" "$work/m72" 2>"$work/err"; then say ok "a 72-character subject passes"
else say FAIL "a 72-character subject refused: $(cat "$work/err")"; fi

printf '%s\n\n%s\n' "$subject73" "$body" >"$work/m73"
if "$hook" "$work/m73" 2>"$work/err"; then say FAIL "a 73-character subject passed"
elif grep -q "73 characters, at most 72" "$work/err"; then say ok "a 73-character subject refused"
else say FAIL "a 73-character subject refused without saying why: $(cat "$work/err")"; fi

printf '# a comment line longer than seventy-two characters, as git writes them in the editor\n\n%s\n' \
    "$subject72" >"$work/mc"
if "$hook" "$work/mc" 2>"$work/err"; then say ok "comments and empty lines before the subject skipped"
else say FAIL "a comment counted as the subject: $(cat "$work/err")"; fi

subject_utf8=$(printf 'docs: %064d é' 0) # 72 characters, 73 bytes
printf '%s\n' "$subject_utf8" >"$work/mu"
if "$hook" "$work/mu" 2>"$work/err"; then say ok "characters counted, not bytes"
else say FAIL "a 72-character UTF-8 subject refused: $(cat "$work/err")"; fi

# install_hooks.sh in a scratch checkout (QAUDIT_NO_HOOKS, which make test may be run with, unset):
# installed once, a hook already there kept.
mkdir -p "$work/repo/scripts"
cp "$hook" "$top/scripts/install_hooks.sh" "$work/repo/scripts/"
git -C "$work/repo" init -q
installed=$(git -C "$work/repo" rev-parse --git-path hooks)
case $installed in /*) ;; *) installed="$work/repo/$installed" ;; esac
rm -f "$installed/commit-msg"
env -u QAUDIT_NO_HOOKS "$work/repo/scripts/install_hooks.sh" >/dev/null
if cmp -s "$hook" "$installed/commit-msg" && [ -x "$installed/commit-msg" ]; then
    say ok "installed where none was"
else say FAIL "not installed into $installed"; fi
echo '#!/bin/sh' >"$installed/commit-msg"
env -u QAUDIT_NO_HOOKS "$work/repo/scripts/install_hooks.sh" >/dev/null
if [ "$(cat "$installed/commit-msg")" = '#!/bin/sh' ]; then say ok "a hook already there kept"
else say FAIL "a hook already there was replaced"; fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "0 failure(s)"
