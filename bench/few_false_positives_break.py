"""Worlds built to break the stratified design's count of a few false positives (session 29,
:func:`assay.core.stratified_counts.few_false_positives`): predicted positives in two strata
labelled at 5–50% (false positives of weight up to 10), false negatives in two strata below
(10 of 3,000 labelled 150 times; 20 of 20,000 labelled 100 times, which the labels usually
miss). Coverage and half-width of precision and F1 over 1,000 samples (seed 21), and F1
split by whether the labels hold one of the deep stratum's false negatives.

    [ASSAY_SRC=path/to/checkout] python bench/few_false_positives_break.py
"""
import os
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.environ.get("ASSAY_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
from assay.core.measures import f_measures  # noqa: E402
from assay.core.totals import StratifiedSample  # noqa: E402

FN = (10, 20)          # false negatives of the two strata below the predicted positives
BELOW = ((3000, 150), (20000, 100))
WORLDS = [((200, 400), (20, 20), (4, 8)), ((200, 400), (20, 20), (1, 2)),
          ((100, 1000), (50, 50), (0, 20)), ((60, 60), (30, 6), (0, 6))]


def sample(rng, sizes, labelled, n_fp, fn=FN):
    """One stratified sample: strata 0–1 predicted positives (the first ``n_fp[h]`` false),
    strata 2–3 predicted negatives (the first ``fn[h − 2]`` matches)."""
    st, lab, pred = [], [], []
    for h, (size, n) in enumerate(list(zip(sizes, labelled)) + list(BELOW)):
        kinds = np.zeros(size, dtype=np.int64)       # 0 TN, 1 FN, 2 TP, 3 FP
        if h < 2:
            kinds[:] = 2
            kinds[:n_fp[h]] = 3
        else:
            kinds[:fn[h - 2]] = 1
        got = rng.choice(kinds, size=n, replace=False)
        st.append(np.full(n, h))
        lab.append(((got == 1) | (got == 2)).astype(np.int8))
        pred.append((got >= 2).astype(np.int8))
    return (StratifiedSample(stratum=np.concatenate(st),
                             sizes=np.array(list(sizes) + [b[0] for b in BELOW])),
            np.concatenate(lab), np.concatenate(pred))


if __name__ == "__main__":
    print("| predicted positives (labelled) | false | measure | coverage | half-width | methods | "
          "F1 coverage, deep false negative labelled / not |\n|---|---|---|---|---|---|---|")
    for sizes, labelled, n_fp in WORLDS:
        tp = sum(sizes) - sum(n_fp)
        for alpha, name in ((1.0, "precision"), (0.5, "F1")):
            truth = tp / (tp + alpha * sum(n_fp) + (1 - alpha) * sum(FN))
            rng = np.random.default_rng(21)
            hit, hw, methods, split = [], [], Counter(), {True: [], False: []}
            for _ in range(1000):
                s, lab, pred = sample(rng, sizes, labelled, n_fp)
                e = f_measures(s, lab, pred, alpha)[0]
                hit.append(e.ci_low <= truth <= e.ci_high)
                hw.append((e.ci_high - e.ci_low) / 2)
                methods[e.method] += 1
                split[bool(((s.stratum == 3) & (lab == 1)).any())].append(hit[-1])
            deep = ("" if alpha == 1.0 else " / ".join(
                f"{np.mean(split[k]):.3f} ({len(split[k])})" for k in (True, False)))
            print(f"| {sizes} ({labelled}) | {n_fp} | {name} | {np.mean(hit):.3f} | "
                  f"{np.mean(hw):.3f} | {dict(methods)} | {deep} |", flush=True)
