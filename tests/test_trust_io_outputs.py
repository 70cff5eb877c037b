"""Issue 10, point 8: every output goes through one safe writer (assay.outputs).

``-`` is stdout; a symbolic link is written through; a device or FIFO is written into, never
replaced (``/dev/full`` is one line and exit 2, ``/dev/null`` just works); a directory or an
unwritable folder is refused *before the first label*; nothing ``*.tmp`` is ever left behind.
On the release before (74dff40) ``--json -`` wrote a file named ``-``, a symlink was replaced by
a plain file, ``--json DIR`` failed with a traceback after the labelling and left ``DIR.tmp``,
and ``--json /dev/full`` replaced the device node with a file (as root; not re-run here).
"""
from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.outputs as outputs
from assay.errors import AssayInputError
from assay.interfaces.cli import app
from pool_inputs import write_random_pool

runner = CliRunner()


@pytest.fixture()
def files(tmp_path):
    return write_random_pool(tmp_path, seed=3, n=300)


def evaluate(files, *extra):
    return runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                               str(files / "gold.csv"), "--budget", "40", "--store",
                               str(files / "s.db"), *extra])


def one_error_line(res) -> str:
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.output
    return lines[0]


def no_tmp(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_dash_is_stdout_and_the_table_goes_to_stderr(files):
    res = evaluate(files, "--json", "-")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["labels_used"] == 40
    assert "precision" in res.stderr          # the table, out of the JSON's way
    assert not (files / "-").exists()


def test_symlink_is_written_through(files):
    target = files / "real" / "out.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = files / "link.json"
    link.symlink_to(target)
    res = evaluate(files, "--json", str(link), "--report", str(files / "r.html"))
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["labels_used"] == 40
    assert no_tmp(files)


def test_dev_null_just_works(files):
    res = evaluate(files, "--json", "/dev/null", "--report", "/dev/null")
    assert res.exit_code == 0, res.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_dev_full_is_one_line_and_stays_a_device(files):
    res = evaluate(files, "--json", "/dev/full")
    assert res.exit_code == 2
    line = one_error_line(res)
    assert "--json /dev/full" in line and "No space left on device" in line
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert no_tmp(files)


@pytest.mark.parametrize("option", ["--json", "--report"])
def test_directory_is_refused_before_any_label(files, option):
    res = evaluate(files, option, str(files))
    assert res.exit_code == 2
    line = one_error_line(res)
    assert f"{option} {files}" in line and "is a directory" in line
    assert not (files / "s.db").exists()     # refused before the store was even opened
    assert no_tmp(files)


@pytest.mark.parametrize("path,needle", [("/sys/assay-out.json", "cannot write in folder /sys"),
                                         ("{tmp}/missing/out.json", "does not exist")])
def test_unwritable_or_missing_folder_is_refused_before_any_label(files, path, needle):
    res = evaluate(files, "--report", path.format(tmp=files))
    assert res.exit_code == 2
    assert needle in one_error_line(res)
    assert not (files / "s.db").exists()


def test_label_checks_outputs_before_asking(files, monkeypatch):
    asked = []
    monkeypatch.setattr("builtins.input", lambda *a: asked.append(1) or "y")
    res = runner.invoke(app, ["label", str(files / "pool.csv"), "--budget", "3", "--store",
                              str(files / "s.db"), "--json", str(files)])
    assert res.exit_code == 2 and not asked
    assert "is a directory" in one_error_line(res)


def test_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    outputs.write_text(fifo, "through the pipe\n", "--json")
    reader.join(5)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_failed_rename_leaves_the_old_file_and_no_tmp(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old\n")

    def boom(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(outputs.os, "replace", boom)
    with pytest.raises(AssayInputError, match="out.json: cannot be written: No space left"):
        outputs.write_text(target, "new\n", "--json")
    assert target.read_text() == "old\n" and no_tmp(tmp_path)


def test_interrupted_write_leaves_no_tmp(tmp_path, monkeypatch):
    def stop(*a):
        raise KeyboardInterrupt
    monkeypatch.setattr(outputs.os, "fsync", stop)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_text(tmp_path / "x.json", "{}", "--json")
    assert list(tmp_path.iterdir()) == []


def test_permissions_of_a_replaced_file_are_kept(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old\n")
    target.chmod(0o640)
    outputs.write_text(target, "new\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text() == "new\n"


def test_every_writer_goes_through_the_one_module(files, monkeypatch, tmp_path):
    """cli --json, the HTML report, scorer2 --json and the stratified TSV writer."""
    calls: list[str] = []
    real = outputs._replace
    monkeypatch.setattr(outputs, "_replace",
                        lambda target, *a: calls.append(target.name) or real(target, *a))
    res = evaluate(files, "--json", str(files / "a.json"), "--report", str(files / "a.html"))
    assert res.exit_code == 0, res.output
    from assay.formats.trec import SampleRow, write_sample
    write_sample(files / "SAMPLE.tsv", [SampleRow("d1", "s1", 0.5, "t", 2)])
    from assay.scorers.senseval import main as scorer2
    (tmp_path / "k").write_text("w 1 a\n")
    assert scorer2([str(tmp_path / "k"), str(tmp_path / "k"), "--json",
                    str(files / "s.json")]) == 0
    assert calls == ["a.json", "a.html", "SAMPLE.tsv", "s.json"]
