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
  of n intervals, and on seeds 100+ does not (207 of 240: a strict xfail,
  ``test_on_demand_coverage``, whose docstring gives the diagnosis: these draws, not the
  interval; the same procedure covers 0.896 of 15,420 intervals);
* the campaign makes exactly the draws and estimates of the store-free driver
  (``simulate.in_turn`` over the instance keys in sorted order), so the driver's simulations
  measure the campaign;
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
def test_on_demand_coverage():
    """The campaign's 90% precision intervals over 3,000 intervals (500 worlds × 6 runs, seeds
    10000–10499, chosen before they were run: 2,713 covered = 0.904; 2,718 = 0.906 since the
    sizing's search moved from bisection to :func:`assay.core.search.least_reaching`, whose
    answer differs from bisection's in 22 of 65,328 sizing calls of the on-demand tests, where
    the planning width is not monotone in d), through the store-free
    driver that makes exactly the campaign's draws and estimates
    (``test_campaign_is_the_store_free_driver``), within 3 binomial SE of 0.90 (the suite's
    coverage band; 0.8836 here). Until session 10 this was a 240-interval check at 1.645 SE on
    the 40 campaign repetitions of :func:`forty_repetitions`, a strict xfail since those seeds
    cover 207 of 240 — a chance shortfall, diagnosed as follows.
Fails on these seeds by chance of the draws; measured (issue 12, blind second stage).

    The campaign's 90% precision intervals cover 207, 205, 217 of 240 on seeds 100+, 500+,
    900+ (629 of 720 = 0.874; the rule sizing the second stage from the run's own labels 211,
    210, 212). Diagnosis, with the store-free driver that makes exactly the campaign's draws
    (``test_campaign_is_the_store_free_driver``; rows in the campaign's sorted-key order):

    * the same 120 worlds with other draws (rows in generation order) cover 220, 219, 209 of
      240 (0.900): the worlds are not hard, the draws on 100+ and 500+ were unlucky;
    * over 15,420 intervals (seeds 100–139, 500–539, 900–939, 1300–1379 through the campaign;
      2000–2149, 3000–3299, 5000–5249, 7000–7499 through the driver in both row orders) the
      coverage is 0.896 (± 0.0025): 0.893 of 7,500 in the campaign's order, 0.899 of 7,920 in
      the other (the row order only changes which of near-equal-cost plans wins, e.g. world
      101's run1 fills in one order and draws its own set in the other; 7000+ reverses the
      gap: 0.900 against 0.895); every system's half-width ≈ 0.0594 (the plan meets 0.06), so
      n_eff = p(1 − p)/V ≈ 188 for all of them;
    * the variance is right: with the design fixed (each set's size and fill density from one
      campaign, items redrawn 300 times, worlds 101–103, 5000–5003) the Monte Carlo s.d. over
      the printed s.e. is 0.95–1.10 per run (mean ≈ 1.0), z skew −0.5 to +0.3, coverage
      0.887–0.902; misses fall on both sides (seeds 100/500/900: 41 intervals above the truth,
      50 below); the bias is within 3 SE;
    * the residual ≈ 0.004 is the Wald interval's own at n_eff ≈ 188 (a binomial of 188 at
      p ∈ [0.36, 0.48]: Wald 0.8975, Wilson 0.900). A t quantile on the Welch–Satterthwaite
      degrees of freedom of (M2) (median 186, least 15) changes no interval's verdict on these
      seeds; Wilson's score interval on n_eff covers 0.898 of the 15,420 (+0.0023, half-width
      1% narrower) and 207, 206, 216 of 240 here. No honest construction passes 100+ and 500+:
      at coverage 0.896 P(≤ 207 of 240) = 0.060 and P(≤ 205) = 0.026."""
    import tempfile

    from assay.ondemand import joint, simulate
    covered = n = 0
    for seed in range(10_000, 10_500):
        with tempfile.TemporaryDirectory() as tmp:
            files, gold, _ = write_world(Path(tmp), np.random.default_rng(seed))
            _, memb, truth = _arrays(read_runs(files), gold)
        sim = simulate.in_turn(memb, truth, 0.06, 0.90, seed=seed)
        uni, at = sim.universe(memb)
        est, _ = joint.estimate(uni, sim.src(memb.shape[1]), at, sim.f, None, 0.90)
        true_p = (memb & truth[:, None]).sum(0) / memb.sum(0)
        for k, e in enumerate(est["precision"]):
            n += 1
            covered += e.ci_low <= true_p[k] <= e.ci_high
    assert covered / n >= 0.90 - 3 * math.sqrt(0.9 * 0.1 / n), (covered, n)


def _arrays(runs, truth: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs as the campaign sees them: the instance keys sorted (the campaign's row order),
    which run output which instance, and each instance's truth."""
    keys = np.array(sorted({k for r in runs.runids for k in runs.keys[r]}), dtype=object)
    where = {k: i for i, k in enumerate(keys)}
    memb = np.zeros((len(keys), len(runs.runids)), dtype=bool)
    for j, r in enumerate(runs.runids):
        memb[[where[k] for k in runs.keys[r]], j] = True
    return keys, memb, np.array([truth[k] for k in keys])


def test_campaign_is_the_store_free_driver(tmp_path):
    """The campaign over the runs' instance keys makes the draws of ``simulate.in_turn`` over
    the same universe (rows: the keys sorted), and the same estimates."""
    from assay.ondemand import joint, simulate
    files, truth, _ = write_world(tmp_path, np.random.default_rng(7), queries=8, pooled=2,
                                  unpooled=2)
    runs = read_runs(files)
    camp = OnDemandCampaign.create(LabelStore(tmp_path / "od.db"), "kbp", half_width=0.08,
                                   confidence=0.90, seed=7)
    rows = score_on_demand(camp, runs, CallableLabels(lambda k: truth[k], "gold"))
    keys, memb, truth_arr = _arrays(runs, truth)
    sim = simulate.in_turn(memb, truth_arr, 0.08, 0.90, seed=7)
    assert camp.od.draws(camp.row.id)["item"].tolist() == keys[sim.item].tolist()
    uni, at = sim.universe(memb)
    est, _ = joint.estimate(uni, sim.src(memb.shape[1]), at, sim.f, None, 0.90)
    for r, e in zip(rows, est["precision"]):
        got = r.ondemand["precision"]
        assert (got.estimate, got.ci_low, got.ci_high) == pytest.approx(
            (e.estimate, e.ci_low, e.ci_high), abs=1e-12)


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
