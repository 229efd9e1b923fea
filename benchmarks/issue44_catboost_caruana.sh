#!/usr/bin/env bash
# Issue 44's two unmeasured choices of the classification default, at 60 s on the 56 tasks of
# quality-classification, seed 1, two cells at a time, one core each (resumable: finished
# cells are skipped): the default against the same recipe without CatBoost (is the component
# worth its place in the space?) and against Caruana ensembles of 10 and 100 selections
# (the default's 50 is auto-sklearn's, never measured here), and against bagging also above
# 500 rows when a 33 % holdout would hold fewer than 30 rows of the rarest class (the
# default's holdout picked a lucky configuration on ~13 minority rows of winequality-red-4 at
# 300 s). About 56 x 5 x 62 s of cells: ~2.4 h at two cells at a time. Run it frozen:
#   nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue44_catboost_caruana.sh > log 2>&1 &
# then `automl compare ablations/issue44-catboost-caruana-60s --failed last`.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'no-catboost {space: {name: autosklearn-classification, params: {exclude: {classifier: [catboost]}}}}' \
  --variant 'caruana-10 {ensemble: {name: caruana, params: {size: 10}}}' \
  --variant 'caruana-100 {ensemble: {name: caruana, params: {size: 100}}}' \
  --variant 'rare-class-bagging {task.resampling: {auto: {name: bagged-by-rows, params: {max_bagged_rows: 500, folds: 5, many_folds_below: 0, min_holdout_class_rows: 30}}}}' \
  --jobs 2 --out ablations/issue44-catboost-caruana-60s
