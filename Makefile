# The two commands of the README. Both do all the set-up on a fresh Debian 12
# machine (packages, configure, build); `make test` then runs the whole suite.
BUILD ?= build
JOBS  ?= $(shell nproc)
SCENARIO ?= scenarios/quickstart.yaml

.PHONY: run test stress build deps configure bench anchor clean

run: build
	$(BUILD)/tools/ibfab run $(SCENARIO)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

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

build: configure
	cmake --build $(BUILD) -j $(JOBS)

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DIBFAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang

deps:
	@scripts/setup-deps.sh

clean:
	rm -rf $(BUILD)
