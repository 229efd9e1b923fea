#!/usr/bin/env bash
# Run a grid script on a frozen copy of the code, so that editing the checkout while a grid of
# many hours runs changes none of its cells:
#
#   setsid nohup bash benchmarks/frozen_grid.sh COMMIT benchmarks/issue44_grid.sh > grid.log 2>&1 &
#
# COMMIT is checked out (detached) as a git worktree beside the checkout, ../grid-COMMIT; the
# checkout's environments (.venv, .venv-autogluon) and its ablations/ folder are linked into
# it, and its packages are put first on PYTHONPATH, ahead of the checkout's editable installs
# (every cell is a new process, which imports them from there). Cells that a killed grid left
# unfinished (no cell.json) are removed first: resumed, they would start with their budget
# partly spent. Refuses to start while another `automl ablate` runs.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$checkout" rev-parse --short "${1:?usage: frozen_grid.sh COMMIT GRID_SCRIPT}")
script=${2:?usage: frozen_grid.sh COMMIT GRID_SCRIPT}
tree="$checkout/../grid-$commit"
if pgrep -f "(automl|[.]cli) ablate" > /dev/null; then
  echo "an ablation is running (pgrep -af '(automl|[.]cli) ablate'): stop it first" >&2
  exit 1
fi
if [ ! -d "$tree" ]; then
  git -C "$checkout" worktree add --detach "$tree" "$commit"
  mkdir -p "$checkout/ablations"
  for shared in .venv-autogluon ablations; do
    if [ -e "$checkout/$shared" ]; then ln -s "$checkout/$shared" "$tree/$shared"; fi
  done
fi
# The grid scripts call .venv/bin/automl. The checkout's environment runs the frozen code
# (PYTHONPATH below), but its `automl` script names the checkout's CLI module, which moved
# (automl_core.cli -> automl_engine.cli with issue 45's split): the frozen tree gets an
# `automl` of its own that runs its own CLI module with the checkout's interpreter.
cli=automl_engine.cli
if [ -f "$tree/automl_core/cli.py" ]; then cli=automl_core.cli; fi
if [ -L "$tree/.venv" ]; then rm "$tree/.venv"; fi
mkdir -p "$tree/.venv/bin"
printf '#!/usr/bin/env bash\nexec "%s/.venv/bin/python" -m %s "$@"\n' "$checkout" "$cli" > "$tree/.venv/bin/automl"
chmod +x "$tree/.venv/bin/automl"
cd "$tree"
for cell in ablations/*/cells/*/*/seed-*; do
  if [ -d "$cell" ] && [ ! -f "$cell/cell.json" ]; then
    echo "afresh: $cell"
    rm -rf "$cell"
  fi
done
packages="$tree"
for project in plugins/* contrib/*; do
  if [ -f "$project/pyproject.toml" ]; then packages="$packages:$tree/$project"; fi
done
export PYTHONPATH="$packages"
echo "grid on $commit ($tree): $script"
exec bash "$script"
