# Thin wrapper around CMake: `make`, `make test`, `make demo`, `make asan`. See README.md.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
# CMake's own makefiles run under this one: without this each prints every directory it enters.
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build test demo asan bench fuzz mutants mutants-ci clean format

all: build

# The commit-msg hook (subjects of at most 72 characters) where the checkout has none; then the
# packages.
deps:
	@scripts/install_hooks.sh
	@scripts/deps.sh

# Configure and build print one line each (scripts/quiet.sh; VERBOSE=1 for everything), so that
# make test and make demo end on their verdict.
$(BUILD)/CMakeCache.txt: | deps
	@scripts/quiet.sh $(BUILD)/configure.log configure cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	@scripts/quiet.sh $(BUILD)/build.log build cmake --build $(BUILD) -j $(JOBS)

# ctest-junit.xml: what tests/no_skips.sh reads to fail CI on a skipped test. ctest_clean.sh
# fails the run when a test left a process running.
test: build
	tests/ctest_clean.sh $(BUILD) --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml

# The audit demo (scripts/demo.sh): run, snapshot, report, HTML, gate and compare on ringkv.
demo: build
	scripts/demo.sh

bench: build
	$(BUILD)/bin/queue_bench

asan: deps
	@scripts/quiet.sh $(ASAN_BUILD)/configure.log configure cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DQAUDIT_SANITIZE=ON
	@scripts/quiet.sh $(ASAN_BUILD)/build.log build cmake --build $(ASAN_BUILD) -j $(JOBS)
	tests/ctest_clean.sh $(ASAN_BUILD) --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml

FUZZ_SECONDS ?= 60
fuzz: deps
	server/fuzz/run.sh $(FUZZ_SECONDS)
	probe/fuzz/run.sh $(FUZZ_SECONDS)
	reports/fuzz/run.sh $(FUZZ_SECONDS)

# Planted faults the tests must catch (tests/mutants/list.txt), each built and tested in a scratch
# copy of the tree: the whole list before a release, the sample marked `ci yes` in .ci/run.
mutants: deps
	tests/mutants/run.py --jobs $(JOBS)

mutants-ci: deps
	tests/mutants/run.py --ci --jobs $(JOBS)

format:
	git ls-files '*.c' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
