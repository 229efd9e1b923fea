#!/usr/bin/env bash
# Issue 44's 60 s classification grid, seeds 0 and 1 (resumable: finished cells are skipped).
# Run it frozen: setsid nohup bash benchmarks/frozen_grid.sh COMMIT benchmarks/issue44_grid.sh
# `cv5-refit` (added in the second session: the same cross-validated search as `bagged`, its
# members refitted on all rows instead of keeping their fold models) is issue 44's item 1;
# a restarted grid runs a variant's missing cells task by task, in the suite's order.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification --seeds 2 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'default-catboost {space: {name: autosklearn-classification, params: {exclude: {classifier: [catboost]}}}}' \
  --variant '+portfolio+caruana {warmstart: portfolio, ensemble: {ensembler: caruana}}' \
  --variant 'bagged {task.resampling: {cv: 5, bag: true}, ensemble: {ensembler: caruana}}' \
  --variant 'bagged+portfolio {task.resampling: {cv: 5, bag: true}, ensemble: {ensembler: caruana}, warmstart: portfolio}' \
  --variant 'bagged-by-rows {task.resampling: {auto: bagged-by-rows}, ensemble: {ensembler: caruana}}' \
  --variant 'cv5-refit {task.resampling: {cv: 5}, ensemble: {ensembler: caruana}}' \
  --peer autogluon-best --peer autogluon --peer flaml --peer random-forest --peer hist-gradient-boosting \
  --jobs 2 --out ablations/issue44-quality-60s
