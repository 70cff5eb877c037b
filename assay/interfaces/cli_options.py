"""The options every labelling command of ``assay`` shares (``evaluate``, ``label``, ``demo``):
their typer declarations, declared once (:data:`SHARED_OPTIONS`, :func:`run_options`), and the
checks that run before any file is read — ``--confidence`` in (0, 1), the seed's range, the
output paths, and the design options through the settings that own them
(:mod:`assay.designs.settings`). Each failed check is an :class:`~assay.errors.AssayInputError`
naming the option: one line and exit code 2 (:mod:`assay.interfaces.cli_errors`).

>>> check_confidence(0.9)
>>> check_confidence(1.0)
Traceback (most recent call last):
assay.errors.AssayInputError: --confidence: 1.0 (expected a number in (0, 1))
"""
from __future__ import annotations

import inspect
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from assay.designs.settings import DesignSettings, ImportanceSettings, OasisSettings
from assay.errors import AssayInputError
from assay.outputs import STDOUT, check_output

SEED_MAX = 2 ** 63 - 1


class DesignName(str, Enum):
    auto = "auto"
    passive = "passive"
    stratified = "stratified"
    importance = "importance"
    oasis = "oasis"


class StrataName(str, Enum):
    csf = "csf"
    equal = "equal"


class AllocationName(str, Enum):
    neyman = "neyman"
    proportional = "proportional"


class EngineName(str, Enum):
    memory = "memory"
    duckdb = "duckdb"
    spark = "spark"


class OnConflict(str, Enum):
    fail = "fail"
    keep = "keep"
    replace = "replace"


def check_confidence(confidence: float) -> None:
    """``--confidence`` of ``evaluate`` and ``label``: a level strictly between 0 and 1."""
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", str(confidence), expected="a number in (0, 1)")


def design_name(design: Optional[DesignName]) -> str | None:
    return design.value if design is not None else None


def options_dict(strata: str, n_strata: int, allocation: str, epsilon: float | None,
             replace: bool, design: str | None = None,
             defensive: float | None = None, floors: bool | None = None) -> dict[str, Any]:
    """The settings of every design from the command's options (each design keeps its own:
    :func:`assay.designs.settings.settings_from_options`); ``--epsilon`` is OASIS's ε when the
    design is OASIS, importance's otherwise, and None leaves each design's default."""
    opts = {"strata": strata, "n_strata": n_strata, "allocation": allocation,
            "epsilon": epsilon, "replace": replace}
    if design == "oasis":
        opts.update(oasis_epsilon=epsilon, defensive=defensive)
    if floors is not None:
        opts["floors"] = floors
    return opts


def _checked(option: str, settings: type[DesignSettings], field: str, value: Any) -> None:
    """``value`` through the check of the settings that own ``field`` (the one place for the
    ranges, :mod:`assay.designs.settings`), its error re-raised naming the command's option.

    >>> _checked("--epsilon", ImportanceSettings, "epsilon", 0.5)
    >>> _checked("--epsilon", ImportanceSettings, "epsilon", 2.0)
    Traceback (most recent call last):
    assay.errors.AssayInputError: --epsilon: 2.0 (expected a number in (0, 1])
    """
    if value is None:
        return
    try:
        settings(**{field: value})
    except AssayInputError as exc:
        raise AssayInputError(option, str(value), expected=exc.expected) from None


def design_options(design: Optional[DesignName], strata: StrataName, n_strata: int,
                   allocation: AllocationName, epsilon: Optional[float],
                   defensive: Optional[float], replace: bool,
                   floors: Optional[bool] = None) -> dict[str, Any]:
    """The design options of ``evaluate`` and ``label`` checked (by the settings: ``--epsilon``
    as OASIS's ε with ``--design oasis``, else importance's; ``--defensive`` only with
    ``--design oasis``; ``--floors/--no-floors`` only with ``--design stratified`` or
    ``oasis``; ``--n-strata`` ≥ 1 by its typer option) and turned into the options dict of
    :func:`options_dict`."""
    name = design_name(design)
    _checked("--epsilon", OasisSettings if name == "oasis" else ImportanceSettings, "epsilon",
             epsilon)
    _checked("--defensive", OasisSettings, "defensive", defensive)
    if defensive is not None and name != "oasis":
        raise AssayInputError("--defensive", f"{defensive} with --design {name or 'auto'}",
                              expected="--design oasis")
    if floors is not None and name not in ("stratified", "oasis"):
        raise AssayInputError("--floors" if floors else "--no-floors",
                              f"with --design {name or 'auto'}",
                              expected="--design stratified or oasis")
    return options_dict(strata.value, n_strata, allocation.value, epsilon, replace, name,
                        defensive, floors)


def check_run(seed: int, json_out: Optional[Path], report: Optional[Path]) -> None:
    """Options and output paths that would fail late: checked before any file is read."""
    if not 0 <= seed <= SEED_MAX:
        raise AssayInputError("--seed", str(seed), expected="an integer in [0, 2^63 − 1]")
    if json_out is not None and report is not None and str(json_out) == str(report) == STDOUT:
        raise AssayInputError("--report -", "stdout is already taken by --json -",
                              expected="at most one output written to '-'")
    for option, path in (("--json", json_out), ("--report", report)):
        if path is not None:
            check_output(path, option)


# options shared by ``evaluate`` and ``label``
DESIGN_OPT = typer.Option(None, help="Sampling design (default: auto when the pool has a score "
                                      "or probability column, else passive).",
                          show_default=False)
SEED_OPT = typer.Option(0, help="Seed of the random generator (0 to 2^63 − 1).")
CONFIDENCE_OPT = typer.Option(0.95, help="Confidence level of the intervals.")
STORE_OPT = typer.Option("assay.db", help="Label store: SQLite path or SQLAlchemy URL.")
JSON_OPT = typer.Option(None, "--json", help="Write the estimates as JSON ('-': stdout).")
REPORT_OPT = typer.Option(None, help="Write a self-contained HTML report ('-': stdout).")
DATASET_OPT = typer.Option(None, help="Name under which labels are stored (default: the "
                                      "pool's file name without extension).",
                           show_default=False)
ID_OPT = typer.Option(None, "--id", help="Id column of the pool; repeat for several "
                                         "(--id doc --id sec).")


STRATA_OPT = typer.Option(StrataName.csf, help="Stratified and OASIS: 'csf' or 'equal' strata.")
N_STRATA_OPT = typer.Option(30, min=1, help="Stratified and OASIS: number of strata.")
ALLOCATION_OPT = typer.Option(AllocationName.neyman, help="Stratified: 'neyman' or "
                                                          "'proportional'.")
EPSILON_OPT = typer.Option(None, help="Importance and OASIS: weight of the uniform mixture "
                                      f"(default {ImportanceSettings.epsilon} for importance, "
                                      f"{OasisSettings.epsilon} for OASIS).", show_default=False)
DEFENSIVE_OPT = typer.Option(None, help="OASIS: share d of v* taken from the prior's static "
                                        "v*_0, in [0, 1), so no weight exceeds 1/d of the prior "
                                        f"design's (default {OasisSettings.defensive}; 0 with "
                                        "--no-floors is the published algorithm).",
                              show_default=False)
FLOORS_OPT = typer.Option(None, "--floors/--no-floors",
                          help="Stratified and OASIS: detection floors for the strata from the "
                               "top of the ranking down (default on).", show_default=False)
REPLACE_OPT = typer.Option(False, help="Passive: sample with replacement.")

# keyword-only parameter name → (annotation, typer option): what ``run_options`` declares
SHARED_OPTIONS: dict[str, tuple[Any, Any]] = {
    "design": (Optional[DesignName], DESIGN_OPT), "seed": (int, SEED_OPT),
    "confidence": (float, CONFIDENCE_OPT), "store": (str, STORE_OPT),
    "json_out": (Optional[Path], JSON_OPT), "report": (Optional[Path], REPORT_OPT),
    "dataset": (Optional[str], DATASET_OPT), "id_col": (Optional[list[str]], ID_OPT),
    "strata": (StrataName, STRATA_OPT), "n_strata": (int, N_STRATA_OPT),
    "allocation": (AllocationName, ALLOCATION_OPT), "epsilon": (Optional[float], EPSILON_OPT),
    "defensive": (Optional[float], DEFENSIVE_OPT), "replace": (bool, REPLACE_OPT),
    "floors": (Optional[bool], FLOORS_OPT)}


def run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``fn``'s keyword-only parameters named like the options every labelling command
    shares (:data:`SHARED_OPTIONS`: design, seed, confidence, store, json, report, dataset, id,
    and the design options checked by :func:`design_options`) their typer options: typer reads
    a command's options from its signature, and this way they are declared once."""
    shared = SHARED_OPTIONS
    sig = inspect.signature(fn)
    params = [p.replace(annotation=shared[p.name][0], default=shared[p.name][1])
              if p.kind is p.KEYWORD_ONLY and p.name in shared else p
              for p in sig.parameters.values()]
    fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    fn.__annotations__.update({name: ann for name, (ann, _) in shared.items()
                               if name in sig.parameters})
    return fn


__all__ = ["AllocationName", "DesignName", "EngineName", "OnConflict", "SEED_MAX",
           "SHARED_OPTIONS", "StrataName", "check_confidence", "check_run", "design_name",
           "design_options", "options_dict", "run_options"]
