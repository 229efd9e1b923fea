#!/usr/bin/env bash
# Issue 44: does CatBoost pay in the classification default at 300 s, the estimators' default
# budget? At 60 s (issue44_catboost_caruana.sh, 56 tasks) the space without it led, not
# significantly (19/30/7, p 0.059), as it got ~9 % more trials; a trial's cost weighs less
# with five times the time. The first 20 tasks of quality-classification, seed 1, the
# default against the same recipe without CatBoost, two cells at a time, one core each
# (resumable: finished cells are skipped). About 20 x 2 x 305 s of cells: ~100 min at two
# cells at a time. Run it frozen:
#   nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue44_catboost_300.sh > log 2>&1 &
# then `automl compare ablations/issue44-catboost-300s --failed last`.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification-20 --seed 1 \
  --set budget.wall_time=300 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'no-catboost {space: {name: autosklearn-classification, params: {exclude: {classifier: [catboost]}}}}' \
  --cell-time 600 --jobs 2 --out ablations/issue44-catboost-300s
