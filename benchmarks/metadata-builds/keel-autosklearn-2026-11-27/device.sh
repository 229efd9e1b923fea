#!/bin/bash
# Run on the device machine from the repository root: metadata-build/device.sh RUN_DIR JOBS STOP_AT_S
# Installs the carried wheels into /tmp/site, runs the design ablation with JOBS cells at once until
# STOP_AT_S seconds after this script started (then stops it: resumable), builds the meta-data
# folder from what finished, and packs everything into $OUT.
set -u
T0=$(date +%s); RUN=$1; JOBS=$2; STOP=$3
echo "start $(date -u) host $(hostname) nproc $(nproc)"; lscpu | grep -E 'Model name|^CPU\(s\)'; free -g | head -2
echo "image: $(python3 -m pip list 2>/dev/null | grep -iE '^(scikit-learn|numpy|scipy|pandas|joblib|threadpoolctl|narwhals|pluggy|rich|cloudpickle|pyyaml|matplotlib) ' | tr -s ' ' | tr '\n' ';')"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target ${SITE:-/tmp/site} .whl/*.whl || { echo INSTALL FAILED; exit 3; }
export PYTHONPATH=${SITE:-/tmp/site} AUTOML_CACHE_DIR=$PWD/metadata-build/cache PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
python3 -c "import sys,sklearn,numpy,scipy,pandas,joblib,lightgbm,xgboost,ConfigSpace,skops,threadpoolctl;print(sys.version);print({m.__name__:m.__version__ for m in (sklearn,numpy,scipy,pandas,joblib,lightgbm,xgboost,ConfigSpace,skops,threadpoolctl)})" || { echo IMPORT FAILED; exit 4; }
python3 -m automl_core.cli plugins --kind space || exit 5
python3 -m automl_core.cli validate $RUN/recipe.yaml --set task.dataset=keel:iris || echo "validate rc=$?"
LEFT=$(( STOP - ($(date +%s) - T0) )); T1=$(date +%s)
echo "ablate for at most ${LEFT}s with --jobs $JOBS"
timeout -k 15 -s TERM $LEFT python3 -m automl_core.cli ablate $RUN/recipe.yaml --suite $RUN/suite.yaml --seeds 1 --out $RUN/ablation --jobs $JOBS
echo "ablate rc=$? wall $(( $(date +%s) - T1 ))s"
sleep 2
timeout 100 python3 metadata-build/finish.py $RUN; echo "finish rc=$?"
python3 metadata-build/stats.py $RUN
cd $(dirname $RUN)
if command -v zstd >/dev/null; then Z="zstd -T0 -10 -q"; E=zst; else Z="gzip -6"; E=gz; fi
B=$(basename $RUN)
tar -cf - $B/metadata $B/recipe.yaml $B/suite.yaml $B/ablation/ablation.json $B/ablation/results.csv | $Z > $OUT/light.tar.$E
tar -cf - $B | $Z > /tmp/full.tar.$E; S=$(stat -c %s /tmp/full.tar.$E); echo "full pack $S bytes"
if [ $S -gt ${MAXPACK:-58720256} ]; then
  rm -rf /tmp/np && mkdir /tmp/np && cp -a $B /tmp/np/ && for f in /tmp/np/$B/ablation/cells/*/*/*/history.sqlite; do python3 -c "import sqlite3,sys;c=sqlite3.connect(sys.argv[1]);c.execute('delete from predictions');c.commit();c.execute('vacuum')" $f; done
  tar -C /tmp/np -cf - $B | $Z > /tmp/full.tar.$E; echo "without predictions: $(stat -c %s /tmp/full.tar.$E) bytes"; touch $OUT/NO_PREDICTIONS
fi
split -b 15M -d /tmp/full.tar.$E $OUT/full.tar.$E.part-
ls -la $OUT; echo "end after $(( $(date +%s) - T0 ))s"
