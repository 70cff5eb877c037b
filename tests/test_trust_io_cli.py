"""Issue 10, points 7 and 10 (command-line side): one line, exit 2, never a traceback and never
a secret; a closed stdout ends quietly with the outputs written.

On the release before (74dff40): ``--seed -1`` and a seed beyond 64 bits ended in numpy
tracebacks, ``--n-strata 0`` silently became 1, ``assay evaluate … | head -1`` exited 1 with
no message and no JSON, and any exception that was not an AssayInputError (a database driver's
error carrying the store URL) reached the user as a traceback, password included.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.interfaces.cli import app
from pool_inputs import write_random_pool

runner = CliRunner()
SECRET = "S3cretPw"


@pytest.fixture()
def files(tmp_path):
    return write_random_pool(tmp_path, seed=5, n=400)


def run(files, *extra, store=None):
    return runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                               str(files / "gold.csv"), "--budget", "30", "--store",
                               store or str(files / "s.db"), *extra])


def one_line(res, code=2) -> str:
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output and SECRET not in res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.mark.parametrize("args,needles", [
    (["--seed", "-1"], ["--seed", "-1", "[0, 2^63 − 1]"]),
    (["--seed", str(2 ** 64 + 5)], ["--seed", str(2 ** 64 + 5), "[0, 2^63 − 1]"]),
    (["--n-strata", "0", "--design", "stratified"], ["--n-strata", "greater than or equal to 1"]),
    (["--n-strata", "0"], ["--n-strata"]),
    (["--budget", "0"], ["--budget"]),
    (["--design", "magic"], ["--design", "magic"]),
    (["--confidence", "nan"], ["--confidence"]),
    (["--no-such-option"], ["--no-such-option"]),
    (["--epsilon", "2", "--design", "stratified"], ["--epsilon", "(0, 1]"]),  # was ignored
    (["--strata", "geo", "--design", "passive"], ["--strata", "geo"]),
    (["--fpr", "2"], ["--fpr", "[0, 1]"]),
])
def test_bad_options_are_one_line_exit_2(files, args, needles):
    line = one_line(run(files, *args))
    assert line.startswith("error: ")
    for n in needles:
        assert n in line


def test_demo_rejects_a_negative_seed():
    line = one_line(runner.invoke(app, ["demo", "--seed", "-3", "--budget", "10"]))
    assert "--seed" in line


def test_unreachable_postgres_url_hides_the_password(files):
    url = f"postgresql+psycopg://u:{SECRET}@127.0.0.1:1/x"
    line = one_line(run(files, store=url))
    assert "u:***@127.0.0.1:1/x" in line


def test_a_password_in_the_url_query_is_hidden_too(files):
    """libpq also takes the password as a query parameter (session 31's audit saw it printed)."""
    url = f"postgresql+psycopg://u@127.0.0.1:1/x?sslmode=disable&password={SECRET}"
    line = one_line(run(files, store=url))
    assert "password=***" in line


@pytest.mark.parametrize("store", ["/proc/no/such/dir/s.db", "{tmp}", "/sys/s.db"])
def test_unusable_sqlite_path_is_one_line(files, store):
    line = one_line(run(files, store=store.format(tmp=files)))
    assert "label store" in line


def _raiser(exc):
    def evaluate(*a, **k):
        raise exc
    return evaluate


def _driver_errors():
    import psycopg
    import sqlalchemy.exc as sa
    url = f"postgresql://ann:{SECRET}@db.invalid:5432/x"
    return [
        sa.OperationalError("connect", {}, Exception(f"could not translate host name in {url}\n"
                                                     "second line")),
        psycopg.OperationalError(f'connection to "{url}" failed: password authentication '
                                 "failed for user \"ann\""),
        sa.ArgumentError(f"Could not parse SQLAlchemy URL from string '{url}'"),
    ]


@pytest.mark.parametrize("exc", _driver_errors(), ids=lambda e: type(e).__name__)
def test_store_driver_errors_reaching_the_cli_are_one_redacted_line(files, monkeypatch, exc):
    monkeypatch.setattr("assay.evaluation.evaluate", _raiser(exc))
    line = one_line(run(files))
    assert "cannot use the label store" in line and "ann:***@db.invalid" in line


def test_an_unexpected_error_is_one_redacted_line_exit_1(files, monkeypatch):
    monkeypatch.setattr("assay.evaluation.evaluate",
                        _raiser(RuntimeError(f"boom at mysql://root:{SECRET}@h/db")))
    line = one_line(run(files), code=1)
    assert "internal error (RuntimeError" in line and "root:***@h" in line


def test_every_assay_error_message_is_redacted_again(files, monkeypatch):
    from assay.errors import AssayInputError
    err = AssayInputError("x")
    err.args = (f"sqlite+pysqlite://me:{SECRET}@/tmp/x.db failed",)   # built around redact
    monkeypatch.setattr("assay.evaluation.evaluate", _raiser(err))
    assert "me:***@" in one_line(run(files))


def test_closed_stdout_exits_quietly_and_still_writes_the_json(files):
    """``assay evaluate … | head -1`` with the reader gone before the first line."""
    out = files / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from assay.interfaces.cli import main; main()", "evaluate",
         str(files / "pool.csv"), "--labels", str(files / "gold.csv"), "--budget", "30",
         "--store", str(files / "s.db"), "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                  # the reader is gone: every write to stdout fails
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0, err
    assert err == ""
    assert json.loads(out.read_text())["labels_used"] == 30


def test_head_dash_1_in_a_shell(files):
    out = files / "r.json"
    cmd = (f"{sys.executable} -c 'from assay.interfaces.cli import main; main()' evaluate "
           f"{files / 'pool.csv'} --labels {files / 'gold.csv'} --budget 30 --store "
           f"{files / 's.db'} --json {out} | head -1; echo \"rc=${{PIPESTATUS[0]}}\"")
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip().endswith("rc=0") and res.stderr == ""
    assert json.loads(out.read_text())["labels_used"] == 30


def test_real_entry_point_bad_option_is_one_line(files):
    exe = Path(sys.executable).with_name("assay")
    res = subprocess.run([str(exe), "evaluate", str(files / "pool.csv"), "--labels",
                          str(files / "gold.csv"), "--seed", "-1", "--store",
                          str(files / "s.db")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "--seed" in res.stderr


def test_on_conflict_option_exists_for_the_conflict_message(files):
    assert run(files).exit_code == 0
    inverted = pd.read_csv(files / "gold.csv").assign(label=lambda d: 1 - d["label"])
    inverted.to_csv(files / "gold.csv", index=False)
    line = one_line(run(files))
    assert "--on-conflict" in line
    assert run(files, "--on-conflict", "replace").exit_code == 0


def test_a_tab_inside_a_multi_column_id_is_one_line(tmp_path):
    """Ids of several columns are joined with a tab in the store: ('a\\tb', 'c') and
    ('a', 'b\\tc') would be one item (session 31's audit: a wrong census)."""
    d = pd.DataFrame({"left_id": ["a\tb", "a", "x", "y"], "right_id": ["c", "b\tc", "z", "w"],
                      "score": [1.0, 2.0, 0.0, -1.0], "prediction": [1, 1, 0, 0]})
    d.to_parquet(tmp_path / "pool.parquet")
    d[["left_id", "right_id"]].assign(label=[1, 0, 0, 0]).to_parquet(tmp_path / "gold.parquet")
    res = runner.invoke(app, ["evaluate", str(tmp_path / "pool.parquet"), "--labels",
                              str(tmp_path / "gold.parquet"), "--budget", "4", "--store",
                              str(tmp_path / "s.db")])
    line = one_line(res)
    assert "row 1" in line and "tab" in line and not (tmp_path / "s.db").exists()
