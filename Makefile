# The two commands a newcomer runs: `make run` and `make test`.
# Everything else is a step of those, or a developer convenience.
#
#   make run     install what is missing, build, run the main job
#   make test    install, build, run every test (Release, then ASan+UBSan,
#                then the threaded layers under TSan), then check that an
#                outside project can use the install
#   make build   configure and build (Release) into build/
#   make bench   build and run the benchmarks
#   make format  reformat the sources with clang-format

JOBS ?= $(shell nproc)
BUILD ?= build
SAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# The layers whose threads ThreadSanitizer checks (those with tests so far).
TSAN_LAYERS := $(foreach l,core autograd nn parallel,$(if $(wildcard tests/$(l)/*_test.cpp),$(l)))
CMAKE_FLAGS ?=
# Paths relative to the checkout, so ccache hits across clones of the repo.
export CCACHE_BASEDIR ?= $(CURDIR)
GENERATOR := $(if $(shell command -v ninja),-G Ninja,)
LAUNCHER := $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache,)

.PHONY: all deps build run test test-release test-sanitize test-tsan test-install bench \
        format lint clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/tools/tandem/tandem demo

test: test-release test-sanitize test-tsan test-install lint

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(SAN_BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTANDEM_SANITIZE="address;undefined" \
	  -DTANDEM_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# Builds only the test binaries it runs, and runs each once (not per test
# through ctest): a TSan process is slow to start. Any report fails the run.
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTANDEM_SANITIZE=thread \
	  -DTANDEM_BUILD_BENCH=OFF -DTANDEM_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_LAYERS:%=%_tests)
	@for layer in $(TSAN_LAYERS); do \
	  echo "ThreadSanitizer: $${layer}_tests"; \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	    ./$(TSAN_BUILD)/tests/$${layer}_tests --gtest_brief=1 || exit 1; \
	done

test-install: build
	@bash scripts/check-install.sh $(BUILD)

lint:
	@bash tools/lint/check_file_sizes.sh
	@bash tools/lint/check_format.sh
	@bash tools/lint/check_headers_standalone.sh

bench: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	./$(BUILD)/bench/tandem_bench --benchmark_min_time=0.2

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD)
