"""On-demand scoring of Cold Start runs (issue 13, point 4), by seeded simulation with a
generated truth.

World: Q single-hop queries (a list slot), each with true fillers (each run gives each with
probability 0.5), shared false fillers (probability 0.15) and every run's own false fillers
(Poisson(4) a query: answers no other run gives). The first runs are pooled: the pool holds
their answers judged from the truth; the other runs are not, so their own (false) answers
are never assessed and CS-Score's default policy ignores them.

Claims:
* the unpooled runs' pooled precision is biased upwards (their never-assessed answers are
  ignored): mean bias over repetitions more than 5 Monte Carlo SE above 0 and above 0.1;
* the campaign's estimate's mean bias is within 3 Monte Carlo SE (slow: 40 repetitions of 6
  runs, 240 intervals; the fast suite checks the bias on one world and the campaign's
  mechanics on a small one); its 90% precision interval should cover ≥ 0.90 − 1.645·√(0.9·0.1/n)
  of n intervals, and does not (about 0.875: a strict xfail, ``test_on_demand_coverage``);
* the never-assessed answers are exactly the run's answers outside the pool; pooled labels are
  not asked of the label source again; files and instance keys as cs-score reads them.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from assay.errors import AssayInputError
from assay.formats.kbp import entrypoint_uuid
from assay.labels.sources import CallableLabels
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.scorers.csscore import Options, score_files
from assay.scorers.csscore.ondemand import (format_comparison, normalise_filler, read_runs,
                                            score_on_demand)

SLOT = "per:employee_or_member_of"
Z90 = 1.6448536269514722


def write_world(folder: Path, rng: np.random.Generator, queries: int = 30, pooled: int = 3,
                unpooled: int = 3, true_fillers: int = 8, false_fillers: int = 8
                ) -> tuple[list[str], dict[str, int], dict[str, float]]:
    """Files (queries, pool, runs), the truth of every instance key, each run's true
    precision."""
    qids = [f"CSSF15_ENG_{entrypoint_uuid(f'D{i}', 0, 9, (SLOT,))}" for i in range(queries)]
    xml = ["<query_set>"] + [
        f'<query id="{q}"><name>N{i}</name><docid>D{i}</docid><beg>0</beg><end>9</end>'
        f"<enttype>per</enttype><slot0>{SLOT}</slot0></query>" for i, q in enumerate(qids)]
    (folder / "q.xml").write_text("\n".join(xml + ["</query_set>"]) + "\n")
    runs = [f"run{r}" for r in range(pooled + unpooled)]
    answers: dict[str, list[tuple[str, str, str, bool]]] = {r: [] for r in runs}
    for qi, q in enumerate(qids):
        cands = [(f"T{qi}x{k}", True, 0.5) for k in range(true_fillers)]
        cands += [(f"F{qi}x{k}", False, 0.15) for k in range(false_fillers)]
        for r in runs:
            mine = [(v, t) for v, t, p in cands if rng.random() < p]
            mine += [(f"O{r}q{qi}x{k}", False) for k in range(rng.poisson(4))]
            for v, t in mine:
                answers[r].append((q, v, f"{v}:0-9", t))
    truth: dict[str, int] = {}
    pool, seen, ec = [], set(), {}
    for r in runs[:pooled]:
        for q, v, prov, t in answers[r]:
            if (q, v) in seen:
                continue
            seen.add((q, v))
            if t:
                ec[q] = ec.get(q, 0) + 1
            pool.append(f"A{len(pool) + 1}\t{q}:{SLOT}\t{prov}\t{v}\t{prov}\t{'C' if t else 'W'}"
                        f"\t{'C' if t else 'W'}\t{f'{q}:{ec[q]}' if t else '0'}")
    (folder / "pool.tab").write_text("\n".join(pool) + "\n")
    precision = {}
    for r in runs:
        lines = [f"{q}\t{SLOT}\t{r}\t{prov}\t{v}\tORG\t{prov}\t1.0" for q, v, prov, _ in answers[r]]
        (folder / f"{r}.tab").write_text("\n".join(lines) + "\n")
        for q, v, prov, t in answers[r]:
            truth["\t".join((q, SLOT, normalise_filler(v), f"{prov};{prov}"))] = int(t)
        precision[r] = float(np.mean([t for *_, t in answers[r]]))
    files = [str(folder / "q.xml"), str(folder / "pool.tab")] + [str(folder / f"{r}.tab")
                                                                  for r in runs]
    return files, truth, precision


def one_repetition(tmp: Path, seed: int, pooled: int = 3) -> list[tuple[str, float, float, object]]:
    """(run, true precision, pooled precision, on-demand precision estimate) of each run."""
    tmp.mkdir(parents=True, exist_ok=True)
    files, truth, precision = write_world(tmp, np.random.default_rng(seed), pooled=pooled)
    runs = read_runs(files)
    camp = OnDemandCampaign.create(LabelStore(tmp / "od.db"), "kbp", half_width=0.06,
                                   confidence=0.90, seed=seed)
    rows = score_on_demand(camp, runs, CallableLabels(lambda k: truth[k], "gold"))
    return [(r.runid, precision[r.runid], r.pooled.precision, r.ondemand["precision"])
            for r in rows]


def test_files_keys_and_never_assessed_answers(tmp_path):
    files, truth, precision = write_world(tmp_path, np.random.default_rng(1), queries=6)
    runs = read_runs(files)
    pool_keys = set(runs.pool_labels)
    assert set(runs.runids) == {f"run{r}" for r in range(6)}
    for r in runs.runids:
        assert set(runs.keys[r]) <= set(truth)
        never = {u.key for u in runs.never_assessed[r]}
        assert never == set(runs.keys[r]) - pool_keys
        if r in ("run0", "run1", "run2"):
            assert not never                       # a pooled run: every answer assessed
        assert all(u.source.endswith(f"{r}.tab") and u.line > 0 for u in runs.never_assessed[r])
    assert all(truth[k] == v for k, v in runs.pool_labels.items())
    # the pooled score is cs-score's SF ALL-Micro line
    text = score_files(files, Options(tabs=True)).text
    p3 = runs.pooled["run3"]
    row = next(ln for ln in text.splitlines() if ln.startswith("ALL-Micro\trun3\tALL"))
    assert row.split("\t")[-3:] == [f"{p3.precision:.4f}", f"{p3.recall:.4f}", f"{p3.f1:.4f}"]


def test_pooled_labels_are_not_asked_again(tmp_path):
    files, truth, _ = write_world(tmp_path, np.random.default_rng(2), queries=4, pooled=1,
                                  unpooled=2)
    runs = read_runs(files)
    asked: list[str] = []

    def gold(k: str) -> int:
        asked.append(k)
        return truth[k]

    camp = OnDemandCampaign.create(LabelStore(tmp_path / "od.db"), "kbp", half_width=0.1, seed=1)
    rows = score_on_demand(camp, runs, CallableLabels(gold, "gold"))
    assert asked and not set(asked) & set(runs.pool_labels)
    assert len(asked) == len(set(asked))
    table = format_comparison(rows)
    assert table.splitlines()[0].startswith("run\tinstances\tnever_assessed")
    assert len(table.splitlines()) == 4
    assert all(r.draws > 0 and 0 <= r.ondemand["precision"].estimate <= 1 for r in rows)
    with pytest.raises(AssayInputError, match="no run 'run9'"):
        score_on_demand(camp, runs, CallableLabels(gold, "gold"), runids=["run9"])


def test_unpooled_runs_pooled_precision_is_biased_upwards(tmp_path):
    # no campaign needed: one world of 60 queries, the pooled score against the truth
    files, _, precision = write_world(tmp_path, np.random.default_rng(3), queries=60)
    runs = read_runs(files)
    for r in ("run0", "run1", "run2"):                  # pooled: every answer assessed
        assert runs.pooled[r].precision == pytest.approx(precision[r], abs=1e-12)
    for r in ("run3", "run4", "run5"):                  # not pooled: own answers ignored
        assert runs.pooled[r].unassessed == len(runs.never_assessed[r]) > 0
        assert runs.pooled[r].precision > precision[r] + 0.2


@pytest.fixture(scope="module")
def forty_repetitions(tmp_path_factory):
    """(pooled bias of the unpooled runs, on-demand error, intervals covering, intervals) over
    40 repetitions of 6 runs."""
    tmp = tmp_path_factory.mktemp("kbp40")
    pooled_bias, est_err, covered, n = [], [], 0, 0
    for rep in range(40):
        for runid, true_p, pooled_p, e in one_repetition(tmp / f"r{rep}", 100 + rep):
            n += 1
            covered += e.ci_low <= true_p <= e.ci_high
            est_err.append(e.estimate - true_p)
            if runid in ("run3", "run4", "run5"):
                pooled_bias.append(pooled_p - true_p)
    return np.asarray(pooled_bias), np.asarray(est_err), covered, n


@pytest.mark.slow
def test_pooled_bias_and_on_demand_unbiased(forty_repetitions):
    b, err, covered, n = forty_repetitions
    print(f"pooled bias of unpooled runs {b.mean():+.4f} (SE {b.std(ddof=1) / math.sqrt(len(b)):.4f}); "
          f"on-demand bias {err.mean():+.4f} (SE {err.std(ddof=1) / math.sqrt(len(err)):.4f}); "
          f"coverage {covered}/{n} = {covered / n:.3f}")
    assert b.mean() > 0.1 and b.mean() > 5 * b.std(ddof=1) / math.sqrt(len(b))
    assert abs(err.mean()) <= 3 * err.std(ddof=1) / math.sqrt(len(err))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="a known limitation (issue 12): the 90% intervals cover "
                   "about 0.875 in this world, below 0.90 by ~2.3 binomial SE")
def test_on_demand_coverage(forty_repetitions):
    """Known limitation, measured (session 9; 40 repetitions each, seeds 100+, 500+, 900+): the
    campaign's 90% precision intervals cover 207, 205, 217 of 240 with the blind second stage
    (0.874 of 720) and 211, 210, 212 with the second stage sized from the run's own labels
    (0.879; its bias z −2.7, −2.1, −1.7 against the blind rule's −0.2, −0.3, +2.6). Both are
    below 0.90 by about 2.3 SE of 720; here (seeds 100+, blind) 207/240 = 0.863 is below the
    binomial bound 0.868. Passing earlier was luck, not coverage."""
    _, _, covered, n = forty_repetitions
    assert covered / n >= 0.90 - Z90 * math.sqrt(0.9 * 0.1 / n)


def test_command_line(tmp_path, capsys):
    from assay.scorers.csscore.ondemand_cli import main
    files, truth, _ = write_world(tmp_path, np.random.default_rng(4), queries=4, pooled=1,
                                  unpooled=1)
    gold = tmp_path / "gold.tsv"
    gold.write_text("".join(f"{k}\t{v}\n" for k, v in truth.items()))
    base = ["--store", str(tmp_path / "od.db"), "--half-width", "0.1"]
    # no gold: the first drawn instance the pool did not assess is one error line, exit 2
    assert main([*base, "--campaign", "a", *files]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no label for instance" in err
    never = tmp_path / "never.tsv"
    assert main([*base, "--campaign", "b", "--gold", str(gold), "--never-assessed", str(never),
                 *files]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [r.split("\t")[0] for r in out[1:]] == ["run0", "run1"]
    rows = [r.split("\t") for r in never.read_text().splitlines()]
    assert rows and {r[0] for r in rows} == {"run1"} and all(len(r) == 7 for r in rows)
    gold.write_text("Q\tslot\tx\n")
    assert main([*base, "--campaign", "c", "--gold", str(gold), *files]) == 2
    assert "gold.tsv" in capsys.readouterr().err
