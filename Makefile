# Two commands do everything (see README.md):
#   make demo   create .venv, install the core and every plugin, run the quickstart recipe
#   make test   create .venv, install the core, every plugin and the test tools, run the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PLUGINS := $(sort $(wildcard plugins/*))
# The peers our strategies are compared with (SMAC3, Optuna), installed for tests and benchmarks.
CONTRIB := $(sort $(wildcard contrib/automl-*))
# TPOT (for contrib/automl-tpot) declares xgboost>=3, and the `xgboost` wheel pulls ~350 MB of
# CUDA (nvidia-nccl-cu12): it is installed without its dependencies, which automl-tpot
# declares instead, xgboost as xgboost-cpu (the same module). See contrib/automl-tpot/README.md.
TPOT := tpot==1.1.0
STAMP := $(VENV)/.installed
# Every project here builds with setuptools: installed once into the environment, it builds
# all of them in place (--no-build-isolation) instead of in one throwaway environment each
# (~7 s a project on a 2-core VM, 30+ projects).

# AutoGluon-Tabular (the `autogluon` and `autogluon-best` peers of contrib/automl-autogluon) pins
# pandas < 3 and pulls a large stack, so it lives in its own environment, which the adapter runs
# in a subprocess; it is not part of `make install`. torch comes from constraints.txt (the CPU
# build). The `*` .gitignore keeps the environment out of git, as Python 3.13's venv does.
AUTOGLUON_VENV ?= .venv-autogluon
AUTOGLUON := autogluon.tabular[all]==1.6.*
AUTOGLUON_STAMP := $(AUTOGLUON_VENV)/.installed

# CARP-S (contrib/automl-carps: our strategies judged by CARP-S's runner beside SMAC3 and
# Optuna) brings hydra, polars, pyarrow, seaborn... (~220 MB): it lives in an environment of its
# own that sees this one's packages (a path file adds .venv's site-packages), so CARP-S's
# dependencies go there and nothing here changes. Not part of `make install`.
CARPS_VENV ?= .venv-carps
CARPS_STAMP := $(CARPS_VENV)/.installed
PURELIB := import sysconfig; print(sysconfig.get_paths()["purelib"])

.PHONY: install demo test lint clean autogluon-env carps-env

$(STAMP): pyproject.toml constraints.txt $(wildcard plugins/*/pyproject.toml contrib/automl-*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=77" wheel
	$(BIN)/python -m pip install -q -c constraints.txt --no-build-isolation -e ".[dev]" $(foreach p,$(PLUGINS) $(CONTRIB),-e $(p))
	$(BIN)/python -m pip install -q -c constraints.txt --no-deps "$(TPOT)"
	touch $@

install: $(STAMP)

demo: install
	$(BIN)/automl run examples/recipes/quickstart.yaml --out runs/quickstart-$$(date +%Y%m%d-%H%M%S)

test: install
	$(BIN)/python tests/registry_packages.py
	$(BIN)/python -m pytest -n auto --durations=15

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

$(AUTOGLUON_STAMP): constraints.txt
	$(PYTHON) -m venv $(AUTOGLUON_VENV)
	echo '*' > $(AUTOGLUON_VENV)/.gitignore
	$(AUTOGLUON_VENV)/bin/python -m pip install -q --upgrade pip
	$(AUTOGLUON_VENV)/bin/python -m pip install -q -c constraints.txt "$(AUTOGLUON)"
	$(AUTOGLUON_VENV)/bin/python -c "import autogluon.tabular, torch, fastai; from importlib.metadata import version as v; print('autogluon.tabular', v('autogluon.tabular'), 'torch', v('torch'))"
	touch $@

autogluon-env: $(AUTOGLUON_STAMP)

$(CARPS_STAMP): $(STAMP) constraints.txt
	$(PYTHON) -m venv --without-pip $(CARPS_VENV)
	echo '*' > $(CARPS_VENV)/.gitignore
	echo "import site; site.addsitedir('$$($(BIN)/python -c '$(PURELIB)')')" > "$$($(CARPS_VENV)/bin/python -c '$(PURELIB)')/automl-venv.pth"
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q -c constraints.txt -e "./contrib/automl-carps[carps]"
	# HEBO, the peer CARP-S runs as +optimizer/hebo=config: its wheel pins numpy < 1.25 and
	# pymoo 0.6.0, but it imports and runs with this environment's numpy 2 and pymoo 0.6.2
	# (checked on a BBOB task), so it is installed without its pins; gpytorch and torch come
	# from .venv.
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q --no-deps hebo==0.3.6 disjoint-set==0.9.0
	# Nevergrad, the peer CARP-S runs as +optimizer/nevergrad=default (NGOpt)
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q -c constraints.txt nevergrad==1.0.12
	# CARP-S's multi-fidelity tasks that need no download: mf-prior-bench's multi-fidelity
	# Hartmann functions (+task/MFPBench/SO/mfh=...), and DEHB, a multi-fidelity peer
	# (+optimizer/dehb=multifidelity). Both pin numpy < 2 and run with numpy 2 (checked on
	# those tasks); with their pins pip would put numpy 1.26 and pandas 3.0 into this
	# environment, in front of .venv's, so they come without them.
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q --no-deps mf-prior-bench==1.10.0 dehb==0.1.2
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q -c constraints.txt more-itertools loguru
	# Ax (+optimizer/Ax=config), BoTorch's GP: it brings botorch and keeps .venv's torch and
	# gpytorch
	$(BIN)/python -m pip --python $(CARPS_VENV)/bin/python install -q -c constraints.txt ax-platform==1.3.1
	$(CARPS_VENV)/bin/python -c "import carps, ioh, nevergrad, mfpbench, dehb, automl_carps.optimizer, carps.optimizers.hebo, carps.optimizers.dehb, carps.optimizers.ax; from importlib.metadata import version as v; print('carps', v('carps'))"
	touch $@

carps-env: $(CARPS_STAMP)

clean:
	rm -rf $(VENV) $(AUTOGLUON_VENV) runs
