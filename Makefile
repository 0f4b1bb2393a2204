# The two commands a newcomer runs: `make run` and `make test`.
# Everything else is a step of those, or a developer convenience.
#
#   make run     install what is missing, build, run the main job: train
#                the MLP on Fashion-MNIST (tandem train)
#   make test    install, build, run every test (Release, then ASan+UBSan,
#                then the threaded layers under TSan), check that an outside
#                project can use the install, run each fuzz target briefly
#   make build   configure and build (Release) into build/
#   make bench   build and run the benchmarks
#   make format  reformat the sources with clang-format

SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
SAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
# Seconds each fuzz target runs in `make test` (run longer by hand).
FUZZ_SECONDS ?= 30
# The layers whose threads ThreadSanitizer checks (those with tests so far);
# the distributed layer's tests run under mpiexec as well.
TSAN_LAYERS := $(foreach l,core autograd nn parallel data ops optim,$(if $(wildcard tests/$(l)/*_test.cpp),$(l)))
TSAN_RUN_OPTIONS := halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan_suppressions.txt
# The file readers with a libFuzzer target (fuzz/<name>_fuzz.cpp).
FUZZ_TARGETS := $(patsubst fuzz/%_fuzz.cpp,%,$(wildcard fuzz/*_fuzz.cpp))
CMAKE_FLAGS ?=
# Paths relative to the checkout, so ccache hits across clones of the repo:
# CI builds a fresh clone in another folder. The -g builds (sanitizers, fuzz)
# would otherwise hash the build folder's absolute path and never hit; their
# cached debug info then names the first clone's paths. Four build trees with
# debug info outgrow ccache's default 5 GB.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
export CCACHE_MAXSIZE ?= 24G
GENERATOR := $(if $(shell command -v ninja),-G Ninja,)
LAUNCHER := $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache,)

.PHONY: all deps build run test test-release test-sanitize test-tsan test-install \
        test-fuzz bench format lint clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/tools/tandem/tandem train

test: test-release test-sanitize test-tsan test-install test-fuzz lint

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(SAN_BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTANDEM_SANITIZE="address;undefined" -DTANDEM_CUDA=OFF \
	  -DTANDEM_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# Builds only the test binaries it runs, and runs each once (not per test
# through ctest): a TSan process is slow to start. Any report fails the run.
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTANDEM_SANITIZE=thread -DTANDEM_CUDA=OFF \
	  -DTANDEM_BUILD_BENCH=OFF -DTANDEM_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_LAYERS:%=%_tests) distributed_tests
	@for layer in $(TSAN_LAYERS); do \
	  echo "ThreadSanitizer: $${layer}_tests"; \
	  TSAN_OPTIONS="$(TSAN_RUN_OPTIONS)" ./$(TSAN_BUILD)/tests/$${layer}_tests --gtest_brief=1 || exit 1; \
	done
	@echo "ThreadSanitizer: distributed_tests under mpiexec -np 2"
	@TSAN_OPTIONS="$(TSAN_RUN_OPTIONS)" mpiexec -np 2 --allow-run-as-root --oversubscribe \
	  ./$(TSAN_BUILD)/tests/distributed_tests --gtest_brief=1

test-install: build
	@bash scripts/check-install.sh $(BUILD)

# Each target starts from its committed seeds (fuzz/corpus/<name>/) plus
# what earlier runs found (kept in the build folder). Any crash, leak or
# sanitizer report fails the run and leaves the input in $(FUZZ_BUILD).
test-fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_SANITIZE="address;undefined" -DTANDEM_CUDA=OFF \
	  -DTANDEM_BUILD_FUZZERS=ON -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_BENCH=OFF \
	  -DTANDEM_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS:%=fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  echo "libFuzzer: fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  ./$(FUZZ_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t 2>&1 \
	    | grep -E "^(stat::number_of_executed_units|==.*ERROR|SUMMARY)" ; \
	  test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

lint:
	@python3 tools/lint/check_layers.py
	@bash tools/lint/check_file_sizes.sh
	@bash tools/lint/check_format.sh
	@bash tools/lint/check_headers_standalone.sh

bench: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	./$(BUILD)/bench/tandem_bench --benchmark_min_time=0.2
