"""Every deliberate difference from the original scorer2 (docs/senseval.md, "Differences").

Where the original needs sorted files, its lookup is emulated here (a two-letter bucket index,
then a binary search comparing signed chars, as the program does) to show what it would miss.
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from assay.scorers.senseval import main, score, score_text

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "senseval"
REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------- emulation of the original lookup
def _two_lower(s: bytes) -> bool:
    return len(s) >= 2 and 97 <= s[0] <= 122 and 97 <= s[1] <= 122


def _signed(b: int) -> int:
    return b - 256 if b >= 128 else b


def original_index(entries: list[bytes]) -> dict[tuple[int, int], list[int]]:
    """The original's [first, end) ranges of entries by two lowercase leading letters."""
    bounds: dict[tuple[int, int], list[int]] = {}
    current = None
    for i, e in enumerate(entries):
        if not _two_lower(e):
            if current is not None:
                bounds[current][1] = i
                current = None
        elif (e[0], e[1]) != current:
            if current is not None:
                bounds[current][1] = i
            current = (e[0], e[1])
            bounds[current] = [i, 0]
    if current is not None:
        bounds[current][1] = len(entries)
    return bounds


def original_finds(word: bytes, entries: list[bytes], bounds: dict | None = None) -> bool:
    """Whether the original's binary search finds the entry whose first field is *word*."""
    bounds = original_index(entries) if bounds is None else bounds
    if _two_lower(word):
        lo, hi = bounds.get((word[0], word[1]), [0, 0])
        if hi == 0:
            return False
    else:
        lo, hi = 0, len(entries)
    mid = (lo + hi) // 2
    while True:
        i, e = mid, entries[mid]
        for j, ch in enumerate(word):
            ec = e[j] if j < len(e) else 0
            if _signed(ch) != _signed(ec):
                lo, hi = (lo, i) if _signed(ch) < _signed(ec) else (i, hi)
                break
        else:
            if len(e) == len(word) or e[len(word)] == 32:
                return True
            hi = i
        mid = (lo + hi) // 2
        if i == mid:
            return False


def run(capsysbinary, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# ---------------------------------------------------------------- 1. files that cannot be read
@pytest.mark.parametrize("which", [0, 1, 2])
def test_unreadable_file_is_a_clear_error(capsysbinary, tmp_path, which):
    args = [DATA / "sampletask.system.answers", DATA / "sampletask.key", DATA / "sampletask.sensemap"]
    args[which] = tmp_path / "missing.txt"
    code, out, err = run(capsysbinary, *args)
    assert code == 2 and out == ""
    assert err == (f"scorer2: {tmp_path / 'missing.txt'}: cannot read "
                   f"{['answer', 'key', 'sense map'][which]} file: No such file or directory\n")


@pytest.mark.parametrize("option,role", [("--instances", "instance list"), ("--senses", "sense list")])
def test_unreadable_filter_list_is_a_clear_error(capsysbinary, tmp_path, option, role):
    code, out, err = run(capsysbinary, DATA / "sampletask.system.answers", DATA / "sampletask.key",
                         option, tmp_path / "nope")
    assert code == 2 and out == ""
    assert err == f"scorer2: {tmp_path / 'nope'}: cannot read {role} file: No such file or directory\n"


def test_errors_have_no_traceback_from_the_console():
    proc = subprocess.run([sys.executable, "-c", "import sys; from assay.scorers.senseval import main;"
                           " sys.exit(main(sys.argv[1:]))", "nope.answers", "nope.key"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("scorer2: nope.answers: cannot read answer file")


# ------------------------------------------------------------- 2. key line without a sense tag
@pytest.mark.parametrize("bad", ["w.n 2", "w.n 2 ", "w.n\t2 a", "w.n"])
def test_key_line_without_sense_is_a_clear_error(capsysbinary, tmp_path, bad):
    key = write(tmp_path, "k", f"w.n 1 a\n{bad}\nw.n 3 a\n")
    answers = write(tmp_path, "a", "w.n 1 a\n")
    code, out, err = run(capsysbinary, answers, key)
    assert code == 2 and out == ""
    assert err.startswith(f"scorer2: {key}:2: key line has no sense tag") and err.count("\n") == 1


def test_blank_key_lines_are_skipped():
    assert score_text("w 1 a\n", "\nw 1 a\n\n").total == 1.0


# ------------------------------------------------------------------- 3. an unsorted key is read
def test_unsorted_key_is_read_correctly(tmp_path):
    lines = (DATA / "EnglishLS.test.key").read_bytes().split(b"\n")[:-1]
    shuffled = lines[:]
    random.Random(4).shuffle(shuffled)
    key = write(tmp_path, "shuffled.key", b"\n".join(shuffled) + b"\n")
    answers = write(tmp_path, "a", b"".join(b" ".join(ln.split(b" ")[:3]) + b"\n" for ln in lines))
    joined = [ln.split(b" ")[0] + b"_" + ln.split(b" ")[1] for ln in shuffled]
    index = original_index(joined)
    missed = sum(not original_finds(j, joined, index) for j in joined)
    assert missed > 3000                                # the original would miss most of them
    result = score(answers, key)
    assert result.correct == result.total == 3944.0 and result.unscored == ()


# ------------------------------------------------------------- 4. an unsorted sense map is read
def _sensemap_lines() -> list[bytes]:
    return (DATA / "EnglishLS.sensemap").read_bytes().split(b"\n")[:-1]


def test_original_loses_24_of_86_parent_links_of_the_real_sensemap():
    lines = _sensemap_lines()
    parents = [ln for ln in lines if len(ln.split()) > 1]
    index = original_index(lines)
    lost = [ln for ln in parents if not original_finds(ln.split(b" ")[0], lines, index)]
    assert (len(parents), len(lost)) == (86, 24)
    ordered = sorted(lines)
    index = original_index(ordered)
    assert all(original_finds(ln.split(b" ")[0], ordered, index) for ln in ordered)


def _mfs(tmp_path: Path) -> Path:
    from collections import Counter, defaultdict
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in (DATA / "EnglishLS.train.key").read_text().splitlines():
        lexelt, _, *tags = line.split()
        counts[lexelt].update(tags)
    mfs = {lx: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for lx, c in counts.items()}
    rows = ((ln.split()[0], ln.split()[1]) for ln in (DATA / "EnglishLS.test.key").read_text().splitlines())
    return write(tmp_path, "mfs.answers", "".join(f"{lx} {i} {mfs[lx]}\n" for lx, i in rows))


@pytest.mark.parametrize("grain,ours,original", [("coarse", 2543.0, 2414.0), ("mixed", 2440.5, 2342.5)])
def test_unsorted_sensemap_scores_versus_the_original(tmp_path, grain, ours, original):
    lines = _sensemap_lines()
    index = original_index(lines)
    seen_by_original = [ln for ln in lines if original_finds(ln.split(b" ")[0], lines, index)]
    answers, key = _mfs(tmp_path), DATA / "EnglishLS.test.key"
    as_original = write(tmp_path, "seen.sensemap", b"\n".join(seen_by_original) + b"\n")
    sorted_map = write(tmp_path, "sorted.sensemap", b"\n".join(sorted(lines)) + b"\n")
    assert score(answers, key, DATA / "EnglishLS.sensemap", grain).correct == ours
    assert score(answers, key, sorted_map, grain).correct == ours        # order does not matter
    assert score(answers, key, as_original, grain).correct == original   # what the original prints


# ------------------------------------ 5. sorted input the original still misreads
def test_sorted_key_where_joining_with_underscore_breaks_the_order(tmp_path):
    """Sorted bytewise, but "art_1" sorts after "art.n_1": the original misses "art 1"."""
    key = "art 1 s\nart.n 1 s\n"
    joined = [b"art_1", b"art.n_1"]
    assert not original_finds(b"art_1", joined)
    assert score_text("art 1 s\nart.n 1 s\n", key).correct == 2.0


def test_non_ascii_ids_are_found(tmp_path):
    """Sorted bytewise, but the original compares signed chars, so 0xC3 sorts before 'a'."""
    lines = sorted(["cafa 1 s", "cafe 1 s", "cafz 1 s", "caf\u00e9 1 s"], key=str.encode)
    joined = [ln.encode().split(b" ")[0] + b"_1" for ln in lines]
    index = original_index(joined)
    assert not all(original_finds(j, joined, index) for j in joined)
    key = write(tmp_path, "k", "".join(ln + "\n" for ln in lines))
    assert score(key, key).correct == 4.0


# ------------------------------------------------------------- 6. last line without a newline
def test_last_line_without_newline_is_read():
    result = score_text("w 1 a\nw 2 b", "w 1 a\nw 2 b", "a\nb 2 a", "coarse")
    assert (result.correct, result.total) == (2.0, 2.0)
    assert score_text("w 1 a\nw 2 b", "w 1 a\nw 2 b", "b 2 a\na", "coarse").scored[1].key == ("a",)


# ---------------------------------------------------------------------------- 7. CRLF accepted
def test_crlf_is_accepted(capsysbinary, tmp_path):
    lf = [DATA / n for n in ("sampletask.system.answers", "sampletask.key", "sampletask.sensemap")]
    crlf = [write(tmp_path, p.name, p.read_bytes().replace(b"\n", b"\r\n")) for p in lf]
    _, out_lf, err_lf = run(capsysbinary, *lf, "-g", "coarse", "-v")
    _, out_crlf, err_crlf = run(capsysbinary, *crlf, "-g", "coarse", "-v")
    assert out_crlf == out_lf.replace(str(DATA), str(tmp_path))
    assert err_crlf == err_lf and "7.50 correct" in out_crlf


# -------------------------------------------------- 8. trailing spaces on sense-map lines ignored
def test_trailing_space_in_sensemap_does_not_empty_the_coarse_tag():
    result = score_text("w 1 d\n", "w 1 d\n", "d \n", "coarse")
    assert result.scored[0].key == ("d",) and result.scored[0].guess == (("d", 1.0),)


# ----------------------------------------------------------------------- 9. explicit "-g fine"
def test_explicit_fine_grain(capsysbinary):
    code, out, _ = run(capsysbinary, DATA / "sampletask.system.answers", DATA / "sampletask.key",
                       "-g", "fine")
    assert code == 0 and "\nFine-grained score for" in out


# ---------------------------------------------------------------------- 10. exit status
def test_exit_status(capsysbinary):
    assert main([str(DATA / "sampletask.system.answers"), str(DATA / "sampletask.key")]) == 0
    assert main(["x"]) == 2
    capsysbinary.readouterr()


# -------------------------------------------------------------------- 11. repeated key lines
def test_repeated_key_line_first_wins_and_all_count():
    result = score_text("w 1 a\n", "w 1 a\nw 1 b\n")
    assert (result.correct, result.total) == (1.0, 2.0)


# ------------------------------------------------------------------------- 12. the 0xFF byte
def test_byte_ff_does_not_end_the_file(tmp_path):
    answers = write(tmp_path, "a", b"w 1 a !! \xff comment\nw 2 a\n")
    key = write(tmp_path, "k", b"w 1 a\nw 2 a\n")
    assert score(answers, key).correct == 2.0


# -------------------------------------------------------------------------- 13. extensions
def test_unknown_double_dash_option_is_an_error_single_dash_ignored(capsysbinary):
    a, k = DATA / "sampletask.system.answers", DATA / "sampletask.key"
    code, out, err = run(capsysbinary, a, k, "--verbose")
    assert code == 2 and out == "" and err == "scorer2: unknown option --verbose (see --help)\n"
    code, out, err = run(capsysbinary, a, k, "-q")
    assert code == 0 and "7.50 correct" in out
