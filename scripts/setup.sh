#!/usr/bin/env bash
# scripts/setup.sh - install the Debian 12 packages llmco2 needs (see docs/dependencies.md): `setup.sh demo` those
# of the CLI alone (make demo), `setup.sh` everything to build, test, train, serve and fuzz (make test, make setup).
# Installs only what is missing; uses sudo when not root. Safe to run repeatedly.
set -euo pipefail

# The CLI (llmco2 predict, compare, trace, ...): a C++ toolchain, the header libraries it compiles against, and
# gnuplot for the plots of --plot.
demo_packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev libeigen3-dev gnuplot-nox
)
packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox
  libtorch-dev libopenblas0-openmp libxgboost-dev
  clang libclang-rt-14-dev clang-format-14 clang-tidy-14
  pybind11-dev python3-dev python3-numpy python3-pandas python3-pytest python3-dask python3-distributed
  libcpp-httplib-dev python3-selenium chromium chromium-driver
)
# clang and libclang-rt-14-dev (libFuzzer, ASan and UBSan runtimes): the fuzz harnesses (make fuzz, make test);
# clang-format-14 and clang-tidy-14: the layout check (make format-check, in make test) and make tidy.
# pybind11-dev, python3-dev: the Python bindings (import llmco2); python3-numpy, -pandas, -pytest: their tests;
# python3-dask, -distributed: the distributed scoring recipe and its test (docs/scaling.md).
# libcpp-httplib-dev: the HTTP server of `llmco2 serve` and its load benchmark; python3-pytest, python3-selenium,
# chromium and chromium-driver: the server's HTTP tests and the web calculator's browser test (tests/server).
# Never libopenblas-dev/libopenblas0: their pthread BLAS wins the alternatives and fights libtorch's OpenMP.

case "${1:-all}" in
  demo) packages=("${demo_packages[@]}") ;;
  all) ;;
  *) echo "setup.sh: expected 'demo' or nothing (all packages), got '$1'" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
