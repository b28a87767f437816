# Makefile - the two entry points of the README (make demo, make test) and a few helpers.
PRESET ?= release
BUILD  := build/$(PRESET)
BIN    := $(BUILD)/src/cli/llmco2

.PHONY: setup configure build demo test bench clean

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake --preset $(PRESET) >/dev/null

configure: $(BUILD)/build.ninja

build: setup configure
	cmake --build --preset $(PRESET)

demo: build
	@echo "== llmco2 gpus"; $(BIN) gpus
	@echo; echo "== llmco2 graph --model llama-3.1-8b --gpu h100-sxm --batch 1 --prompt 1024 --gen 128 --format summary"
	@$(BIN) graph --model llama-3.1-8b --gpu h100-sxm --batch 1 --prompt 1024 --gen 128 --format summary

test: build
	ctest --preset $(PRESET) -j2

bench: build
	$(BUILD)/bench/llmco2_bench --benchmark_min_time=0.2

clean:
	rm -rf build
