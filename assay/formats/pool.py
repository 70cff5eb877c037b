"""Pools: the population of items to evaluate (record pairs, documents, relation instances).

A pool holds, per item, its id (one or more columns), the system's ``prediction`` (0/1) and
optionally a ``score`` (any finite real, higher = more likely positive) and/or a calibrated
``probability`` in [0, 1]. Every column is validated in one place, :func:`load_pool`, and each
error names the file, the first bad row and what was expected.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from assay.errors import AssayInputError

ID_CANDIDATES: tuple[tuple[str, ...], ...] = (("id",), ("item_id",), ("left_id", "right_id"),
                                                ("docno",))
KEY_SEPARATOR = "\t"


def id_keys(ids: pd.DataFrame) -> list[str]:
    r"""The store keys of the rows of ``ids`` (the id columns): their values as text,
    tab-separated.

    >>> id_keys(pd.DataFrame({"a": ["x", "y"], "b": [1, 2]}))
    ['x\t1', 'y\t2']
    """
    cols = [ids[c].astype(str).tolist() for c in ids.columns]
    return [KEY_SEPARATOR.join(t) for t in zip(*cols)] if len(cols) > 1 else cols[0]


@dataclass
class Pool:
    """Items to evaluate: ids, predictions and optional scores/probabilities (all length N)."""

    ids: pd.DataFrame
    prediction: np.ndarray                      # int8, 0/1
    score: np.ndarray | None = None             # float64, finite
    probability: np.ndarray | None = None       # float64 in [0, 1]
    source: str = "<pool>"
    extra: pd.DataFrame | None = field(default=None, repr=False)  # other columns, shown to annotators
    _key_index: dict[str, int] | None = field(default=None, repr=False)
    _key_list: list[str] | None = field(default=None, repr=False)
    _id_texts: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return int(self.prediction.shape[0])

    @property
    def id_columns(self) -> list[str]:
        return list(self.ids.columns)

    def key(self, i: int) -> str:
        """The item's store key: its id values as text, tab-separated (all keys are made once,
        on first use: a per-item row lookup dominated the sampling loop)."""
        if self._key_list is None:
            self._key_list = self.keys()
        return self._key_list[int(i)]

    def keys(self, idx: Sequence[int] | np.ndarray | None = None) -> list[str]:
        return id_keys(self.ids if idx is None else
                       self.ids.iloc[np.asarray(idx, dtype=np.int64)])

    def id_texts(self) -> pd.DataFrame:
        """The id columns as the text that identifies them (:func:`id_text`), made once: a
        gold table is matched against them on every :func:`assay.evaluate` call."""
        if self._id_texts is None:
            self._id_texts = pd.DataFrame({c: id_text(self.ids[c]) for c in self.ids.columns})
        return self._id_texts

    def index_of(self, key: str) -> int | None:
        if self._key_index is None:
            self._key_index = {k: i for i, k in enumerate(self.keys())}
        return self._key_index.get(key)

    def prior_probability(self) -> np.ndarray | None:
        """A guess of P(label = 1) per item: the probability, else the logistic of the score."""
        if self.probability is not None:
            return self.probability
        if self.score is not None:
            with np.errstate(over="ignore"):     # exp(1e300) = inf gives 0, as it should
                return 1.0 / (1.0 + np.exp(-self.score))
        return None

    def fingerprint(self) -> str:
        """A short hash of ids and predictions: identifies the system's output on this pool."""
        h = hashlib.sha256()
        h.update(pd.util.hash_pandas_object(self.ids, index=False).values.tobytes())
        h.update(self.prediction.tobytes())
        return h.hexdigest()[:16]

    def row(self, i: int) -> dict[str, Any]:
        """All fields of item ``i`` (for an annotator)."""
        out: dict[str, Any] = {c: self.ids[c].iloc[i] for c in self.ids.columns}
        if self.extra is not None:
            out.update({c: self.extra[c].iloc[i] for c in self.extra.columns})
        out["prediction"] = int(self.prediction[i])
        if self.score is not None:
            out["score"] = float(self.score[i])
        if self.probability is not None:
            out["probability"] = float(self.probability[i])
        return out


TEXT_SEPARATORS = {".csv": ",", ".txt": ",", ".tsv": "\t"}
_SEPARATOR_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}


def read_table(source: Any, what: str = "pool") -> tuple[pd.DataFrame, str, str]:
    """Read a Parquet/CSV/TSV path, a DataFrame or an Arrow table.

    Returns the frame, a name for messages, and how rows are counted (``"line"`` for text files,
    where the header is line 1, else ``"row"``). Every cell of a CSV/TSV file is read as the
    text written there (``007``, ``1.10``, ``NA`` and ``TRUE`` stay as they are; an empty cell
    is ``""``): ids are never type-guessed, and numeric columns are parsed by their validators.
    """
    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True), f"<{what} DataFrame>", "row"
    try:
        import pyarrow as pa
        if isinstance(source, pa.Table):
            return source.to_pandas(), f"<{what} Arrow table>", "row"
    except ImportError:  # pragma: no cover
        pass
    if not isinstance(source, (str, Path)):
        raise AssayInputError(f"<{what}>", f"cannot read a {type(source).__name__}",
                              expected="a Parquet/CSV path, a pandas DataFrame or an Arrow table")
    path = Path(source)
    name = str(path)
    if not path.exists():
        raise AssayInputError(name, "file not found")
    if path.is_dir():
        raise AssayInputError(name, "is a folder", expected="a Parquet/CSV/TSV file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path), name, "row"
        if suffix in TEXT_SEPARATORS:
            return read_text_table(path, TEXT_SEPARATORS[suffix]), name, "line"
    except AssayInputError:
        raise
    except UnicodeDecodeError as exc:
        raise AssayInputError(name, f"is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                                    f"offset {exc.start})",
                              expected="a UTF-8 CSV/TSV file or Parquet") from None
    except pd.errors.EmptyDataError:
        raise AssayInputError(name, "the file is empty", expected="a header line") from None
    except Exception as exc:  # noqa: BLE001 - re-raised as a user error naming the file
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise AssayInputError(name, f"cannot be read: {detail}") from None
    raise AssayInputError(name, f"unknown file type {suffix!r}",
                          expected=".parquet, .csv or .tsv")


def read_text_table(path: Path, sep: str) -> pd.DataFrame:
    """A CSV/TSV file as text cells; the first line names the columns (a missing last field
    is an empty cell). A row with more fields than the header, a repeated column name or a file that looks delimited by
    another character is an error naming the file (and line)."""
    try:
        raw = pd.read_csv(path, sep=sep, header=None, dtype=str, keep_default_na=False,
                          na_filter=False, encoding="utf-8-sig")
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if m is None:
            raise
        raise AssayInputError(str(path), f"{m[3]} fields where the header has {m[1]}",
                              where=f"line {m[2]}", expected="one value per column") from None
    header = [str(c) for c in raw.iloc[0].tolist()]
    name = str(path)
    if len(header) == 1:
        other = [s for s in _SEPARATOR_NAMES if s != sep and s in header[0]]
        if other:
            raise AssayInputError(name, f"looks {_SEPARATOR_NAMES[other[0]]}-delimited",
                                  expected="commas between the columns of a .csv file, tabs "
                                           "in a .tsv file")
    seen = set()
    for c in header:
        if c in seen:
            raise AssayInputError(name, f"column {c!r} appears twice in the header",
                                  where="line 1", expected="distinct column names")
        seen.add(c)
    df = raw.iloc[1:].reset_index(drop=True)
    df.columns = header
    return df


def shown(value: Any) -> str:
    """A cell value as a user wrote it (numpy scalars unwrapped; a number read as text is
    shown unquoted, other text quoted)."""
    v = value.item() if hasattr(value, "item") else value
    if isinstance(v, str):
        try:
            float(v)
            return v
        except ValueError:
            return repr(v)
    return repr(v)


def where(kind: str, row: int) -> str:
    """Position of 0-based data row ``row``: text files count the header as line 1."""
    return f"line {row + 2}" if kind == "line" else f"row {row + 1}"


def resolve_id_columns(df: pd.DataFrame, name: str,
                       id_columns: Sequence[str] | None) -> list[str]:
    if id_columns:
        missing = [c for c in id_columns if c not in df.columns]
        joined = [c for c in missing if "," in c]
        if joined:
            parts = [p.strip() for p in joined[0].split(",")]
            raise AssayInputError(name, f"no id column {joined[0]!r}",
                                  expected="one column per --id; to name several, repeat the "
                                           "flag: " + " ".join(f"--id {p}" for p in parts))
        if missing:
            raise AssayInputError(name, f"missing id column(s) {missing}",
                                  expected=f"columns among {list(df.columns)}")
        return list(id_columns)
    for cand in ID_CANDIDATES:
        if all(c in df.columns for c in cand):
            return list(cand)
    raise AssayInputError(name, "no id column found",
                          expected="a column 'id', 'item_id', or 'left_id' and 'right_id' "
                                   "(or name the id columns with --id)")


def check_ids(df: pd.DataFrame, cols: list[str], name: str, kind: str,
              unique: bool = True) -> None:
    """Every row has an id (not missing, not blank) and, with ``unique``, a distinct one."""
    ids = df[cols]
    text = [c for c in cols if not _numeric(ids[c]) and ids[c].dtype != bool]  # can hold text
    null = ids.isna().any(axis=1).to_numpy()
    for c in text:                          # blank text
        null = null | _blanks(ids[c])
    if null.any():
        r = int(np.flatnonzero(null)[0])
        raise AssayInputError(name, f"empty id in column(s) {cols}", where=where(kind, r),
                              expected="every item to have an id")
    for c in text if len(cols) > 1 else ():   # the store key joins the columns with a tab
        tab = ids[c].astype(str).str.contains(KEY_SEPARATOR, regex=False).to_numpy()
        if tab.any():
            raise AssayInputError(name, f"id in column {c!r} holds a tab character",
                                  where=where(kind, int(np.flatnonzero(tab)[0])),
                                  expected="ids of several columns without tabs")
    if not unique:
        return
    if len(cols) == 1 and ids[cols[0]].is_unique:      # the common case, without a pass
        return                                          # that marks every row
    dup = ids.duplicated(keep="first").to_numpy()
    if dup.any():
        r = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero((ids == ids.iloc[r]).all(axis=1).to_numpy())[0])
        raise AssayInputError(name, f"duplicate id {ids.iloc[r].tolist()} in column(s) {cols} "
                                    f"(first seen at {where(kind, first)})",
                              where=where(kind, r), expected="each id once")


def _blank(v: Any) -> bool:
    return isinstance(v, str) and not v.strip()


def _blanks(col: pd.Series) -> np.ndarray:
    """:func:`_blank` of every value: only a text whose first character is white space (or
    that is empty) can be blank, so the exact test runs on those alone; the first characters
    are few distinct values, each tested by Python's own ``str.strip``; a column of mixed
    values is tested value by value.

    >>> _blanks(pd.Series(["a", " ", "", " b", 3, None, "\\x1c"], dtype=object)).tolist()
    [False, True, True, False, False, False, True]
    """
    if isinstance(col.dtype, pd.StringDtype) or pd.api.types.infer_dtype(col) == "string":
        values = col.to_numpy(dtype=object, na_value=None)
        text = pa.array(values, type=pa.large_string(), from_pandas=True)   # sliced by Arrow
        first = pc.utf8_slice_codeunits(text, 0, 1)
        white = [k for k in pc.unique(first.drop_null()).to_pylist() if not k.strip()]
        maybe = pc.is_in(first, pa.array(white, type=pa.large_string())).fill_null(False)
        maybe = maybe.to_numpy(zero_copy_only=False)
    else:                                                   # mixed values: one by one
        return np.fromiter((_blank(v) for v in col.to_numpy(dtype=object)), bool, len(col))
    out = np.zeros(len(col), dtype=bool)
    if maybe.any():             # (the flagged values are texts: nulls have no first character)
        out[maybe] = [_blank(v) for v in values[maybe]]
    return out


def id_text(col: pd.Series, like: pd.Series | None = None) -> pd.Series:
    """Ids as the text that identifies them: numbers in their canonical form (integers without
    ``.0``), text as written. With ``like`` (the pool's id column), text ids are first read as
    that column's type when it is numeric, so the text ``68`` matches the integer 68.

    >>> id_text(pd.Series([68, 7])).tolist(), id_text(pd.Series([68.0, 1.5])).tolist()
    (['68', '7'], ['68', '1.5'])
    >>> id_text(pd.Series(["068", "x"]), like=pd.Series([68])).tolist()
    ['68', 'x']
    >>> id_text(pd.Series(["007", "1.10"])).tolist()
    ['007', '1.10']
    """
    if like is not None and _numeric(like) and not _numeric(col):
        num = pd.to_numeric(col, errors="coerce")
        text = col.astype(str)
        return text.where(num.isna(), id_text(num.astype("float64"))).astype(object)
    if _numeric(col):
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
        integral = np.isfinite(vals) & (np.floor(vals) == vals) & (np.abs(vals) < 2.0 ** 63)
        if pd.api.types.is_integer_dtype(col.dtype):
            return col.astype(str).astype(object)
        out = [str(int(v)) if ok else str(v) for v, ok in zip(vals.tolist(), integral.tolist())]
        return pd.Series(out, index=col.index, dtype=object)
    return col.astype(str).astype(object)


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)


def binary_column(df: pd.DataFrame, col: str, name: str, kind: str) -> np.ndarray:
    """A 0/1 column as int8; the first value that is not 0/1 (or true/false) is an error."""
    raw = df[col]
    if raw.dtype == bool or str(raw.dtype) == "boolean":
        vals = raw.astype("float64")
    elif _numeric(raw):                     # no text to read: no per-value pass
        vals = raw.astype("float64")
    else:
        words = raw.map(lambda v: _TRUTH.get(v.strip().lower(), v) if isinstance(v, str) else v)
        vals = pd.to_numeric(words, errors="coerce").astype("float64")
    arr = vals.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isin(arr, (0.0, 1.0))
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise AssayInputError(name, f"column '{col}' has value {shown(raw.iloc[r])}",
                              where=where(kind, r), expected="0 or 1")
    return arr.astype(np.int8)


_TRUTH = {"true": "1", "false": "0"}


def real_column(df: pd.DataFrame, col: str, name: str, kind: str,
                lo: float | None = None, hi: float | None = None) -> np.ndarray:
    raw = df[col]
    arr = pd.to_numeric(raw, errors="coerce").astype("float64").to_numpy(dtype=np.float64,
                                                                          na_value=np.nan)
    bad = ~np.isfinite(arr)
    if lo is not None:
        bad |= arr < lo
    if hi is not None:
        bad |= arr > hi
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        rng = "a finite real number" if lo is None else f"a number in [{lo}, {hi}]"
        raise AssayInputError(name, f"column '{col}' has value {shown(raw.iloc[r])}",
                              where=where(kind, r), expected=rng)
    return arr


def load_pool(source: Any, id_columns: Sequence[str] | None = None,
              prediction: str = "prediction", score: str | None = "score",
              probability: str | None = "probability") -> Pool:
    """Load and validate a pool from Parquet, CSV/TSV, a pandas DataFrame or an Arrow table.

    Required: the id column(s) and ``prediction`` (0/1). Optional: ``score`` (finite real) and
    ``probability`` (in [0, 1]); a ``label`` column, if present, is ignored (labels come only from
    a label source). Raises :class:`AssayInputError` naming the source, first bad row and what was
    expected.
    """
    if isinstance(source, Pool):
        return source
    df, name, kind = read_table(source, "pool")
    if len(df) == 0:
        raise AssayInputError(name, "the pool is empty", expected="at least one item")
    cols = resolve_id_columns(df, name, id_columns)
    if prediction not in df.columns:
        raise AssayInputError(name, f"missing column '{prediction}'",
                              expected=f"a 0/1 prediction column among {list(df.columns)}")
    check_ids(df, cols, name, kind)
    pred = binary_column(df, prediction, name, kind)
    sc = real_column(df, score, name, kind) if score and score in df.columns else None
    pr = (real_column(df, probability, name, kind, 0.0, 1.0)
          if probability and probability in df.columns else None)
    used = set(cols) | {prediction, score, probability, "label"}
    extra_cols = [c for c in df.columns if c not in used]
    ids = df[cols].reset_index(drop=True)
    return Pool(ids=ids, prediction=pred, score=sc, probability=pr, source=name,
                extra=df[extra_cols].reset_index(drop=True) if extra_cols else None)
