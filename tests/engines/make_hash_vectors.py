"""Writes hash_vectors.csv: (seed, kind, id, key, hash) of assay-hash-v1 from a plain-Python
reference written from the spec in docs/engines.md (no numpy, no SQL).

    .venv/bin/python tests/engines/make_hash_vectors.py
"""
from __future__ import annotations

import csv
import hashlib
from pathlib import Path

MASK = (1 << 64) - 1


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def ref_hash(seed: int, key: int) -> int:
    return mix64(key ^ mix64((seed + 0x9E3779B97F4A7C15) & MASK))


def ref_key(kind: str, ident: str) -> int:
    if kind == "int":
        return int(ident) & MASK
    return int.from_bytes(hashlib.md5(ident.encode("utf-8")).digest()[:8], "big")


SEEDS = [0, 1, 42, 20261123, (1 << 63) - 1, MASK, MASK - 1, MASK - 2]
INT_IDS = [0, 1, -1, 2, 7, 1000003, -123456789, (1 << 63) - 1, -(1 << 63), 1 << 40]
TEXT_IDS = ["", "0", "1", "abc", "b000aoz7ko", "b000aoz7ko\thttp://www.google.com/base/feeds/x",
            "Zürich", "東京", "a,b", 'quote"d']


def main() -> None:
    out = Path(__file__).with_name("hash_vectors.csv")
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["seed", "kind", "id", "key", "hash"])
        for seed in SEEDS:
            for kind, ids in (("int", INT_IDS), ("text", TEXT_IDS)):
                for i in ids:
                    k = ref_key(kind, str(i))
                    w.writerow([seed, kind, i, k, ref_hash(seed, k)])


if __name__ == "__main__":
    main()
