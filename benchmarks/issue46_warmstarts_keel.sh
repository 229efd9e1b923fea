#!/usr/bin/env bash
# Issue 46, item 4: the warm starts learned from the shipped meta-data keel-autosklearn, in
# real 60 s runs of smbo + rf on the 10 KEEL datasets of keel-mosaic10, each leaving the
# task's own dataset out of what it learns from:
#   knd with hand-crafted meta-features (the base)  vs  knd with Metabu's (its map fitted
#     without the task's dataset: "{dataset}", each cell's own)
#   Auto-sklearn 2.0's portfolio built on keel-autosklearn  vs  the one built on
#     oboe-autosklearn (the default recipe's: other datasets, OpenML's)
# (knd with Dida and the rest are in benchmarks/issue46_learned_keel.sh, same suite, budget
# and seeds: merge the two with benchmarks/merge_results.py to rank them together.)
# Two cells at a time, one core each, resumable. Cost: 10 tasks x 4 systems x ~63 s = ~21 min
# a seed at two cells at a time; SEEDS (default 1: seed 0) seeds. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue46_warmstarts_keel.sh > log 2>&1 &
# then `automl compare ablations/issue46-warmstarts-keel-60s --failed last`.
set -euo pipefail
cd "$(dirname "$0")/.."
metabu='{name: metabu, params: {metadata: keel-autosklearn, exclude: ["{dataset}"]}}'
metabu_source='{metadata: keel-autosklearn, exclude: ["{dataset}"]}'
exec .venv/bin/automl ablate benchmarks/issue46_warmstarts.yaml --suite keel-mosaic10 \
  --seeds "${SEEDS:-1}" --base-label 'knd-handcrafted' \
  --variant "knd-metabu {metafeatures: $metabu, warmstart: {name: knd, params: {metadata: metabu, metadata_params: $metabu_source}, configs: 5}}" \
  --variant 'portfolio-keel {metafeatures: null, warmstart: {name: portfolio, params: {metadata: keel-autosklearn}}}' \
  --variant 'portfolio-oboe {metafeatures: null, warmstart: {name: portfolio, params: {metadata: oboe-autosklearn}}}' \
  --jobs 2 --out ablations/issue46-warmstarts-keel-60s
