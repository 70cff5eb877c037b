"""Settings as data: one frozen dataclass per design, the one place for their defaults.

Each settings object converts to and from a plain dict (``to_dict``/``from_dict``; an unknown key
is an :class:`~assay.errors.AssayInputError` naming it), validates itself, and tells which fields
differ from their defaults (``changed``): a run's identity hashes only those, so adding a field
with a default never changes an existing run's key. The full dict is saved with every run.

>>> s = StratifiedSettings(n_strata=10)
>>> s.changed()
{'n_strata': 10}
>>> settings_from_dict(s.to_dict()) == s
True
>>> settings_from_options("importance", {"epsilon": 0.2, "replace": False}).epsilon
0.2
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from assay.designs.auto import EXPLORE
from assay.designs.oasis import DEFAULT_DEFENSIVE
from assay.errors import AssayInputError

ALLOCATIONS = ("neyman", "proportional")
STRATA = ("csf", "equal")


@dataclass(frozen=True)
class DesignSettings:
    """What every design shares: ``alpha``, the weight of precision in F_α used to plan."""

    name: ClassVar[str] = "design"
    alpha: float = 0.5

    def __post_init__(self) -> None:
        self._check(0.0 <= self.alpha <= 1.0, "alpha", self.alpha, "a number in [0, 1]")

    def _check(self, ok: bool, field: str, value: Any, expected: str) -> None:
        if not ok:
            raise AssayInputError(f"{self.name} setting {field!r}", repr(value),
                                  expected=expected)

    def to_dict(self) -> dict[str, Any]:
        """Every field, with the design's name."""
        return {"design": self.name, **asdict(self)}

    def changed(self) -> dict[str, Any]:
        """The fields whose value differs from the default (what a run's identity hashes)."""
        default = type(self)()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}


@dataclass(frozen=True)
class PassiveSettings(DesignSettings):
    """Uniform sampling; ``replace``: with replacement (Raj's ordered estimator) instead of SRS."""

    name: ClassVar[str] = "passive"
    replace: bool = False


@dataclass(frozen=True)
class StratifiedSettings(DesignSettings):
    """Score strata (``strata``: csf or equal; ``n_strata``) with ``allocation`` neyman or
    proportional, sampled without replacement within strata; ``floors``: the Neyman allocation
    under bounds with detection floors (issue 11, :mod:`assay.designs.stratified`; a run
    saved without this field was drawn without them and replays so); ``by_prediction``: each
    score stratum split into the system's predicted positives and the rest
    (:func:`assay.core.strata.by_prediction`; in memory; a run saved without it replays
    without)."""

    name: ClassVar[str] = "stratified"
    strata: str = "csf"
    n_strata: int = 30
    allocation: str = "neyman"
    floors: bool = True
    by_prediction: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(isinstance(self.by_prediction, bool), "by_prediction", self.by_prediction,
                    "true or false")
        self._check(self.strata in STRATA, "strata", self.strata, "'csf' or 'equal'")
        self._check(isinstance(self.n_strata, int) and self.n_strata >= 1, "n_strata",
                    self.n_strata, "a whole number of strata ≥ 1")
        self._check(self.allocation in ALLOCATIONS, "allocation", self.allocation,
                    "'neyman' or 'proportional'")
        self._check(isinstance(self.floors, bool), "floors", self.floors, "true or false")


@dataclass(frozen=True)
class ImportanceSettings(DesignSettings):
    """Static importance sampling; ``epsilon``: weight of the uniform mixture (seed 002 eq. 6)."""

    name: ClassVar[str] = "importance"
    epsilon: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(0.0 < self.epsilon <= 1.0, "epsilon", self.epsilon, "a number in (0, 1]")


@dataclass(frozen=True)
class OasisSettings(DesignSettings):
    """OASIS (seed 002): ``epsilon`` of eq. 12, ``n_strata``/``strata`` of the CSF or equal
    strata, ``prior_strength`` η per stratum (None: 2), ``decaying_prior`` (Remark 4),
    ``v_star`` 'paper' or 'rms', ``threshold`` τ of the logistic prior, ``n_bins`` of CSF,
    ``defensive`` the share d of v* taken from the prior's static v*_0 (0.5 by default since
    issue 11, so no importance weight exceeds 1/d of the prior design's), ``floors`` the
    detection floors of the strata from the top down (:func:`assay.designs.oasis.
    detection_shares`; on by default since issue 11; ``defensive=0, floors=False`` with the
    other defaults is the published algorithm: :mod:`assay.designs.oasis`), ``by_prediction``
    the strata split by the prediction where it does not follow the score (in memory; a run
    saved without it replays without)."""

    name: ClassVar[str] = "oasis"
    epsilon: float = 1e-3
    n_strata: int = 30
    strata: str = "csf"
    prior_strength: float | None = None
    decaying_prior: bool = True
    v_star: str = "paper"
    threshold: float = 0.0
    n_bins: int | None = None
    defensive: float = DEFAULT_DEFENSIVE
    floors: bool = True
    by_prediction: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(isinstance(self.by_prediction, bool), "by_prediction", self.by_prediction,
                    "true or false")
        self._check(0.0 < self.epsilon <= 1.0, "epsilon", self.epsilon, "a number in (0, 1]")
        self._check(0.0 <= self.defensive < 1.0, "defensive", self.defensive,
                    "a share in [0, 1) (0: the published design)")
        self._check(isinstance(self.floors, bool), "floors", self.floors, "true or false")
        self._check(isinstance(self.n_strata, int) and self.n_strata >= 1, "n_strata",
                    self.n_strata, "a whole number of strata ≥ 1")
        self._check(self.strata in STRATA, "strata", self.strata, "'csf' or 'equal'")
        self._check(self.prior_strength is None or self.prior_strength > 0, "prior_strength",
                    self.prior_strength, "a positive number")
        self._check(self.v_star in ("paper", "rms"), "v_star", self.v_star, "'paper' or 'rms'")


@dataclass(frozen=True)
class AutoSettings(DesignSettings):
    """``auto``: ``first`` the top stratum's size (None: from the budget), ``batches`` of
    re-allocation, calibration ``degree`` (0: averaged hinges), ``census_share`` of the budget
    for the census of the top (None: ½ under imbalance, else 0.1), ``tail_sd`` > 0: the decay
    past the census gets a slope of its own with that prior s.d. on the change (0: off, as in
    runs stored before it existed; :meth:`assay.core.rank_model.RankedStrata.tail_knee`), ``audit_share`` of the budget drawn
    uniformly over the ranks the census leaves out (0: none), ``explore`` the share of the
    labels' floor below matches that the re-allocation plans for (0: none, as in runs stored
    before it existed; :func:`assay.designs.auto.exploration_rates`)."""

    name: ClassVar[str] = "auto"
    first: int | None = None
    batches: int = 5
    degree: int = 0
    census_share: float | None = None
    tail_sd: float = 2.0
    audit_share: float = 0.0
    explore: float = EXPLORE

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(0.0 <= self.explore <= 1.0, "explore", self.explore, "a share in [0, 1]")
        self._check(0.0 <= self.audit_share <= 0.5, "audit_share", self.audit_share,
                    "a share of the budget in [0, 0.5]")
        self._check(self.tail_sd >= 0.0, "tail_sd", self.tail_sd, "a prior s.d. ≥ 0 (0: off)")
        self._check(self.first is None or self.first >= 1, "first", self.first,
                    "a positive stratum size")
        self._check(self.batches >= 1, "batches", self.batches, "at least 1 batch")
        self._check(self.census_share is None or 0.0 <= self.census_share <= 1.0,
                    "census_share", self.census_share, "a share in [0, 1]")


SETTINGS: dict[str, type[DesignSettings]] = {
    c.name: c for c in (AutoSettings, PassiveSettings, StratifiedSettings, ImportanceSettings,
                        OasisSettings)}


def _klass(design: str) -> type[DesignSettings]:
    if design not in SETTINGS:
        raise AssayInputError("--design", repr(design), expected=f"one of {', '.join(SETTINGS)}")
    return SETTINGS[design]


_RUN_FACTS = {"budget", "pool_size", "n_strata"}


def settings_from_dict(data: dict[str, Any], design: str | None = None) -> DesignSettings:
    """Settings from ``to_dict()`` output (the ``design`` key, or ``design``); an unknown key
    is an error naming it. A run stored by release 0.1.0 saved its design's params instead:
    their budget, ``n_strata`` (where not a setting) and ``pool_size`` are set aside.

    >>> s = settings_from_dict({"design": "auto", "budget": 120, "first": 8, "n_strata": 15,
    ...                         "pool_size": 149747})
    >>> s.first, s.tail_sd
    (8, 0.0)
    """
    data = dict(data)
    klass = _klass(str(data.pop("design", design)))
    if klass is AutoSettings:
        data.setdefault("tail_sd", 0.0)     # a run stored before the tail knee replays as drawn
        data.setdefault("explore", 0.0)     # … and one stored before the exploration below matches
    if klass is StratifiedSettings or klass is OasisSettings:
        data.setdefault("floors", False)    # … and one stored before the detection floors
        data.setdefault("by_prediction", False)     # … or before the split by prediction
    known = {f.name for f in fields(klass)}
    for key in _RUN_FACTS - known:      # a run stored by release 0.1.0 saved its design's
        data.pop(key, None)             # params: the budget and sizes beside the settings
    for key in data:
        if key not in known:
            raise AssayInputError(f"{klass.name} settings", f"unknown setting {key!r}",
                                  expected=f"one of {', '.join(sorted(known))}")
    return klass(**data)


# the old ``options`` dict (shared by every design in the CLI) → each design's own fields
_OPTION_NAMES = {"oasis": {"oasis_epsilon": "epsilon"}}
_SHARED_OPTIONS = {"strata", "n_strata", "allocation", "epsilon", "replace", "oasis_epsilon",
                   "first", "batches", "degree", "census_share", "tail_sd", "audit_share", "explore", "prior_strength",
                   "decaying_prior", "v_star", "threshold", "n_bins", "alpha",
                   "defensive", "floors", "by_prediction"}


def settings_from_options(design: str, options: dict[str, Any] | None,
                          alpha: float | None = None) -> DesignSettings:
    """Convert the legacy ``options`` dict of the CLI/API once, at the edge: keys that belong
    to another design are ignored (the CLI passes one set for all), unknown keys are errors."""
    klass = _klass(design)
    rename = _OPTION_NAMES.get(design, {})
    known = {f.name for f in fields(klass)}
    kept: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key not in _SHARED_OPTIONS:
            raise AssayInputError("options", f"unknown setting {key!r}",
                                  expected=f"one of {', '.join(sorted(_SHARED_OPTIONS))}")
        if key == "epsilon" and "epsilon" in rename.values():
            continue                     # importance's epsilon, not OASIS's
        name = rename.get(key, key)
        if name in known and value is not None:
            kept[name] = value
    if alpha is not None:
        kept["alpha"] = alpha
    for key in ("n_strata", "batches", "degree", "first", "n_bins"):
        if key in kept and isinstance(kept[key], float) and kept[key].is_integer():
            kept[key] = int(kept[key])
    return klass(**kept)


__all__ = ["AutoSettings", "DesignSettings", "ImportanceSettings", "OasisSettings",
           "PassiveSettings", "SETTINGS", "StratifiedSettings", "settings_from_dict",
           "settings_from_options"]
