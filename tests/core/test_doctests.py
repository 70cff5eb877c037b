"""Every module's doctests run here (all of ``assay``, migrations aside); every public function of
the core carries one."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import assay
import assay.core

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
EVERY = sorted(m.name for m in pkgutil.walk_packages(assay.__path__, "assay.")
               if ".migrations" not in m.name)
CORE = sorted({f"assay.core.{m.name}" for m in pkgutil.iter_modules(assay.core.__path__)}
              | {"assay.errors", "assay.estimation"})


@pytest.mark.parametrize("name", EVERY)
def test_doctests(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert res.failed == 0


def test_the_walk_reaches_every_package():
    """The modules whose doctests were once run by hand elsewhere are among those walked."""
    for name in ("assay.worlds", "assay.outputs", "assay.engines.hashing",
                 "assay.ondemand.joint", "assay.ondemand.planning", "assay.ondemand.sizing",
                 "assay.service.quality", "assay.core.measures"):
        assert name in EVERY
    attempted = sum(doctest.testmod(importlib.import_module(n), optionflags=FLAGS).attempted
                    for n in ("assay.worlds", "assay.ondemand.sizing"))
    assert attempted >= 16


def test_every_public_core_function_has_a_doctest():
    missing = []
    for name in CORE:
        mod = importlib.import_module(name)
        finder = doctest.DocTestFinder()
        tested = {t.name.rsplit(".", 1)[-1] for t in finder.find(mod) if t.examples}
        for public in getattr(mod, "__all__", []):
            obj = getattr(mod, public)
            if callable(obj) and not isinstance(obj, type) and public not in tested:
                missing.append(f"{name}.{public}")
    assert not missing, f"public core functions without a doctest: {missing}"
