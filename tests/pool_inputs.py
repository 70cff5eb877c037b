"""Small generated inputs for CLI tests (a module of its own: ``from conftest import`` could find
another folder's conftest.py in a whole-suite run)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_random_pool(folder: Path, seed: int, n: int) -> Path:
    """``pool.csv`` (id, score, prediction = score > 0) and ``gold.csv`` (id, label with
    prevalence 0.4, independent of the score) in ``folder``: small inputs for CLI tests."""
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n)
    pd.DataFrame({"id": np.arange(n), "score": score,
                  "prediction": (score > 0).astype(int)}).to_csv(folder / "pool.csv",
                                                                  index=False)
    pd.DataFrame({"id": np.arange(n), "label": (rng.random(n) < 0.4).astype(int)}).to_csv(
        folder / "gold.csv", index=False)
    return folder
