"""The two pipeline meta-datasets DeepPipe (Pineda Arango & Grabocka, KDD 2023) learns from.

The ``deeppipe-api`` 0.1.1 wheel carries them in ``deeppipe_api/experiments/data/`` as JSON
files, each one object with the same fields (read by the wheel's ``meta_train.py``):

* ``pipelines`` -- one encoded pipeline per row, values in [0, 1].
* ``error`` -- datasets x pipelines, lower is better, ``NaN`` where the pipeline was not run.
  DeepPipe also treats negative values as not run (neither file has any).
* ``algorithm_domain`` -- column offsets: algorithm ``a`` is encoded in columns
  ``[algorithm_domain[a], algorithm_domain[a + 1])``.
* ``list_for_concatenator`` -- the algorithms of each stage (``[[0, 1], [2, ..., 9]]``).
* ``list_for_selector`` -- per pipeline and stage, the position of its algorithm in that
  stage's list. DeepPipe's per-component encoders read exactly these three fields.
* ``tasks_index`` -- lists of row indices into ``error``: the dataset splits.
* ``init_ids`` -- per split, ``{row index as str: [5 pipeline indices]}``: DeepPipe's
  warm-start designs for the datasets it tests on (an empty list for splits it never tests).

**PMF** (``pmf_meta_dataset.json``, 258 MB): 553 OpenML datasets (``original_dataset_id``) x
38,151 pipelines of Fusi et al.'s "Probabilistic matrix factorization for automated machine
learning" (NeurIPS 2018), whose own release measures balanced accuracy. ``tasks_index`` holds
three splits; DeepPipe's scripts use the first as validation, the second as test (89
datasets, as many as PMF's own test set) and the third as training data. The encoding has
ten algorithm blocks (11 offsets) in two stages: two algorithms of 3 and 2 columns, then eight
of 4 to 13 columns. The file does not name the algorithms or their columns, so the stages are called
``preprocessor`` and ``estimator`` (DeepPipe describes PMF's pipelines as a preprocessing
step followed by a classifier) and each description names its algorithm by position and
points at its encoding columns. Blocks are not zero for algorithms a pipeline does not use:
some columns flag that their algorithm is inactive.

**Tensor-OBOE** (``tensor_oboe_meta_dataset.json``, 185 MB): 551 datasets x 23,424 pipelines
from Yang et al.'s "AutoML pipeline selection: efficiently navigating the combinatorial
space" (KDD 2020). The pipelines are every combination of the settings in
``classification.json`` -- 4 imputers x 2 encoders x 2 standardizers x 8 dimensionality
reducers x 183 estimators -- in the order of :func:`itertools.product` over the stages, the
algorithms and their hyper-parameter values. That order is checked, not assumed: the error
matrix equals Oboe's own error tensor (``oboe`` 0.2.0, shape 551 x 4 x 2 x 2 x 8 x 183) cell
for cell, and each algorithm's encoding block is a one-to-one function of its
hyper-parameters. ``list_for_selector`` is coarser than the algorithms: encoder and
standardizer are one block each (a 0/1 column), "no reducer" shares a block with
VarianceThreshold, and GaussianNB shares one with Perceptron. So the pool's ``stage_choices``
are the algorithms the descriptions name (``info["stage_choice_names"]``: 1 imputer, 2
encoders, 2 standardizers, 4 reducers, 11 estimators, "none" counted as a choice), as tree
search needs, and DeepPipe's selector is kept in ``info["list_for_selector"]``.
The JSON names no datasets; Oboe names its tensor's rows in
``oboe/defaults/TensorOboe/training_index.pkl`` (551 OpenML ids), read here without
unpickling (:func:`read_int_list_pickle`). ``tasks_index`` holds five folds; DeepPipe's run
``s`` validates on fold ``s``, tests on fold ``s + 1`` (mod 5), with ``init_ids`` of that
fold, and trains on the other three.
"""

from __future__ import annotations

import itertools
import pickletools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_metadata.archive import read_json_member, read_member
from automl_metadata.oboe import OBOE_PACKAGE, read_sizes
from automl_metadata.store import MetaDataSource, Package
from automl_spaces.pool_space import PoolSpace

DEEPPIPE_PACKAGE = Package("deeppipe-api", "0.1.1", size_mb=51)

DATA_FOLDER = "deeppipe_api/experiments/data"
PMF_FILE = f"{DATA_FOLDER}/pmf_meta_dataset.json"
TENSOR_OBOE_FILE = f"{DATA_FOLDER}/tensor_oboe_meta_dataset.json"
TENSOR_OBOE_SPACE_FILE = f"{DATA_FOLDER}/classification.json"
TRAINING_INDEX_FILE = "oboe/defaults/TensorOboe/training_index.pkl"

LICENCE = "BSD-3-Clause (deeppipe-api, Copyright (c) 2023 Sebastian Pineda Arango)"

PMF_STAGES = ("preprocessor", "estimator")
PMF_SPLITS = ("validation", "test", "train")  # the order of PMF's tasks_index

#: The stages of Tensor-OBOE's pipelines, as classification.json and Oboe's code name them.
TENSOR_OBOE_STAGES = ("imputer", "encoder", "standardizer", "dim_reducer", "estimator")
TENSOR_OBOE_FOLDS = 5

#: Opcodes that can only build a flat list of ints: pickle data using nothing else is read
#: without executing anything (no GLOBAL, REDUCE, BUILD... can occur).
_INT_OPCODES = frozenset({"BININT", "BININT1", "BININT2", "LONG1"})
_LIST_OPCODES = frozenset({"PROTO", "FRAME", "EMPTY_LIST", "MARK", "APPEND", "APPENDS", "STOP"})
_MEMO_OPCODES = frozenset({"BINPUT", "LONG_BINPUT", "MEMOIZE"})
_SAFE_OPCODES = _INT_OPCODES | _LIST_OPCODES | _MEMO_OPCODES


class PMF(MetaDataSource):
    """PMF's meta-dataset as DeepPipe ships it: 553 datasets x 38,151 pipelines.

    Datasets are OpenML ids; splits ``train`` (449), ``validation`` (15) and ``test`` (89);
    configurations ``{"candidate": j}`` in the pool ``"pmf"`` (72 encoding columns, stages
    ``preprocessor`` and ``estimator``). ``info["init_ids"]["test"]`` maps each test dataset
    to DeepPipe's five warm-start pipelines; some were never run on their dataset.
    """

    package = DEEPPIPE_PACKAGE
    licence = LICENCE + "; the PMF results: BSD-3-Clause (pmf-automl, Rishit Sheth)"
    provenance = (
        "DeepPipe's copy (Pineda Arango & Grabocka, KDD 2023) of the PMF meta-dataset of "
        "Fusi et al., 'Probabilistic matrix factorization for automated machine learning', "
        "NeurIPS 2018"
    )

    def build(self) -> MetaData:
        archive = self.package.fetch()
        raw = read_json_member(archive, PMF_FILE)
        where = f"{archive.name}:{PMF_FILE}"
        datasets = [str(d) for d in field(raw, "original_dataset_id", where)]
        tables = read_tables(raw, where, n_datasets=len(datasets))
        splits = split_ids(tables.tasks_index, datasets, PMF_SPLITS, where)
        pool = PoolSpace(
            name="pmf",
            encodings=tables.pipelines,
            stage_names=PMF_STAGES,
            stage_choices=tables.selector,
            descriptions=describe_pmf_pipelines(tables, where),
        )
        return MetaData(
            datasets=datasets,
            configs=pool.candidates(),
            performance=tables.error,
            splits=splits,
            space=pool.name,
            pool=pool,
            info={
                **tables.structure(),
                "init_ids": warm_starts(raw, datasets, PMF_SPLITS, tables, where),
                "source": f"{self.package}: {PMF_FILE}",
                "metric": "error as DeepPipe stores it (PMF measured balanced accuracy)",
                "protocol": "DeepPipe meta-trains on 'train', selects on 'validation' and "
                "tests on 'test', starting each test search from info['init_ids']['test']",
            },
        )


class TensorOboe(MetaDataSource):
    """Tensor-OBOE's meta-dataset as DeepPipe ships it: 551 datasets x 23,424 pipelines.

    Datasets are OpenML ids (from Oboe's wheel); splits ``fold0`` .. ``fold4`` are the five
    folds of DeepPipe's ``tasks_index``; configurations ``{"candidate": j}`` in the pool
    ``"tensor-oboe"`` (37 encoding columns, five stages), described by the algorithm and
    hyper-parameters of each stage from ``classification.json``; ``metafeatures`` the two
    sizes Oboe's wheel records for the datasets it has them for (``NumberOfInstances``,
    ``NumberOfFeatures``).
    ``info["init_ids"]`` maps each fold's datasets to DeepPipe's five warm-start pipelines for
    when that fold is tested.
    """

    package = DEEPPIPE_PACKAGE
    #: Oboe's package names the datasets: the DeepPipe file gives row numbers only.
    extra_packages = (OBOE_PACKAGE,)
    #: 2: stage choices are the algorithms, DeepPipe's selector is in info; 3: meta-features;
    #: 4: the meta-features named as OpenML names them.
    conversion = 4
    licence = LICENCE + "; the dataset ids: BSD-3-Clause (oboe, Copyright (c) 2021 Chengrun Yang)"
    provenance = (
        "DeepPipe's copy (Pineda Arango & Grabocka, KDD 2023) of the Tensor-OBOE error tensor "
        "of Yang et al., 'AutoML pipeline selection: efficiently navigating the combinatorial "
        "space', KDD 2020; dataset ids from Oboe's training_index.pkl"
    )

    def build(self) -> MetaData:
        ids_archive = OBOE_PACKAGE.fetch()
        datasets = [str(d) for d in read_int_list_pickle(ids_archive, TRAINING_INDEX_FILE)]
        archive = self.package.fetch()
        space = read_json_member(archive, TENSOR_OBOE_SPACE_FILE)
        raw = read_json_member(archive, TENSOR_OBOE_FILE)
        where = f"{archive.name}:{TENSOR_OBOE_FILE}"
        tables = read_tables(raw, where, n_datasets=len(datasets))
        folds = tuple(f"fold{k}" for k in range(TENSOR_OBOE_FOLDS))
        descriptions = describe_tensor_oboe_pipelines(space, tables.selector, archive)
        choices, choice_names = algorithm_choices(descriptions, TENSOR_OBOE_STAGES)
        pool = PoolSpace(
            name="tensor-oboe",
            encodings=tables.pipelines,
            stage_names=TENSOR_OBOE_STAGES,
            stage_choices=choices,
            descriptions=descriptions,
        )
        return MetaData(
            datasets=datasets,
            configs=pool.candidates(),
            performance=tables.error,
            # the two sizes Oboe's wheel records for the same OpenML ids (what a ranker of
            # source datasets, warmstart: ptem, compares)
            metafeatures=read_sizes(ids_archive, datasets),
            splits=split_ids(tables.tasks_index, datasets, folds, where),
            space=pool.name,
            pool=pool,
            info={
                **tables.structure(),
                "init_ids": warm_starts(raw, datasets, folds, tables, where),
                "stage_choice_names": choice_names,
                # DeepPipe's encoder per stage, coarser than the algorithm (see above).
                "list_for_selector": tables.selector.tolist(),
                "source": f"{self.package}: {TENSOR_OBOE_FILE} and {TENSOR_OBOE_SPACE_FILE}; "
                f"{OBOE_PACKAGE}: {TRAINING_INDEX_FILE}",
                "metric": "error of Oboe's error tensor (Oboe's default: balanced error rate)",
                "protocol": "DeepPipe's run s (0..4) selects on fold s, tests on fold s+1 "
                "(mod 5) starting from info['init_ids'][that fold], and meta-trains on the "
                "other three folds",
            },
        )


# ---------------------------------------------------------------------------------------------
# Reading the files
# ---------------------------------------------------------------------------------------------


def read_int_list_pickle(archive: Path, member: str) -> list[int]:
    """The list of ints pickled in ``member``, read without unpickling it.

    Unpickling runs whatever the data asks for, so the opcodes are walked with
    :func:`pickletools.genops` (a disassembler, which executes nothing), every opcode must be
    one that can only build a flat list of ints, and the ints are collected in order.
    """
    try:
        data = read_member(archive, member)
    except OSError as error:  # a damaged archive is already a DatasetError (read_member)
        raise DatasetError(f"{archive}: {member} cannot be read ({error})") from error
    values: list[int] = []
    lists = 0
    try:
        for opcode, argument, _ in pickletools.genops(data):
            if opcode.name not in _SAFE_OPCODES:
                raise DatasetError(
                    f"{archive}: {member} is not a plain list of ints (pickle opcode "
                    f"{opcode.name}); refusing to read it"
                )
            lists += opcode.name == "EMPTY_LIST"
            if opcode.name in _INT_OPCODES and isinstance(argument, int):
                values.append(argument)
    except ValueError as error:
        raise DatasetError(f"{archive}: {member} is not valid pickle data ({error})") from error
    if lists != 1:
        raise DatasetError(f"{archive}: {member} holds {lists} lists, expected one list of ints")
    return values


def field(raw: dict[str, Any], key: str, where: str) -> Any:
    """``raw[key]``, or a DatasetError saying which field of which file is missing."""
    if key not in raw:
        raise DatasetError(f"{where} lacks the field {key!r} (it has {sorted(raw)})")
    return raw[key]


@dataclass
class Tables:
    """The arrays every DeepPipe meta-dataset file holds, checked against each other."""

    pipelines: np.ndarray
    error: np.ndarray
    selector: np.ndarray
    algorithm_domain: list[int]
    concatenator: list[list[int]]
    tasks_index: list[list[int]]

    def structure(self) -> dict[str, Any]:
        """The encoding structure DeepPipe's per-component encoders need, for ``info``."""
        return {"algorithm_domain": self.algorithm_domain, "stage_algorithms": self.concatenator}

    def columns(self, stage: int, choice: int) -> tuple[int, int]:
        """The encoding columns ``[start, stop)`` of algorithm ``choice`` of ``stage``."""
        algorithm = self.concatenator[stage][choice]
        return self.algorithm_domain[algorithm], self.algorithm_domain[algorithm + 1]


def read_tables(raw: dict[str, Any], where: str, *, n_datasets: int) -> Tables:
    """The matrices and indices of a DeepPipe file; the big lists are dropped from ``raw``
    once converted, so the parsed JSON and its arrays are not both held for long."""
    pipelines = float_matrix(raw.pop("pipelines", None), "pipelines", where)
    error = float_matrix(raw.pop("error", None), "error", where)
    error[error < 0] = np.nan  # DeepPipe's convention; the files hold no negative errors
    selector = int_matrix(field(raw, "list_for_selector", where), "list_for_selector", where)
    tables = Tables(
        pipelines=pipelines,
        error=error,
        selector=selector,
        algorithm_domain=[int(v) for v in field(raw, "algorithm_domain", where)],
        concatenator=[[int(a) for a in s] for s in field(raw, "list_for_concatenator", where)],
        tasks_index=[[int(i) for i in s] for s in field(raw, "tasks_index", where)],
    )
    check_tables(tables, where, n_datasets)
    return tables


def float_matrix(value: Any, name: str, where: str) -> np.ndarray:
    """``value`` as a 2-d float array; ragged or non-numeric lists are named in the error."""
    if value is None:
        raise DatasetError(f"{where} lacks the field {name!r}")
    try:
        matrix = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise DatasetError(f"{where}: {name!r} is not a numeric matrix ({error})") from error
    if matrix.ndim != 2:
        raise DatasetError(f"{where}: {name!r} has shape {matrix.shape}, expected a matrix")
    return matrix


def int_matrix(value: Any, name: str, where: str) -> np.ndarray:
    """``value`` as a 2-d int array (JSON gives ints, but a float slipping in is caught)."""
    matrix = float_matrix(value, name, where)
    if not np.all(matrix == np.round(matrix)):
        raise DatasetError(f"{where}: {name!r} holds non-integer values")
    return matrix.astype(np.int64)


def check_tables(tables: Tables, where: str, n_datasets: int) -> None:
    """Shapes and indices agree with each other, or a DatasetError says which do not."""
    n_pipelines = len(tables.pipelines)
    if tables.error.shape != (n_datasets, n_pipelines):
        raise DatasetError(
            f"{where}: 'error' has shape {tables.error.shape}, expected ({n_datasets} datasets "
            f"x {n_pipelines} pipelines)"
        )
    stages = len(tables.concatenator)
    if tables.selector.shape != (n_pipelines, stages):
        raise DatasetError(
            f"{where}: 'list_for_selector' has shape {tables.selector.shape}, expected "
            f"({n_pipelines}, {stages}): one algorithm per pipeline and stage"
        )
    domain = tables.algorithm_domain
    n_algorithms = sum(len(s) for s in tables.concatenator)
    if len(domain) != n_algorithms + 1 or domain[-1] != tables.pipelines.shape[1]:
        raise DatasetError(
            f"{where}: 'algorithm_domain' {domain} does not delimit {n_algorithms} algorithm "
            f"blocks of the {tables.pipelines.shape[1]} encoding columns"
        )
    for stage, algorithms in enumerate(tables.concatenator):
        chosen = tables.selector[:, stage]
        if chosen.min() < 0 or chosen.max() >= len(algorithms):
            raise DatasetError(
                f"{where}: 'list_for_selector' column {stage} leaves 0..{len(algorithms) - 1}"
            )
    for part in tables.tasks_index:
        if any(not 0 <= i < n_datasets for i in part):
            raise DatasetError(f"{where}: 'tasks_index' refers to rows outside 0..{n_datasets}")


def split_ids(
    tasks_index: list[list[int]], datasets: list[str], names: Sequence[str], where: str
) -> dict[str, list[str]]:
    """``tasks_index`` (row numbers) as named lists of dataset ids."""
    if len(tasks_index) != len(names):
        raise DatasetError(
            f"{where}: 'tasks_index' has {len(tasks_index)} parts, expected {len(names)} "
            f"({', '.join(names)})"
        )
    return {
        name: [datasets[i] for i in part] for name, part in zip(names, tasks_index, strict=True)
    }


def warm_starts(
    raw: dict[str, Any], datasets: list[str], names: Sequence[str], tables: Tables, where: str
) -> dict[str, dict[str, list[int]]]:
    """``init_ids`` keyed by split name, then dataset id (the file keys rows by number)."""
    init_ids = field(raw, "init_ids", where)
    if not isinstance(init_ids, list) or len(init_ids) != len(names):
        raise DatasetError(f"{where}: 'init_ids' should be a list of {len(names)} parts")
    n_pipelines = len(tables.pipelines)
    result: dict[str, dict[str, list[int]]] = {}
    for name, part in zip(names, init_ids, strict=True):
        if not part:  # DeepPipe stores [] for splits it never tests on
            result[name] = {}
            continue
        if not isinstance(part, dict):
            raise DatasetError(f"{where}: 'init_ids' part {name!r} is not a mapping")
        converted: dict[str, list[int]] = {}
        for row, pipelines in part.items():
            if not str(row).isdigit() or int(row) >= len(datasets):
                raise DatasetError(f"{where}: 'init_ids' names the unknown row {row!r}")
            if any(not 0 <= int(j) < n_pipelines for j in pipelines):
                raise DatasetError(f"{where}: 'init_ids' of row {row} leaves 0..{n_pipelines}")
            converted[datasets[int(row)]] = [int(j) for j in pipelines]
        result[name] = converted
    return result


# ---------------------------------------------------------------------------------------------
# What each pipeline is
# ---------------------------------------------------------------------------------------------


def describe_pmf_pipelines(tables: Tables, where: str) -> list[dict[str, Any]]:
    """Per pipeline and stage: its algorithm (by position, as the file names none) and the
    encoding columns that hold that algorithm's hyper-parameters."""
    if len(tables.concatenator) != len(PMF_STAGES):
        raise DatasetError(
            f"{where}: {len(tables.concatenator)} stages, expected {len(PMF_STAGES)} "
            f"({', '.join(PMF_STAGES)})"
        )
    labels = {
        (stage, choice): {
            "algorithm": f"{name}_{choice}",
            "encoding_columns": list(tables.columns(stage, choice)),
        }
        for stage, name in enumerate(PMF_STAGES)
        for choice in range(len(tables.concatenator[stage]))
    }
    return [
        {
            name: labels[stage, int(choice)]
            for stage, (name, choice) in enumerate(zip(PMF_STAGES, row, strict=True))
        }
        for row in tables.selector
    ]


def tensor_oboe_settings(space: dict[str, Any], where: str) -> list[list[dict[str, Any]]]:
    """Per stage, its settings in the space's order: each algorithm (``None``: the stage is
    skipped) with every combination of its hyper-parameter values, the last varying fastest."""
    settings = []
    for stage in TENSOR_OBOE_STAGES:
        spec = field(space, stage, where)
        choices: list[dict[str, Any]] = []
        for algorithm in field(spec, "algorithms", f"{where} [{stage}]"):
            grid = spec.get("hyperparameters", {}).get(algorithm, {}) if algorithm else {}
            for values in itertools.product(*grid.values()):
                choices.append(
                    {
                        "algorithm": algorithm,
                        "hyperparameters": dict(zip(grid, values, strict=True)),
                    }
                )
        settings.append(choices)
    return settings


def algorithm_choices(
    descriptions: list[dict[str, Any]], stages: tuple[str, ...]
) -> tuple[np.ndarray, dict[str, list[str]]]:
    """Per pipeline and stage, the index of its algorithm among the stage's algorithms (sorted,
    ``"none"`` first when a stage may be skipped), and those names per stage."""
    names: dict[str, list[str]] = {}
    choices = np.empty((len(descriptions), len(stages)), dtype=np.int64)
    for s, stage in enumerate(stages):
        chosen = [str(d[stage]["algorithm"] or "none") for d in descriptions]
        names[stage] = sorted(set(chosen), key=lambda name: (name != "none", name))
        position = {name: i for i, name in enumerate(names[stage])}
        choices[:, s] = [position[name] for name in chosen]
    return choices, names


def describe_tensor_oboe_pipelines(
    space: dict[str, Any], selector: np.ndarray, archive: Path
) -> list[dict[str, Any]]:
    """Pipeline ``j`` is the ``j``-th combination of the stages' settings (see the module
    docstring for how that order was established); checked here against ``selector``: each
    algorithm must always sit in the same encoder block."""
    where = f"{archive.name}:{TENSOR_OBOE_SPACE_FILE}"
    settings = tensor_oboe_settings(space, where)
    n_combinations = int(np.prod([len(s) for s in settings]))
    if n_combinations != len(selector):
        raise DatasetError(
            f"{where} spans {n_combinations} pipelines "
            f"({' x '.join(str(len(s)) for s in settings)}), but {TENSOR_OBOE_FILE} has "
            f"{len(selector)}: the two files do not belong together"
        )
    descriptions = [
        dict(zip(TENSOR_OBOE_STAGES, combination, strict=True))
        for combination in itertools.product(*settings)
    ]
    check_algorithm_blocks(descriptions, selector, where)
    return descriptions


def check_algorithm_blocks(
    descriptions: list[dict[str, Any]], selector: np.ndarray, where: str
) -> None:
    """A wrong pipeline order would pair some algorithm with several encoder blocks."""
    for stage, name in enumerate(TENSOR_OBOE_STAGES):
        blocks: dict[Any, set[int]] = {}
        for description, choice in zip(descriptions, selector[:, stage], strict=True):
            blocks.setdefault(description[name]["algorithm"], set()).add(int(choice))
        mixed = {algorithm: sorted(b) for algorithm, b in blocks.items() if len(b) > 1}
        if mixed:
            raise DatasetError(
                f"{where}: the pipelines are not in the expected order: in stage {name!r}, "
                f"algorithms sit in several encoder blocks {mixed}"
            )
