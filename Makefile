# Makefile - the two entry points of the README (make demo, make test) and a few helpers.
PRESET ?= release
BUILD  := build/$(PRESET)
BIN    := $(BUILD)/src/cli/llmco2

.PHONY: setup setup-demo configure build build-full demo test test-fast tsan odr-check format format-check tidy bench bench-server clean default-model eval validate fuzz fuzz-build fuzz-ci

# What each part needs (CMakeLists.txt options): the demo builds the CLI alone; the tests everything. Expanded when
# used (=, not :=), so that WERROR and UNITY below, or on the command line, are set by then.
DEMO_OPTIONS = -DLLMCO2_BUILD_TESTS=OFF -DLLMCO2_BUILD_BENCH=OFF -DLLMCO2_BUILD_PYTHON=OFF \
                -DLLMCO2_WITH_TRAINING=OFF -DLLMCO2_WITH_SERVER=OFF
FULL_OPTIONS = -DLLMCO2_BUILD_TESTS=ON -DLLMCO2_BUILD_BENCH=ON -DLLMCO2_BUILD_PYTHON=ON \
                -DLLMCO2_WITH_TRAINING=ON -DLLMCO2_WITH_SERVER=ON -DLLMCO2_WERROR=$(WERROR) -DCMAKE_UNITY_BUILD=$(UNITY)
# The tests' build treats warnings in llmco2's own code as errors (CI runs make test); `make test WERROR=OFF` for a
# compiler newer than Debian 12's gcc 12, whose new warnings have not been looked at yet.
WERROR ?= ON
# The tests' build (and the fuzz and tsan builds, CMakePresets.json) are unity builds: each target's sources compiled
# 8 to a translation unit, so the heavy headers (fmt, nlohmann/json, CLI11, gtest) are parsed and their templates
# instantiated once per 8 files instead of once per file (build times: docs/performance.md).
# A plain `cmake --preset release` (the edit loop, and make demo) is not a unity build, so each file still has to
# compile alone; `make test UNITY=OFF` builds the tests without it.
UNITY ?= ON

# Debian packages: setup installs all of them (build, test, train, serve, fuzz), setup-demo those of the CLI.
setup:
	@bash scripts/setup.sh
setup-demo:
	@bash scripts/setup.sh demo

# build only builds (no package is installed): a first configure takes every part.
$(BUILD)/build.ninja:
	cmake --preset $(PRESET) >/dev/null

configure: $(BUILD)/build.ninja

build: configure
	cmake --build --preset $(PRESET)

# The demo installs and builds the CLI alone (a build folder configured before keeps its parts).
demo: setup-demo
	@test -f $(BUILD)/CMakeCache.txt || cmake --preset $(PRESET) $(DEMO_OPTIONS) >/dev/null
	cmake --build --preset $(PRESET) --target llmco2
	@echo "== llmco2 predict --model llama-3.1-8b --gpu h100-sxm --batch 1 --prompt 1024 --gen 128 --region USA"
	@$(BIN) predict --model llama-3.1-8b --gpu h100-sxm --batch 1 --prompt 1024 --gen 128 --region USA
	@echo; echo "== llmco2 compare --model llama-3.1-8b --batch 1 --prompt 1024 --gen 128 --region USA --slo-ms 2000 --plot build/demo-compare"
	@$(BIN) compare --model llama-3.1-8b --batch 1 --prompt 1024 --gen 128 --region USA --slo-ms 2000 --plot build/demo-compare

# Every part configured ON and built (what the tests need; a build folder made by the demo gains the rest).
build-full: setup
	cmake --preset $(PRESET) $(FULL_OPTIONS) >/dev/null
	cmake --build --preset $(PRESET)

test: build-full
	$(MAKE) format-check
	ctest --preset $(PRESET) -j2
	$(MAKE) odr-check
	$(MAKE) fuzz-ci
	$(MAKE) tsan

# The layout (.clang-format, clang-format 14): `make format` rewrites llmco2's C++ files in place; `make format-check`
# (make test) fails naming each file that differs (~10 s). `make tidy` runs clang-tidy 14 (.clang-tidy) on FILES, by
# default the C++ files changed since main, against the release build's compile commands (~20 s a file: not in CI).
CXX_FILES = $(shell git ls-files 'src/*.h' 'src/*.cc' 'include/*.h' 'tests/*.h' 'tests/*.cc' 'bench/*.h' 'bench/*.cc' \
                                 'fuzz/*.h' 'fuzz/*.cc')
format:
	clang-format-14 -i $(CXX_FILES)
format-check:
	@clang-format-14 --dry-run --Werror $(CXX_FILES) && echo "format-check: $(words $(CXX_FILES)) files as .clang-format lays them out"
# (training/gnn_trainer.cc is left out: clang 14 cannot parse Debian's libtorch headers.)
FILES ?= $(filter-out %gnn_trainer.cc,$(shell git diff --name-only main -- 'src/*.cc' 'tests/*.cc' 'bench/*.cc'))
tidy: configure
	@test -n "$(FILES)" || { echo "tidy: no changed .cc file (name some: make tidy FILES=...)"; exit 0; }
	clang-tidy-14 -p $(BUILD) --quiet --extra-arg=-Wno-ignored-optimization-argument $(FILES)

# The One Definition Rule across the library (docs/reliability.md): every translation unit of src/llmco2 compiled
# at -O0 to GCC's intermediate form (build/odr) and linked whole into one program with -flto -Werror=odr, which
# fails on a type defined twice with different layouts (~2 min on 2 cores). A unity build like the others: two such
# definitions in one unit are a redefinition the compiler refuses, in two units a link the rule fails. Then its
# self-test: a probe with one type in two layouts (two units) must fail to link, naming the rule.
ODR_OPTIONS := -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O0 -DLLMCO2_ODR_CHECK=ON -DCMAKE_UNITY_BUILD=ON -DLLMCO2_BUILD_TESTS=OFF \
               -DLLMCO2_BUILD_BENCH=OFF -DLLMCO2_BUILD_PYTHON=OFF -DLLMCO2_WITH_TRAINING=OFF -DLLMCO2_WITH_SERVER=OFF
odr-check: setup
	cmake -S . -B build/odr -G Ninja $(ODR_OPTIONS) >/dev/null
	cmake --build build/odr --target llmco2_odr_check
	@if cmake --build build/odr --target llmco2_odr_probe >build/odr/probe.log 2>&1; then \
	  echo "odr-check: the self-test's probe linked: the check would miss a type defined twice"; exit 1; \
	elif grep -q "One Definition Rule" build/odr/probe.log; then \
	  echo "odr-check: no type of src/llmco2 is defined twice with different layouts; the self-test's probe fails as it must"; \
	else cat build/odr/probe.log; echo "odr-check: the self-test's probe failed for another reason"; exit 1; fi

# The edit loop: the tests labelled fast (unit, CLI, Python, docs links; ~17 s on 2 cores). The other labels: slow
# (the full kernel fit, the kill test), server, browser, fuzz (the corpus replays).
test-fast: build-full
	ctest --preset $(PRESET) -j2 -L fast

# ThreadSanitizer over the threaded code (docs/reliability.md): concurrent Session calls and predict_many, the trace
# stream's workers, the server's bounded pool, and the real server (its worker pool under test_http.py's concurrent
# clients). A build of its own (build/tsan, gcc -O1 -fsanitize=thread: the libraries, the CLI and server, and only the
# threaded tests); make test runs it last.
TSAN_UNIT_TESTS := ApiSession.*:TraceStream.*:LogScanner.*
tsan: setup
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan
	TSAN_OPTIONS=halt_on_error=1 TEST_TMPDIR=$(CURDIR)/build/tsan build/tsan/tests/llmco2_threaded_tests --gtest_filter='$(TSAN_UNIT_TESTS)'
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/llmco2_server_tests
	TSAN_OPTIONS=halt_on_error=1 LLMCO2_BIN=build/tsan/src/cli/llmco2 /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/server/test_http.py tests/server/test_http_hardening.py

# Fuzzing (docs/reliability.md): the libFuzzer harnesses of fuzz/ built with clang, ASan and UBSan in build/fuzz.
# make fuzz runs each for FUZZ_SECONDS, one at a time; make fuzz-ci (part of make test) replays each seed corpus.
FUZZ_SECONDS ?= 600
fuzz-build: setup
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz

fuzz: fuzz-build
	bash scripts/fuzz.sh run $(FUZZ_SECONDS)

fuzz-ci: fuzz-build
	bash scripts/fuzz.sh ci

# The bundled predictors (data/predictors): focused-sampled simulations + the public measurements.
default-model: build
	bash scripts/train_default_model.sh

# The predictors' accuracy report (docs/predictor-accuracy.md): every predictor on both test sets.
eval: build
	$(BIN) eval --train-count 20000 --test-count 5000

# Held-out validation on every public source (docs/accuracy.md) and the evidence data the intervals come from.
validate: build
	$(BIN) validate

bench: build
	$(BUILD)/bench/llmco2_bench --benchmark_min_time=0.2

# The HTTP server under load (docs/performance.md): 100,000 predict requests from 2 keep-alive clients on 127.0.0.1.
bench-server: build
	$(BUILD)/bench/llmco2_server_load --bin $(BIN) --requests 100000 --clients 2 --server-threads 2

clean:
	rm -rf build
