#!/bin/sh
# Installs scripts/commit-msg as the repository's commit-msg hook, unless one is there already
# (a hook of the user's own is kept) or this is not a git checkout. QAUDIT_NO_HOOKS=1 skips it.
# Called by `make` (the deps target).
[ -n "${QAUDIT_NO_HOOKS:-}" ] && exit 0
cd "$(dirname "$0")/.." || exit 0
hooks=$(git rev-parse --git-path hooks 2>/dev/null) || exit 0
[ -e "$hooks/commit-msg" ] && exit 0
mkdir -p "$hooks" && cp scripts/commit-msg "$hooks/commit-msg" && chmod +x "$hooks/commit-msg" &&
    echo "installed $hooks/commit-msg (subjects of at most 72 characters)"
