#!/usr/bin/env bash
# Issue 44: the chosen classification default (docs/recipes.md: portfolio + Caruana, 5-fold
# bagging below 500 training rows) on a seed the choice did not see (seed 1; seed 0 chose it),
# against the peers of the seed-0 grid. The old default is left out to fit the machine
# (seed 0 has it); add it with --variant 'old-default {task.resampling: {holdout: 0.33},
# warmstart: null, ensemble: null}'. Resumable. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh COMMIT benchmarks/issue44_defaults_classification.sh
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --peer autogluon-best --peer autogluon --peer flaml --peer random-forest \
  --peer hist-gradient-boosting \
  --jobs 2 --out ablations/issue44-defaults-classification-60s
