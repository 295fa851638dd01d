# The two commands of the README. Both do all the set-up on a fresh Debian 12
# machine (packages, configure, build); `make test` then runs the whole suite.
BUILD ?= build
JOBS  ?= $(shell nproc)
SCENARIO ?= scenarios/quickstart.yaml

.PHONY: run test stress build deps configure bench anchor clean check-asan check-tsan package

run: build
	$(BUILD)/tools/ibfab run $(SCENARIO)

# The Release suite, then the sanitizer runs (check-asan, check-tsan).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) check-asan
	$(MAKE) check-tsan

# Sanitizer builds, each in its own directory (docs/ARCHITECTURE.md,
# "Sanitizers"); scripts/sanitizer_ctest.sh fails on any report of any
# process. check-asan: the whole suite under AddressSanitizer and
# UndefinedBehaviorSanitizer (no fuzzers: they run sanitized in BUILD),
# except the tests labelled "timing" and "package" (what is shipped is the
# Release build). check-tsan: the tests of the engine's
# thread and its clients (label "threaded") under ThreadSanitizer.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
SANITIZE_CMAKE = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

check-asan: deps
	@test -f $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) $(SANITIZE_CMAKE) -DIBFAB_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	scripts/sanitizer_ctest.sh $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE 'timing|package'

check-tsan: deps
	@test -f $(TSAN_BUILD)/CMakeCache.txt || cmake -S . -B $(TSAN_BUILD) $(SANITIZE_CMAKE) -DIBFAB_SANITIZE=thread
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target threaded_tests
	scripts/sanitizer_ctest.sh $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L threaded

# The engine's, the libraries' and the quick served tests 20 times in a row
# beside two CPU-bound processes (tests/stress.sh): no test may wait for a
# time. Not part of `make test`.
stress: build
	tests/stress.sh -b $(BUILD)

bench: build
	$(BUILD)/bench/ibfab_bench
	$(BUILD)/bench/ibfab_verbs_bench
	bench/rdmacm_joins.py $(BUILD)/tools/ibfab $(BUILD)/bench/rdmacm_join_load
	bench/sa_tables.py $(BUILD)/tools/ibfab
	bench/soak.py $(BUILD)/tools/ibfab $(BUILD)/tests/tools_real/mcast_churn $(BUILD)/bench/rdmacm_join_load
	bench/served_fairness.py $(BUILD)/tools/ibfab $(BUILD)/tests/tools_real/flood_client $(BUILD)/tests/tools_real/sa_latency

# The anchor the bring-up figures are compared with: OpenSM 3.3.23 over ibsim
# on this machine, now (docs/BENCHMARKS.md). About a minute; not part of
# `make test`.
ANCHOR_SPECS ?= fat-tree:2:36 fat-tree:3:24
ANCHOR_RUNS  ?= 3
anchor: build
	bench/anchor/opensm_ibsim.py --ibfab $(BUILD)/tools/ibfab --runs $(ANCHOR_RUNS) $(ANCHOR_SPECS)
	bench/anchor/opensm_ibsim.py --ibfab $(BUILD)/tools/ibfab --runs $(ANCHOR_RUNS) --fabric ibfab $(ANCHOR_SPECS)

# The Debian package, $(BUILD)/ibfab_VERSION_ARCH.deb (cmake/install.cmake):
# `apt-get install ./ibfab_*.deb` installs it.
package: build
	cd $(BUILD) && cpack -G DEB

build: configure
	cmake --build $(BUILD) -j $(JOBS)

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DIBFAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang

deps:
	@scripts/setup-deps.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
