#!/usr/bin/env bash
# Builds C++ projects nobody here wrote, from source directories you fetched (nothing of theirs is
# kept in this repository), in every debug format the layout reader reads: g++ 12 and clang++ 14,
# each with DWARF 4, DWARF 5, DWARF 5 type units (-fdebug-types-section) and split DWARF 5
# (-gsplit-dwarf), -O2, C++17 (leveldb needs it). What is built: leveldb's shared library,
# googletest's gtest and gmock shared libraries, fmt's format-test (fmt, its bundled gtest, the
# test's templates).
# bench/cxx_agreement.py and bench/cxx_bench.sh read the binaries; this prints their paths.
# usage: bench/cxx_projects.sh SRC OUT   (SRC holds leveldb/, googletest/ and fmt/; a project
#        that is absent is left out; OUT keeps the builds: a build already there is reused)
set -euo pipefail
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
jobs=${JOBS:-2}

flavours=(dwarf4 dwarf5 types split)
flags_of() {
  case $1 in
  dwarf4) echo "-gdwarf-4" ;;
  dwarf5) echo "-gdwarf-5" ;;
  types) echo "-gdwarf-5 -fdebug-types-section" ;;
  split) echo "-gdwarf-5 -gsplit-dwarf" ;;
  esac
}

# build PROJECT COMPILER FLAVOUR TARGET... -> the build directory (cmake, -O2 plus the flavour)
build() {
  local project=$1 cxx=$2 flavour=$3
  shift 3
  local cc=gcc
  [ "$cxx" = clang++ ] && cc=clang
  local dir="$out/$project-${cxx%++}-$flavour"
  if [ ! -f "$dir/.built" ]; then
    rm -rf "$dir"
    cmake -S "$src/$project" -B "$dir" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_FLAGS="-O2 $(flags_of "$flavour")" \
      -DCMAKE_C_FLAGS="-O2 $(flags_of "$flavour")" -DBUILD_SHARED_LIBS=ON \
      -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF -DFMT_DOC=OFF -DFMT_TEST=ON \
      >"$dir.log" 2>&1
    cmake --build "$dir" -j "$jobs" --target "$@" >>"$dir.log" 2>&1 ||
      { echo "build failed: $dir.log" >&2; return 1; }
    touch "$dir/.built"
  fi
  echo "$dir"
}

for cxx in g++ clang++; do
  for flavour in "${flavours[@]}"; do
    if [ -d "$src/leveldb" ]; then
      dir=$(build leveldb "$cxx" "$flavour" leveldb)
      ls "$dir"/libleveldb.so.*.*
    fi
    if [ -d "$src/googletest" ]; then
      dir=$(build googletest "$cxx" "$flavour" gtest gmock)
      ls "$dir"/lib/libgtest.so.* "$dir"/lib/libgmock.so.* | grep -v '\.so\.[0-9]*$' || true
    fi
    if [ -d "$src/fmt" ]; then
      dir=$(build fmt "$cxx" "$flavour" format-test)
      echo "$dir/bin/format-test"
    fi
  done
done
