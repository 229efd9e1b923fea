#!/usr/bin/env bash
# Issue 44's 300 s classification grid: the first 20 tasks of quality-classification
# (suite quality-classification-20), one seed, two cells at a time, one core each
# (resumable: finished cells are skipped). Our variants: the four best of the 60 s grid's
# seed 0 (choose them from its ranks before starting; these are the candidates); peers as at
# 60 s. About 8 cells of 300 s per task: ~6.7 h at two cells at a time. Run it frozen:
#   setsid nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue44_grid_300.sh > log 2>&1 &
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification-20 --seeds 1 \
  --set budget.wall_time=300 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant '+portfolio+caruana {warmstart: portfolio, ensemble: {ensembler: caruana}}' \
  --variant 'bagged {task.resampling: {cv: 5, bag: true}, ensemble: {ensembler: caruana}}' \
  --variant 'bagged+portfolio {task.resampling: {cv: 5, bag: true}, ensemble: {ensembler: caruana}, warmstart: portfolio}' \
  --peer autogluon-best --peer autogluon --peer flaml --peer random-forest --peer hist-gradient-boosting \
  --cell-time 600 --jobs 2 --out ablations/issue44-quality-300s
