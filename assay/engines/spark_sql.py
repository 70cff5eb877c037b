"""assay-hash-v1 and the strata in Spark SQL, for :class:`assay.engines.spark.SparkEngine`.

A 64-bit word lives in a Spark ``bigint`` column as its two's-complement bits (a word w ≥ 2⁶³
is the bigint w − 2⁶⁴). xor (``^``), ``&``, ``|``, ``shiftleft`` and ``shiftrightunsigned``
act on the bits and never overflow. A product mod 2⁶⁴ cannot be a bigint ``*`` (it raises under
``spark.sql.ansi.enabled``, the default since Spark 4) nor a ``decimal(38,0)`` one (a product of
two 64-bit words reaches 2¹²⁸ > 10³⁸), so it is computed from 16-bit limbs: with
z = Σ aᵢ2¹⁶ⁱ and the constant M = Σ mⱼ2¹⁶ʲ,

    L = a₀m₀ + (a₀m₁ + a₁m₀)·2¹⁶                      (< 2⁵⁰)
    H = a₀m₂ + a₁m₁ + a₂m₀ + (a₀m₃ + a₁m₂ + a₂m₁ + a₃m₀)·2¹⁶   (< 2⁵¹)
    z·M mod 2⁶⁴ = ((H + L ≫ 32) mod 2³²)·2³² | (L mod 2³²)

— every intermediate below 2⁶³, so the same SQL runs with ANSI mode on or off. Each step is a
projection of its own (:func:`with_hash`), so no expression is copied into its consumers
(Spark's CollapseProject does not inline a non-trivial expression used more than once), and
the last is marked non-deterministic so that no filter on the hash is pushed down through them.

Words compare as unsigned after flipping the sign bit (:func:`ordered`): u < v as words iff
(u ⊕ 2⁶³) < (v ⊕ 2⁶³) as bigints.

>>> signed(2**64 - 1), unsigned(-1) == 2**64 - 1
(-1, True)
>>> _mul_py(0xFFFFFFFFFFFFFFFF, 3) == (3 * (2**64 - 1)) % 2**64
True
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.hashing import M1, M2, MASK, seed_word

SIGN = 1 << 63
LO32 = 0xFFFFFFFF


def signed(w: int) -> int:
    """The bigint holding the 64-bit word ``w``."""
    w = int(w) & MASK
    return w - (1 << 64) if w >= SIGN else w


def unsigned(b: int) -> int:
    """The 64-bit word held by the bigint ``b``."""
    return int(b) & MASK


def words(values: Any) -> np.ndarray:
    """uint64 words of collected bigints.

    >>> words([-1, 5]).tolist() == [2**64 - 1, 5]
    True
    """
    return np.asarray(list(values), dtype=np.int64).view(np.uint64)


def lit(w: int) -> str:
    """A bigint SQL literal of the word ``w`` (−2⁶³ written as an expression: its literal does
    not parse)."""
    b = signed(w)
    return "(-9223372036854775807L - 1L)" if b == -SIGN else f"{b}L"


def dbl(x: float) -> str:
    """A double SQL literal of a finite float, exact (shortest round-trip repr)."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"


def ordered(col: str) -> str:
    """The bigint of a word column whose signed order is the words' unsigned order."""
    return f"({col} ^ {lit(SIGN)})"


def _limbs(m: int) -> list[int]:
    return [(m >> (16 * i)) & 0xFFFF for i in range(4)]


def _mul_py(z: int, m: int) -> int:
    """The limb product of the module docstring in Python (its reference)."""
    a, c = _limbs(z), _limbs(m)
    low = a[0] * c[0] + ((a[0] * c[1] + a[1] * c[0]) << 16)
    high = (a[0] * c[2] + a[1] * c[1] + a[2] * c[0]
            + ((a[0] * c[3] + a[1] * c[2] + a[2] * c[1] + a[3] * c[0]) << 16))
    return ((((high + (low >> 32)) & LO32) << 32) | (low & LO32)) & MASK


def _mul_steps(z: str, m: int, tag: str) -> list[list[tuple[str, str]]]:
    """Projections ((column, expression) lists) computing ``z``·m mod 2⁶⁴ into ``tag``."""
    c = _limbs(m)
    a = [f"{tag}_a{i}" for i in range(4)]
    limbs = [(a[i], f"(shiftrightunsigned({z}, {16 * i}) & 65535L)") for i in range(4)]
    low = f"({a[0]} * {c[0]}L + shiftleft({a[0]} * {c[1]}L + {a[1]} * {c[0]}L, 16))"
    high = (f"({a[0]} * {c[2]}L + {a[1]} * {c[1]}L + {a[2]} * {c[0]}L + shiftleft("
            f"{a[0]} * {c[3]}L + {a[1]} * {c[2]}L + {a[2]} * {c[1]}L + {a[3]} * {c[0]}L, 16))")
    out = (f"(shiftleft(({tag}_h + shiftrightunsigned({tag}_l, 32)) & {LO32}L, 32) | "
           f"({tag}_l & {LO32}L))")
    return [limbs, [(f"{tag}_l", low), (f"{tag}_h", high)], [(tag, out)]]


def hash_steps(seed: int | str, key: str, out: str) -> list[list[tuple[str, str]]]:
    """Projections computing h(seed, key) (:mod:`assay.engines.hashing`) of the bigint key
    column ``key`` into the column ``out``; temporary columns are named ``out`` + suffix.
    ``seed``: a seed (its seed word S is inlined), or the name of a bigint column holding S."""
    s = seed if isinstance(seed, str) else lit(int(seed_word(seed)))
    t = f"{out}_"
    x = f"({key} ^ {s})"
    steps = [[(t + "y", f"({x} ^ shiftrightunsigned({x}, 30))")]]
    steps += _mul_steps(t + "y", M1, t + "p")
    steps.append([(t + "z", f"({t}p ^ shiftrightunsigned({t}p, 27))")])
    steps += _mul_steps(t + "z", M2, t + "q")
    # "| (spark_partition_id() & 0)" adds nothing but makes the word non-deterministic to the
    # optimizer, which then pushes no filter on it down through the steps above (a pushed-down
    # filter gets each step's expression substituted for its column: ~10⁴ copies of the key)
    steps.append([(out, f"(({t}q ^ shiftrightunsigned({t}q, 31)) | "
                        f"(CAST(spark_partition_id() AS BIGINT) & 0L))")])
    return steps


def with_hash(df: Any, seed: int | str, key: str, out: str) -> Any:
    """``df`` with the column ``out`` = h(seed, ``key``) (a bigint of the word's bits), one
    projection per step, temporaries dropped."""
    from pyspark.sql import functions as F
    keep = [F.col(quote(c)) for c in df.columns if c != out]
    prev: list[str] = []
    for stage in hash_steps(seed, key, out):
        df = df.select(*keep, *[F.col(c) for c in prev],
                       *[F.expr(e).alias(n) for n, e in stage])
        prev = [n for n, _ in stage]
    return df.select(*keep, F.col(out))


def key_expr(columns: list[str], integer: bool) -> str:
    """The item key (a bigint of its bits) of the id ``columns`` in Spark SQL: an integer id
    itself; else the first 16 hex digits of MD5 of the tab-joined text, as two 32-bit halves."""
    if integer and len(columns) == 1:
        return f"CAST({quote(columns[0])} AS BIGINT)"
    text = (f"CAST({quote(columns[0])} AS STRING)" if len(columns) == 1 else
            "concat_ws(char(9), " + ", ".join(f"CAST({quote(c)} AS STRING)" for c in columns)
            + ")")
    md = f"md5(CAST({text} AS BINARY))"
    hi = f"CAST(conv(substr({md}, 1, 8), 16, 10) AS BIGINT)"
    lo = f"CAST(conv(substr({md}, 9, 8), 16, 10) AS BIGINT)"
    return f"(shiftleft({hi}, 32) | {lo})"


def quote(name: str) -> str:
    """A Spark SQL identifier, back-quoted.

    >>> quote('a`b')
    '`a``b`'
    """
    return "`" + name.replace("`", "``") + "`"


def stratum_expr(edges: OrderKeys, score: str = "__s", tie: str = "__to") -> tuple[str, bool]:
    """The stratum #{edges e : e before the item} as a binary search over the edges (a nested
    CASE of depth ⌈log₂(K)⌉, K − 1 = len(edges)); ``tie`` is the item's :func:`ordered` tie
    hash. Returns (expression, whether it reads ``tie``): edges that are score cuts (tie
    2⁶⁴ − 1) compare by score alone.

    >>> stratum_expr(OrderKeys.score_cuts([0.5]))
    ("(CASE WHEN CAST('0.5' AS DOUBLE) > __s THEN 1 ELSE 0 END)", False)
    """
    edges.check_sorted()
    uses_tie = bool((edges.tie != np.uint64(MASK)).any())

    def before(j: int) -> str:
        s, t = dbl(edges.score[j]), int(edges.tie[j])
        if t == MASK:
            return f"{s} > {score}"
        return f"({s} > {score} OR ({s} = {score} AND {lit(t ^ SIGN)} < {tie}))"

    def search(lo: int, hi: int) -> str:        # the count lies in [lo, hi]
        if lo == hi:
            return str(lo)
        mid = (lo + hi) // 2
        return f"(CASE WHEN {before(mid)} THEN {search(mid + 1, hi)} ELSE {search(lo, mid)} END)"

    return search(0, len(edges)), uses_tie


def first_filter(edges: OrderKeys, sizes: np.ndarray, thr: list[int]) -> tuple[str, float]:
    """A cheap filter on ``__s`` and ``__xo`` ahead of the tie hash and the stratum search
    (DuckDB's ``DuckDBEngine._first_filter``): a set W of strata kept whole by their score
    ranges, the rest by the largest hash threshold among them;
    W minimises Σ_W N_h + max_{h∉W} q_h · Σ_{h∉W} N_h over the sets of highest q_h.
    Returns the filter and that number of rows it lets through (expected)."""
    q = np.array([t / 2.0**64 for t in thr])
    k = len(thr)
    order = np.argsort(-q, kind="stable")
    head = np.concatenate([[0.0], np.cumsum(sizes[order].astype(np.float64))])
    tail_q = np.array([q[order[m:]].max() if m < k else 0.0 for m in range(k + 1)])
    cost = head + tail_q * (head[-1] - head)
    m = int(np.argmin(cost))
    whole = np.zeros(k, dtype=bool)
    whole[order[:m]] = True
    parts, a = [], 0
    while a < k:                            # runs of consecutive whole strata
        if not whole[a]:
            a += 1
            continue
        b = a
        while b + 1 < k and whole[b + 1]:
            b += 1
        conds = []
        if b < k - 1:                       # scores ≥ the run's last edge …
            conds.append(f"__s >= {dbl(edges.score[b])}")
        if a > 0:                           # … and ≤ the edge above it (ties: a superset)
            conds.append(f"__s <= {dbl(edges.score[a - 1])}")
        parts.append("(" + " AND ".join(conds) + ")" if conds else "TRUE")
        a = b + 1
    if m < k:
        top = max(thr[j] for j in order[m:])
        parts.append(f"__xo <= {lit(top ^ SIGN)}")
    return (" OR ".join(parts) if parts else "TRUE"), float(cost[m])


def codes_of(edges: OrderKeys, score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Stratum of each (score, tie) key: #{edges before it} (as DuckDB's binned counts)."""
    neg = -edges.score                                  # ascending
    codes = np.searchsorted(neg, -score, side="left")   # edges with a higher score
    hi_eq = np.searchsorted(neg, -score, side="right")
    for i in np.flatnonzero(hi_eq > codes):             # edges of the key's own score
        codes[i] += int(np.searchsorted(edges.tie[codes[i]:hi_eq[i]], tie[i], side="left"))
    return codes.astype(np.int64)


__all__ = ["codes_of", "dbl", "first_filter", "hash_steps", "key_expr", "lit", "ordered",
           "quote", "signed", "stratum_expr", "unsigned", "with_hash"]
