"""C numerics of the original ``scorer2``: single-precision floats, ``atof`` and ``printf``.

The original program keeps every weight and every sum in a C ``float`` and prints them with
``printf("%.2f")``/``("%.3f")``.  A double-precision port prints different totals on large files,
so every arithmetic step here is done in double precision and then rounded to single precision.
For one IEEE operation (``+ - * /``) on single-precision operands that is exact: a double holds
more than ``2 * 24 + 2`` bits, so the double result rounded to ``float`` is the correctly rounded
``float`` result (no double rounding).  The rounding itself is a C cast done by :mod:`array`.
"""
from __future__ import annotations

import math
import re
import struct
from array import array

__all__ = ["f32", "f32_add", "f32_mul", "f32_div", "c_div", "atof", "c_format", "NEG_NAN"]

_CELL = array("f", [0.0])

#: The NaN an x86 FPU produces for ``0.0 / 0.0``: sign bit set, so glibc prints it as ``-nan``.
NEG_NAN: float = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]


def f32(x: float) -> float:
    """Round a double to the nearest single-precision value (a C ``(float)`` cast)."""
    _CELL[0] = x
    return _CELL[0]


def f32_add(a: float, b: float) -> float:
    """``a + b`` in C ``float`` arithmetic."""
    return f32(a + b)


def f32_mul(a: float, b: float) -> float:
    """``a * b`` in C ``float`` arithmetic."""
    return f32(a * b)


def c_div(a: float, b: float) -> float:
    """``a / b`` in IEEE double arithmetic, as C computes it (no exception on zero divisors).

    ``0 / 0`` yields the negative default NaN of x86 (printed ``-nan``), ``x / 0`` a signed
    infinity, and a NaN operand propagates.
    """
    if b != 0.0 or math.isnan(b):
        return a / b
    if a == 0.0:
        return NEG_NAN
    if math.isnan(a):
        return a
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def f32_div(a: float, b: float) -> float:
    """``a / b`` in C ``float`` arithmetic."""
    return f32(c_div(a, b))


_WS = " \t\n\v\f\r"
_ATOF = re.compile(
    r"[+-]?(?:"
    r"0[xX](?P<hex>(?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<dec>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    r"|(?P<nan>[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
    r")"
)


def atof(text: str) -> float:
    """C ``atof``: the longest numeric prefix of *text* (after white space), else ``0.0``.

    Accepts what glibc ``strtod`` accepts: decimal and hexadecimal floats, ``inf``/``infinity``
    and ``nan``; trailing characters are ignored (``"0.6)"`` reads as 0.6, ``"x"`` as 0.0).
    """
    m = _ATOF.match(text.lstrip(_WS))
    if m is None:
        return 0.0
    negative = m.group(0).startswith("-")
    if m.group("hex") is not None:
        mantissa = m.group("hex")
        value = float.fromhex("0x" + mantissa if "p" in mantissa.lower() else "0x" + mantissa + "p0")
    elif m.group("dec") is not None:
        value = float(m.group("dec"))
    elif m.group("inf") is not None:
        value = math.inf
    else:
        value = math.nan
    return -value if negative else value


def c_format(x: float, decimals: int) -> str:
    """glibc ``printf("%.<decimals>f", x)``, including ``inf``, ``-inf``, ``nan`` and ``-nan``."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{decimals}f}"
