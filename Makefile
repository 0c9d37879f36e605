# The project's entry points. Every target installs what it needs first (scripts/install-deps.sh is idempotent).
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
FUZZ_DIR ?= build-fuzz
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build build-all package test unit-test integration-test asan-test fuzz demo bench clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGCM_WERROR=ON $(CMAKE_FLAGS)

# What the demo and a deployment need: gcm (health_checks is the same program), its gRPC module and the fake NVML.
# The tests, benchmarks and device tests are built by the targets that run them (build-all).
build: deps $(BUILD_DIR)/build.ninja
	ninja -C $(BUILD_DIR) -j $(JOBS) gcm fake_nvml fake_amdsmi

build-all: deps $(BUILD_DIR)/build.ninja
	ninja -C $(BUILD_DIR) -j $(JOBS)

# The Debian package (CPack): build/gcm_<version>_<arch>.deb.
package: build-all
	cd $(BUILD_DIR) && cpack -G DEB

# Every test: unit, golden and integration (real Prometheus, real OTLP receiver), then the unit tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer (clang 14).
test: build-all
	./scripts/run-tests.sh $(BUILD_DIR) $(ASAN_DIR)

unit-test: build-all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L unit -j $(JOBS)

integration-test: build-all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L integration

asan-test: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_C_COMPILER=clang-14 -DGCM_SANITIZE=ON -DGCM_BUILD_BENCH=OFF
	ninja -C $(ASAN_DIR) -j $(JOBS) unit_tests fuzz_targets
	ctest --test-dir $(ASAN_DIR) --output-on-failure -L unit -j $(JOBS)

# libFuzzer targets; FUZZ_SECONDS per target (default 60).
fuzz: deps
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_C_COMPILER=clang-14 -DGCM_FUZZ=ON -DGCM_BUILD_TESTS=OFF -DGCM_BUILD_BENCH=OFF
	ninja -C $(FUZZ_DIR) -j $(JOBS)
	./scripts/run-fuzzers.sh $(FUZZ_DIR) $${FUZZ_SECONDS:-60}

demo: build
	./scripts/demo.sh $(BUILD_DIR)

bench: build-all
	./scripts/bench.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
