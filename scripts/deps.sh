#!/usr/bin/env bash
# Installs the Debian packages qaudit needs, when they are missing. As root it runs apt-get;
# otherwise it prints the exact command to run and exits 2.
# usage: deps.sh [bench]   (bench adds what bench/ compares against)
set -euo pipefail

packages=(
  build-essential cmake pkg-config # the build
  libcmocka-dev                    # unit tests under ctest
  liburing-dev libxxhash-dev       # ringkv
  libunwind-dev libjansson-dev g++ # the interposer (stacks) and the tools that read JSON
  libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4 # other allocators: forwarding, classes
  libdw-dev pahole gdb             # the layout reader; pahole to compare it with; gdb-add-index
  libiberty-dev                    # demangling C++ names in reports
  redis-tools valgrind             # ringkv's integration and leak tests
  redis-server                     # test_foreign: the preload in a server nobody here wrote
  clang libclang-rt-14-dev         # libFuzzer for the parser fuzzer
  python3-jsonschema               # the report tests check JSON against docs/report-schema.json
  libstdc++6-12-dbg                # test_layout_cxx: libstdc++'s own iostreams (virtual bases),
                                   # and the classes C++ binaries only declare (layout)
  libfmt-dev libspdlog-dev nlohmann-json3-dev libboost-dev # test_layout_cxx_programs: C++
                                   # libraries' headers as their users use them
  libc6-dbg                        # test_gate, test_layout_text, test_layout_corrupt: glibc's DWARF
  procps git wget                  # pgrep in the report tests; git and wget, programs test_foreign
                                   # runs
  libprotobuf-c-dev protobuf-c-compiler zlib1g-dev # report --format pprof: profile.proto, gzip
  golang-go                        # test_pprof reads the pprof export with `go tool pprof`
  chromium                         # test_html_chromium loads the HTML report; make demo's screenshots
  nginx postgresql-15 memcached nodejs curl # test_servers: Debian's servers as they really run
  php-cli                          # e2e_php: PHP's values under qaudit run (USE_ZEND_ALLOC=0)
  rustc                            # test_layout_rust, e2e_rust: Rust's layouts and allocations
  heaptrack                        # test_temporaries: its count of temporary allocations
  libmicrohttpd-dev                # qaudit serve's HTTP side
  prometheus                       # test_serve_prometheus: the engine that scrapes qaudit serve
)
if [ "${1:-}" = bench ]; then
  packages+=(time python3.11-dbg valgrind-dbg) # bench/layout_bench.sh: large DWARF
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "qaudit: missing packages; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 2
fi
echo "qaudit: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
