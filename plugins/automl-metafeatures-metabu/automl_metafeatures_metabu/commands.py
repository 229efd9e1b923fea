"""``automl metabu fit``: fit Metabu on a meta-data (into the cache the provider reads) and
print what it learned: the dimension, NDCG@10 of its distances against the target's beside the
basic meta-features', and the meta-features that weigh most in ψ."""

from __future__ import annotations

import argparse
import json

from automl_core.hookspecs import RegisterCommand

HELP = "fit Metabu on a meta-data and print its dimension, NDCG@10 and importances"


def register_metabu_commands(register: RegisterCommand) -> None:
    register("metabu fit", _configure, _fit, help=HELP)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("metadata", help="a meta-data source name or folder")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the meta-data source (e.g. --param performance=oboe "
        "--param metafeatures=lcdb for `joined`)",
    )
    parser.add_argument("--exclude", nargs="*", default=[], help="datasets left out of the fit")
    parser.add_argument("--top", type=int, default=20, help="top configurations per dataset")
    parser.add_argument("--dimension", type=int, help="output dimension (default: TwoNN's)")
    parser.add_argument("--importances", type=int, default=15, help="how many to print")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"automl metabu fit: --param {text!r}: expected KEY=VALUE")
    return key, value


def _fit(args: argparse.Namespace) -> int:
    from automl_metafeatures_metabu.provider import MetabuMetaFeatures

    params = dict(_pair(text) for text in args.param)
    provider = MetabuMetaFeatures(
        args.metadata, params, exclude=args.exclude, top=args.top, dimension=args.dimension
    )
    fitted = provider.fitted_map()
    importances = fitted.importances().head(args.importances)
    info = fitted.info
    if args.json:
        summary = {k: v for k, v in info.items() if k != "datasets"}
        print(json.dumps({**summary, "importances": importances.to_dict()}, indent=2))
        return 0
    print(
        f"Metabu on {info['source']}: {len(info['datasets'])} datasets "
        f"({len(info['validation'])} for early stopping), top {info['top']} configurations, "
        f"dimension {info['dimension']}, {info['epochs']} epochs"
    )
    print(
        f"NDCG@10 against the target distances: Metabu {info['ndcg10_all']:.3f}, "
        f"basic meta-features {info['ndcg10_basic']:.3f} (all datasets, training included)"
    )
    print(f"the {len(importances)} basic meta-features weighing most in ψ:")
    for name, value in importances.items():
        print(f"  {name}: {value:.3f}")
    return 0
