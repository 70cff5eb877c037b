"""Issue 10, point 9: the terminal annotator, with a fake console and scripted answers.

Item fields are shown literally (``[/INST]`` used to crash ``assay label`` with a MarkupError;
``[red]x[/red]`` was shown altered), the prompt's ``[s]``/``[u]`` stay visible, a one-line
``label N of B · F1 …`` replaces the live progress bar, ``u`` on the first item says there is
nothing to undo (it silently re-asked), and ``q`` stops calmly with exit code 0 (it printed
"interrupted" and exited 130). Checked once for real under tmux too (see the report).
"""
from __future__ import annotations

import re

import io

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from assay.formats.pool import load_pool
from assay.interfaces.cli import app
from assay.labels.sources import SKIP, UNDO
from assay.labels.terminal import PROMPT, QuitLabelling, TerminalAnnotator, literal

runner = CliRunner()


def pool(n=40):
    rng = np.random.default_rng(1)
    score = rng.normal(size=n)
    return pd.DataFrame({"id": [f"q{i}" for i in range(n)], "score": score,
                         "prediction": (score > 0).astype(int),
                         "text": ["<s>[INST] hi [/INST] [red]x[/red] [bold]"] * n})


def annotator(answers, **kw):
    buf = io.StringIO()
    con = Console(file=buf, width=120, force_terminal=True, color_system=None)
    it = iter(answers)
    con.input = lambda prompt="", **k: (con.print(prompt, end=""), next(it))[1]
    return TerminalAnnotator(load_pool(pool()), console=con, **kw), buf


def test_fields_and_prompt_are_shown_literally():
    ann, buf = annotator(["y"], total=5)
    assert ann.label(0, "q0") == 1
    shown = buf.getvalue()
    assert "<s>[INST] hi [/INST] [red]x[/red] [bold]" in shown
    assert "match? [y]es / [n]o / [s]kip / [u]ndo / [q]uit:" in shown
    assert "label 1 of 5" in shown


def test_control_characters_are_escaped():
    assert literal("a\x1b[2Jb\x07").plain == "a\\x1b[2Jb\\x07"


def test_progress_line_follows_the_run():
    class F1:
        defined, estimate, ci_low, ci_high = True, 0.8123, 0.7, 0.9
    ann, buf = annotator(["n", "y"], total=100)
    ann.progress(11, 100, {"f1": F1()})
    assert ann.label(3, "q3") == 0
    assert ann.label(4, "q4") == 1
    text = buf.getvalue()
    assert "label 12 of 100 · F1 0.812 [0.700, 0.900]" in text and "label 13 of 100" in text


def test_undo_on_the_first_item_says_so_then_asks_again():
    ann, buf = annotator(["u", "y", "s", "u"])
    assert ann.label(0, "q0") == 1
    assert "nothing to undo" in buf.getvalue()
    assert ann.label(1, "q1") == SKIP
    assert ann.label(2, "q2") == UNDO          # the skip is taken back
    assert ann.answers == [("q0", 1)]


def test_unknown_answer_is_asked_again_and_q_quits():
    ann, buf = annotator(["maybe", "y", "q"])
    assert ann.label(0, "q0") == 1
    with pytest.raises(QuitLabelling) as e:
        ann.label(1, "q1")
    assert e.value.saved == 1 and "please answer y, n, s, u or q" in buf.getvalue()


def test_markup_in_fields_does_not_crash_assay_label(tmp_path):
    pool().to_csv(tmp_path / "p.csv", index=False)
    res = runner.invoke(app, ["label", str(tmp_path / "p.csv"), "--budget", "3", "--store",
                              str(tmp_path / "s.db"), "--annotator", "ann"],
                        input="y\nn\ny\n")
    assert res.exit_code == 0, res.output
    assert "[/INST] [red]x[/red]" in res.stdout
    assert res.stdout.count(PROMPT.strip()) == 3
    assert "label 1 of 3" in res.stdout and "label 3 of 3" in res.stdout


def test_q_stops_calmly_and_the_same_command_resumes(tmp_path):
    pool().to_csv(tmp_path / "p.csv", index=False)
    args = ["label", str(tmp_path / "p.csv"), "--budget", "4", "--store", str(tmp_path / "s.db"),
            "--annotator", "ann", "--seed", "2"]
    res = runner.invoke(app, args, input="y\nn\nq\n")
    assert res.exit_code == 0, res.output
    assert "stopped: 2 labels saved" in res.stderr and "run the same command again" in res.stderr
    assert "interrupted" not in res.output
    again = runner.invoke(app, args, input="y\ny\n")
    assert again.exit_code == 0, again.output
    assert again.stdout.count(PROMPT.strip()) == 2
    assert "4 labels (2 new, 2 reused)" in again.stdout


def test_end_of_input_stops_like_q(tmp_path):
    pool().to_csv(tmp_path / "p.csv", index=False)
    res = runner.invoke(app, ["label", str(tmp_path / "p.csv"), "--budget", "4", "--store",
                              str(tmp_path / "s.db"), "--annotator", "ann"], input="y\n")
    assert res.exit_code == 0 and "stopped: 1 label saved" in res.stderr


def test_undo_on_the_first_item_through_assay_label(tmp_path):
    pool().to_csv(tmp_path / "p.csv", index=False)
    res = runner.invoke(app, ["label", str(tmp_path / "p.csv"), "--budget", "2", "--store",
                              str(tmp_path / "s.db"), "--annotator", "ann"],
                        input="u\ny\nu\nn\ny\n")
    assert res.exit_code == 0, res.output
    assert res.stdout.count("nothing to undo") == 1
    assert "2 labels (2 new, 0 reused)" in res.stdout


def test_a_skip_can_be_undone(tmp_path):
    from assay.evaluation import evaluate
    from assay.labels.sources import LabelSource
    asked: list[str] = []
    script = iter([1, SKIP, UNDO, 0, 1, 1, 1])

    class Scripted(LabelSource):
        annotator = "ann"

        def label(self, index, key):
            asked.append(key)
            return next(script)
    evaluate(pool(), Scripted(), design="passive", budget=3, seed=0,
             store=str(tmp_path / "s.db"))
    assert asked[3] == asked[1]          # the undo re-asks the skipped item


def test_a_skip_is_undone_through_assay_label(tmp_path):
    pool().to_csv(tmp_path / "p.csv", index=False)
    res = runner.invoke(app, ["label", str(tmp_path / "p.csv"), "--budget", "3", "--store",
                              str(tmp_path / "s.db"), "--annotator", "ann"],
                        input="y\ns\nu\nn\ny\n")
    assert res.exit_code == 0, res.output
    shown = re.findall(r"item '(q\d+)'", res.stdout)
    assert len(shown) == 5 and shown[3] == shown[1]      # the skipped item is asked again
    assert "3 labels (3 new, 0 reused)" in res.stdout
