"""Every public function of the core carries a doctest; they run here."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import assay.core

MODULES = sorted({f"assay.core.{m.name}" for m in pkgutil.iter_modules(assay.core.__path__)}
                 | {"assay.errors", "assay.estimation"})


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


def test_every_public_core_function_has_a_doctest():
    missing = []
    for name in MODULES:
        mod = importlib.import_module(name)
        finder = doctest.DocTestFinder()
        tested = {t.name.rsplit(".", 1)[-1] for t in finder.find(mod) if t.examples}
        for public in getattr(mod, "__all__", []):
            obj = getattr(mod, public)
            if callable(obj) and not isinstance(obj, type) and public not in tested:
                missing.append(f"{name}.{public}")
    assert not missing, f"public core functions without a doctest: {missing}"
