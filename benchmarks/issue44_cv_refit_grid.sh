#!/usr/bin/env bash
# Issue 44, item 1: the bagged final model (the fold models kept) against a refit on all rows,
# for the same 5-fold cross-validated search with the Caruana ensemble. The 60 s grid's
# `bagged` cells are the first; this ablation adds the second (`cv5-refit`) on the same
# suite, seed, budget and cores. Compare the two by putting its rows beside the grid's:
#   python benchmarks/merge_results.py ablations/issue44-quality-60s \
#       ablations/issue44-cv-refit-60s --out ablations/issue44-merged-60s
# 56 cells of 60 s, ~30 minutes at two cells at a time.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification --seeds 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --set 'task.resampling={cv: 5}' --set 'ensemble={ensembler: caruana}' \
  --base-label cv5-refit --jobs 2 --out ablations/issue44-cv-refit-60s
