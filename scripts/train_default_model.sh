#!/usr/bin/env bash
# scripts/train_default_model.sh - trains the bundled predictors (data/predictors/*.model) in one go:
# 50,000 configurations drawn by focused sampling (every bundled architecture and GPU, Azure trace requests, batch
# 1-4, 1-8 GPUs), labelled by the calibrated simulator (mean of 5 noisy repeats), plus every imported public
# measurement in data/measured. Run it with `make default-model`.
set -euo pipefail
BIN=${BIN:-build/release/src/cli/llmco2}
WORK=${WORK:-build/default-model}
COUNT=${COUNT:-50000}
mkdir -p "$WORK" data/predictors
gpus=$(ls data/gpus/*.json | xargs -n1 basename | sed 's/\.json$//' | paste -sd, -)
measured=$(ls data/measured/*.csv | grep -v -e '\.rejects\.csv$' -e 'model_map\.csv$' | paste -sd, -)
"$BIN" sample --count "$COUNT" --models all --gpus "$gpus" --max-gpus 8 --int8-share 0.1 --seed 1 --out "$WORK/plan.csv"
"$BIN" simulate --plan "$WORK/plan.csv" --repeats 5 --seed 1 --out "$WORK/sim.csv"
for predictor in llmco2 nnlqp deepen llmcarbon; do
  # The bundled DeepEn has smaller forests than the evaluated one (100 trees of depth 12 are ~25 MB): 30 x depth 10.
  "$BIN" train --predictor "$predictor" --data "$WORK/sim.csv,$measured" --seed 1 --threads 2 --trees 30 --depth 10 \
    --out "data/predictors/$predictor.model"
done
