#!/usr/bin/env bash
# Rebuilds the linked seeds of probe/fuzz/corpus: a two-struct program without libc, linked
# statically, with only the sections the layout reader reads, so each seed stays under 2.5 KB
# (run.sh caps inputs at 8 KB). DWARF 5 and DWARF 4 type units from gcc, DWARF 5 from clang.
# tiny-dwarf5.elf (an object file) and tiny-types4.elf (an object file with COMDAT type units,
# which the reader refuses) were made by hand earlier. usage: make_seeds.sh
set -euo pipefail
corpus=$(cd "$(dirname "$0")" && pwd)/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/tiny.c" <<'C'
struct pair { char tag; long value; unsigned bits : 3; };
union u { int i; double d; };
struct pair p;
union u uu;
void _start(void) {}
C
seed() { # NAME COMPILER FLAGS...
  local name=$1 cc=$2
  shift 2
  "$cc" "$@" -O0 -nostdlib -static -fno-asynchronous-unwind-tables -Wl,--build-id=none \
    -Wl,-z,norelro -Wl,-z,noseparate-code -o "$work/$name" "$work/tiny.c"
  objcopy -R .comment -R .note.gnu.property -R .eh_frame -R .debug_line -R .debug_aranges \
    -R .debug_line_str -R .symtab -R .strtab "$work/$name" "$corpus/$name.elf"
}
seed linked-gcc-dwarf5 gcc -gdwarf-5
seed linked-gcc-types4 gcc -gdwarf-4 -fdebug-types-section
seed linked-gcc-types5 gcc -gdwarf-5 -fdebug-types-section
seed linked-clang-dwarf5 clang -gdwarf-5
ls -l "$corpus"
