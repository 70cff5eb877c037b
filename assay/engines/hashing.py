"""The item hash of assay, spec version 1: one 64-bit number per (seed, item), computed
identically in numpy (here) and in each engine's SQL (:func:`mix64_sql`, :func:`key_sql`), so the
same seed picks the same items whichever engine holds the pool (docs/engines.md).

1. **Item key** k (uint64). A pool whose id is one integer column: the id's 64-bit two's
   complement bits. Otherwise (a text id, or several id columns): the id values as text joined
   by a tab (integers in decimal, as :meth:`assay.formats.pool.Pool.key`), encoded as UTF-8;
   k = the first 8 bytes of its MD5 digest read big-endian (the first 16 hex digits).
2. **Seed word** S = mix64(seed + γ mod 2⁶⁴), γ = 0x9E3779B97F4A7C15 (SplitMix64's increment).
3. **Hash** h(seed, k) = mix64(k ⊕ S), where mix64 is SplitMix64's finaliser (Steele, Lea &
   Flood 2014, "Fast splittable pseudorandom number generators", OOPSLA; variant 13 of
   Stafford 2011): z ← (z ⊕ z≫30)·0xBF58476D1CE4E5B9; z ← (z ⊕ z≫27)·0x94D049BB133111EB;
   z ← z ⊕ z≫31, every product mod 2⁶⁴.

mix64 is a bijection of 64-bit words, so for one seed two items with distinct keys never share a
hash (integer ids: never; text ids: only when their MD5 prefixes collide, ≈ N²/2⁶⁵ pairs).
User seeds lie in [0, 2⁶³); the seeds 2⁶⁴−1 (the ranking's tie-break) and 2⁶⁴−2, 2⁶⁴−3 (the
fingerprint) are reserved.

>>> int(seed_word(0)) == 0xE220A8397B1DCDAF   # SplitMix64's first output from state 0
True
>>> int(hash64(0, np.array([0], dtype=np.uint64))[0])
5197578548964807871
>>> key_from_text(["abc"]).tolist() == [0x900150983CD24FB0]
True
"""
from __future__ import annotations

import hashlib
from typing import Iterable

import numpy as np

HASH_SPEC = "assay-hash-v1"
GAMMA = 0x9E3779B97F4A7C15
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1
ORDER_SEED = MASK                  # tie-break of the score ranking
FINGERPRINT_SEEDS = (MASK - 1, MASK - 2)
MAX_USER_SEED = (1 << 63) - 1


def check_seed(seed: int, *, reserved_ok: bool = False) -> int:
    """A seed as a Python int in [0, 2⁶³) (or a reserved one with ``reserved_ok``).

    >>> check_seed(7)
    7
    """
    s = int(seed)
    top = MASK if reserved_ok else MAX_USER_SEED
    if not 0 <= s <= top:
        raise ValueError(f"seed {seed} outside [0, {top}]")
    return s


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic).

    >>> int(mix64(np.array([1], dtype=np.uint64))[0])
    6238072747940578789
    """
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def seed_word(seed: int) -> np.uint64:
    """S = mix64(seed + γ mod 2⁶⁴)."""
    s = check_seed(seed, reserved_ok=True)
    return np.uint64(int(mix64(np.array([(s + GAMMA) & MASK], dtype=np.uint64))[0]))


def hash64(seed: int | np.uint64, keys: np.ndarray) -> np.ndarray:
    """h(seed, k) = mix64(k ⊕ S) for every key (uint64 array)."""
    return mix64(np.asarray(keys, dtype=np.uint64) ^ seed_word(int(seed)))


def key_from_int(ids: np.ndarray) -> np.ndarray:
    """Item keys of integer ids: their two's-complement bits.

    >>> key_from_int(np.array([-1, 5])).tolist() == [2**64 - 1, 5]
    True
    """
    return np.asarray(ids, dtype=np.int64).view(np.uint64)


def key_from_text(texts: Iterable[str]) -> np.ndarray:
    """Item keys of text ids: the first 8 bytes of MD5(UTF-8), big-endian."""
    digests = b"".join(hashlib.md5(t.encode("utf-8")).digest()[:8] for t in texts)
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


# -- the same in SQL (DuckDB dialect: UBIGINT words, products on UHUGEINT masked to 64 bits) ----

def _mul_sql(expr: str, const: int) -> str:
    return f"((({expr})::UHUGEINT * {const}::UHUGEINT) & {MASK}::UHUGEINT)::UBIGINT"


def _xorshift_sql(expr: str, k: int) -> str:
    return f"xor({expr}, ({expr}) >> {k})"


def mix64_sql(expr: str) -> str:
    """mix64 of a UBIGINT SQL expression (DuckDB)."""
    z = _mul_sql(_xorshift_sql(expr, 30), M1)
    z = _mul_sql(_xorshift_sql(z, 27), M2)
    return _xorshift_sql(z, 31)


def hash_sql(seed: int, key_expr: str) -> str:
    """h(seed, key) in DuckDB SQL; the seed word is computed here and inlined as a literal."""
    return mix64_sql(f"xor({key_expr}, {int(seed_word(seed))}::UBIGINT)")


def key_sql(columns: list[str], integer: bool) -> str:
    """The item key of the id ``columns`` in DuckDB SQL (quoted identifiers)."""
    if integer and len(columns) == 1:
        return f"(({quote(columns[0])})::BIGINT::HUGEINT & {MASK}::HUGEINT)::UBIGINT"
    text = (f"CAST({quote(columns[0])} AS VARCHAR)" if len(columns) == 1 else
            "concat_ws(chr(9), " + ", ".join(f"CAST({quote(c)} AS VARCHAR)" for c in columns) + ")")
    return f"('0x' || md5({text})[1:16])::UBIGINT"


def quote(name: str) -> str:
    """A SQL identifier, double-quoted.

    >>> quote('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


__all__ = ["FINGERPRINT_SEEDS", "HASH_SPEC", "ORDER_SEED", "check_seed", "hash64", "hash_sql",
           "key_from_int", "key_from_text", "key_sql", "mix64", "mix64_sql", "quote", "seed_word"]
