#!/bin/sh
# test_unique_basenames: no two source files (.c, .h, .cpp) of the repository share a basename,
# so that a name in a message, a stack or a conversation points at one file (issue 40). Each
# shared name is said on one line with its files. Usage: unique_basenames.sh SOURCE_DIR
top=${1:?usage: unique_basenames.sh SOURCE_DIR}
cd "$top" || exit 2
# The repository's files: git's list in a checkout, else every file but build trees (a directory
# holding a CMakeCache.txt) and .git.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list=$(git ls-files -- '*.c' '*.h' '*.cpp')
else
    builds=$(find . -name .git -prune -o -name CMakeCache.txt -print | sed 's|^\./||; s|/CMakeCache.txt$|/|')
    list=$(find . -name .git -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) \
        -print | sed 's|^\./||' | awk -v builds="$builds" 'BEGIN { n = split(builds, b, "\n") }
        { for (i = 1; i <= n; i++) if (b[i] != "" && index($0, b[i]) == 1) next; print }')
fi
shared=$(printf '%s\n' "$list" | awk -F/ 'NF { n[$NF]++; files[$NF] = files[$NF] " " $0 }
    END { for (b in n) if (n[b] > 1) print b ":" files[b] }' | sort)
if [ -n "$shared" ]; then
    printf '%s\n' "$shared" | sed 's/^/FAIL: shared basename /'
    echo "$(printf '%s\n' "$shared" | wc -l) basenames shared by more than one source file"
    exit 1
fi
echo "ok: $(printf '%s\n' "$list" | grep -c .) source files, every basename once"
