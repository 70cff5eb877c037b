"""Why splink's precision fails the 3-SE check on FEBRL in turn (bench/out/febrl_in_turn_blind.md):
a rare event the 200 repetitions under-sample, not a bias.

splink_given_surname has two false links in 4,283, both output by rule_given_surname too. A
repetition's estimate is 1 unless a draw lands on one of them. For each repetition (the bench's
seeds) the expected number of such draws given the draws' proposals, Σ_draws Q_src(x) over the
two rows, against the number seen; an unbiased estimate needs P(hit) × (1 − estimate | hit) ≈
1 − p.

    nice -n 10 .venv/bin/python bench/febrl_splink_rare.py 200 20261123
"""
import sys, numpy as np
sys.path.insert(0, "bench")
import febrl_in_turn as B
bed = B.load()
k = bed.names.index("splink_given_surname")
false_rows = np.flatnonzero(bed.memb[:, k] & ~bed.truth)
nov = bed.memb[:, k] & ~bed.memb[:, :k].any(axis=1)
print("splink false rows", false_rows, "in novel part:", nov[false_rows], "novel size", nov.sum(),
      "size", bed.memb[:, k].sum(), "outputs of false rows", bed.memb[false_rows].astype(int))
truth = bed.true_scores()["precision"][k]
est, hits, draws, expect = [], [], [], []
reps = int(sys.argv[1]); seed0 = int(sys.argv[2])
for r in range(reps):
    sim, rec, e = B.repetition(bed, 0.03, 0.95, 500, seed0 + r)
    est.append(e["precision"][k].estimate)
    hits.append(int(np.isin(sim.item, false_rows).sum()))
    uni, at = B.final_universe(sim, bed.memb)
    rows = np.flatnonzero(bed.memb.any(axis=1)); fr = np.searchsorted(rows, false_rows)
    q = uni.proposals()[fr]                      # 2 x 3m
    src = sim.src(bed.memb.shape[1])
    expect.append(float(q[:, src].sum()))
    draws.append(int((sim.system == k).sum()))
est, hits = np.array(est), np.array(hits)
print("truth", truth, "mean", est.mean(), "z", (est.mean()-truth)/(est.std(ddof=1)/np.sqrt(reps)))
print("reps with a false link drawn", (hits > 0).mean(), "mean est | hit", est[hits > 0].mean() if (hits>0).any() else None,
      "| no hit", est[hits == 0].mean(), "splink draws mean", np.mean(draws))
print("hits observed per rep", hits.mean(), "expected", np.mean(expect))
import collections; print(sorted(collections.Counter(np.round(est, 4)).items())[:12])
