#!/usr/bin/env bash
# Issue 46, item 4 (and 44's open question): the classification default starts from
# Auto-sklearn 2.0's greedy portfolio built on oboe-autosklearn (OpenML datasets, no CatBoost
# pipeline). Would the portfolio built on the project's own meta-data, keel-autosklearn-catboost
# (58 KEEL datasets x 112 pipelines of the default space, CatBoost included), start it better?
# The default against the same recipe with that portfolio, at 60 s on the 56 tasks of
# quality-classification, seed 1, two cells at a time, one core each (resumable). The
# portfolio leaves the task's own dataset out (exclude_self, on by default), so the KEEL tasks
# of the suite are a leave-one-dataset-out reading; the other tasks are not in either
# meta-data. About 56 x 2 x 62 s of cells: ~58 min at two cells at a time. Run it frozen:
#   nohup bash benchmarks/frozen_grid.sh HEAD benchmarks/issue46_portfolio_classification.sh > log 2>&1 &
# then `automl compare ablations/issue46-portfolio-classification-60s --failed last`.
# The rule, written before any row was read: the default's portfolio switches to
# keel-autosklearn-catboost only if it wins more tasks than it loses AND the Wilcoxon p is
# below 0.05 (55 of the 56 tasks are KEEL's, the meta-data's own collection, so a small edge
# here would be smaller on a user's data); otherwise it stays on oboe-autosklearn.
cd "$(dirname "$0")/.."
exec .venv/bin/automl ablate default-classification --suite quality-classification --seed 1 \
  --set budget.wall_time=60 --set 'executor={name: processes, params: {workers: 1}}' \
  --base-label default \
  --variant 'portfolio-keel-catboost {warmstart: {name: portfolio, optional: true, params: {metadata: keel-autosklearn-catboost}}}' \
  --jobs 2 --out ablations/issue46-portfolio-classification-60s
