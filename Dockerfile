# Dockerfile - `llmco2 serve` (the HTTP API and the web calculator, docs/api.md) in a Debian 12 container, built
# from this repository. Nothing is downloaded at run time: the image holds the two programs and data/ (catalogs,
# simulator parameters, predictors), and the server reads nothing else.
#
#   docker build -t llmco2 .
#   docker run --rm -p 8080:8080 llmco2            # then http://localhost:8080/
#
# Build stage: the packages of `make demo` (scripts/setup.sh), the CLI and the server only (no tests, training,
# benchmarks or Python: docs/dependencies.md).
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config nlohmann-json3-dev \
      libcli11-dev libfmt-dev libeigen3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN rm -rf build \
 && cmake --preset release -DLLMCO2_BUILD_TESTS=OFF -DLLMCO2_BUILD_BENCH=OFF -DLLMCO2_BUILD_PYTHON=OFF \
      -DLLMCO2_WITH_TRAINING=OFF -DLLMCO2_WITH_SERVER=ON \
 && cmake --build --preset release --target llmco2 llmco2-serve

# Run stage: `llmco2` is static; `llmco2-serve`, which `llmco2 serve` execs from beside it, needs only libc and
# libstdc++, which debian:12-slim has.
FROM debian:12-slim
RUN useradd --system --no-create-home llmco2
COPY --from=build /src/build/release/src/cli/llmco2 /src/build/release/src/cli/llmco2-serve /opt/llmco2/bin/
COPY --from=build /src/data /opt/llmco2/data
ENV LLMCO2_DATA_DIR=/opt/llmco2/data
USER llmco2
EXPOSE 8080
# SIGTERM (docker stop) lets the requests in progress finish, then the server exits 0.
ENTRYPOINT ["/opt/llmco2/bin/llmco2", "serve", "--host", "0.0.0.0", "--port", "8080"]
