#!/usr/bin/env bash
# Issue 44's 300 s classification grid: the first 20 tasks of quality-classification
# (suite quality-classification-20), seed 0, two cells at a time, one core each (resumable:
# finished cells are skipped). The chosen default (docs/recipes.md: portfolio + Caruana,
# 5-fold bagging below 500 training rows) against the old default, against bagging at every
# size (whether a longer budget moves the 500-row threshold up), and the peers; AutoGluon's
# default preset is left out to fit the machines (best_quality is the bar). About 1,520 s of
# cells per task: ~4.2 h at two cells at a time. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue44_grid_300.sh > log 2>&1 &
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification-20 --seeds 1 \
  --set budget.wall_time=300 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'old-default {task.resampling: {holdout: 0.33}, warmstart: null, ensemble: null}' \
  --variant 'bagged+portfolio {task.resampling: {cv: 5, bag: true}}' \
  --peer autogluon-best --peer flaml --peer random-forest --peer hist-gradient-boosting \
  --cell-time 600 --jobs 2 --out ablations/issue44-quality-300s
