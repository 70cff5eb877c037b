"""Write the reference cases of cs-score (tests/kbp/cases/): query files, two runs, a pool of
assessments and a -queries list, with hop-1 query IDs computed from their parents.

    .venv/bin/python bench/csscore_peer/make_cases.py     # rewrites tests/kbp/cases/*

The files are committed; this script documents how they were made (and what each line tests).
"""
from __future__ import annotations

from pathlib import Path

from assay.formats.kbp import entrypoint_uuid, hop1_uuid, parse_provenance

OUT = Path(__file__).resolve().parents[2] / "tests" / "kbp" / "cases"
BASE = "CSSF15_ENG"

# LDC queries: id, enttype, slots, entry points (name as written in XML, docid, beg, end)
LDC = [
    ("CS15_ENG_0001", "per", ("per:employee_or_member_of", "org:city_of_headquarters"),
     [("John Smith", "D01", 10, 19), ("J. Smith", "D02", 5, 12)]),
    ("CS15_ENG_0002", "org", ("org:top_members_employees", "per:age"),
     [("Acme &amp; Sons", "D03", 0, 13)]),
    ("CS15_ENG_0003", "per", ("per:city_of_birth",),
     [("Mary Jones", "D04", 100, 109), ("Mary", "D05", 7, 10)]),
    ("CS15_ENG_0004", "per", ("per:title",), [("Bob O&apos;Neil", "D06", 3, 12)]),
]


def sf_id(ldc_index: int, ep: int) -> str:
    _, _, slots, eps = LDC[ldc_index]
    _, docid, beg, end = eps[ep]
    return f"{BASE}_{entrypoint_uuid(docid, beg, end, slots)}"


A1, A2, B, C1, C2, D = sf_id(0, 0), sf_id(0, 1), sf_id(1, 0), sf_id(2, 0), sf_id(2, 1), sf_id(3, 0)
SLOT0 = {A1: LDC[0][2][0], A2: LDC[0][2][0], B: LDC[1][2][0], C1: LDC[2][2][0], C2: LDC[2][2][0],
         D: LDC[3][2][0]}
SLOT1 = {A1: LDC[0][2][1], A2: LDC[0][2][1], B: LDC[1][2][1]}


def child(parent: str, value: str, vprov: str) -> str:
    return f"{parent}_{hop1_uuid(parent, value, parent_key(vprov))}"


def parent_key(vprov: str) -> str:
    return parse_provenance(vprov).key()


def xml(queries: list[tuple[str, str, tuple[str, ...], list]]) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<query_set>"]
    for qid, etype, slots, eps in queries:
        out.append(f'  <query id="{qid}">')
        for name, docid, beg, end in eps:
            out += [f"    <name>{name}</name>", f"    <docid>{docid}</docid>",
                    f"    <beg>{beg}</beg>", f"    <end>{end}</end>"]
        out.append(f"    <enttype>{etype}</enttype>")
        for i, s in enumerate(slots):
            out.append(f"    <slot{i}>{s}</slot{i}>")
        out.append("  </query>")
    out.append("</query_set>")
    return "\n".join(out) + "\n"


def sf_queries() -> list:
    out = []
    for i, (_, etype, slots, eps) in enumerate(LDC):
        for j, ep in enumerate(eps):
            out.append((sf_id(i, j), etype, slots, [ep]))
    return out


# Pool: (query, hop-1 parent answer or None, value, relation prov, value prov, judgment, EC suffix)
# Each hop-0 answer is (query, value, value provenance); its hop-1 query is child(...).
def pool() -> list[str]:
    rows: list[tuple[str, str, str, str, str, str]] = []

    def add(q, slot, value, rel, vprov, code, ec):
        rows.append((q, slot, rel, value, vprov, code, ec))

    # A1: two strings in class 1 (redundant), class 2, a wrong, an inexact (class 3)
    add(A1, SLOT0[A1], "Acme Corp", "D10:0-20,D10:30-50", "D10:5-13", "C", f"{A1}:1")
    add(A1, SLOT0[A1], "Acme", "D11:0-40", "D11:2-5", "C", f"{A1}:1")
    add(A1, SLOT0[A1], "Beta LLC", "D12:0-40", "D12:10-17", "C", f"{A1}:2")
    add(A1, SLOT0[A1], "Gamma Inc", "D13:0-40", "D13:1-9", "W", "0")
    add(A1, SLOT0[A1], "Delta Co", "D14:0-40", "D14:3-10", "X", f"{A1}:3")
    # A1 hop 1 (city_of_headquarters, single-valued)
    acme = child(A1, "Acme Corp", "D10:5-13")
    beta = child(A1, "Beta LLC", "D12:10-17")
    add(acme, SLOT1[A1], "Boston", "D20:0-30", "D20:4-9", "C", f"{A1}:1:1")
    add(acme, SLOT1[A1], "Cambridge", "D20:40-80", "D20:50-58", "W", "0")
    add(beta, SLOT1[A1], "Denver", "D21:0-30", "D21:1-6", "C", f"{A1}:2:1")
    add(beta, SLOT1[A1], "Austin", "D22:0-30", "D22:1-6", "C", f"{A1}:2:2")
    # A2
    add(A2, SLOT0[A2], "Acme Corp", "D15:0-30", "D15:5-13", "C", f"{A2}:1")
    add(A2, SLOT0[A2], "Zeta", "D16:0-30", "D16:5-8", "W", "0")
    add(child(A2, "Acme Corp", "D15:5-13"), SLOT1[A2], "Boston", "D23:0-30", "D23:4-9", "C",
        f"{A2}:1:1")
    # B: list slot, hop 1 age (single)
    add(B, SLOT0[B], "John Smith", "D30:0-60", "D30:10-19", "C", f"{B}:1")
    add(B, SLOT0[B], "Jane Doe", "D31:0-60", "D31:10-17", "C", f"{B}:2")
    add(B, SLOT0[B], "Bob", "D32:0-60", "D32:10-12", "W", "0")
    john = child(B, "John Smith", "D30:10-19")
    add(john, SLOT1[B], "45", "D33:0-40", "D33:20-21", "C", f"{B}:1:1")
    add(john, SLOT1[B], "46", "D34:0-40", "D34:20-21", "W", "0")
    # C1/C2: single-valued, one hop; two Paris with different provenance in one class
    add(C1, SLOT0[C1], "Paris", "D40:0-50", "D40:10-14", "C", f"{C1}:1")
    add(C1, SLOT0[C1], "Paris", "D41:0-50", "D41:10-14", "C", f"{C1}:1")
    add(C1, SLOT0[C1], "Lyon", "D42:0-50", "D42:10-13", "W", "0")
    add(C2, SLOT0[C2], "London", "D43:0-50", "D43:10-15", "C", f"{C2}:1")
    add(C2, SLOT0[C2], "Leeds", "D44:0-50", "D44:10-14", "W", "0")
    # D: list slot with an I (ignore) judgment
    add(D, SLOT0[D], "mayor", "D50:0-50", "D50:10-14", "C", f"{D}:1")
    add(D, SLOT0[D], "senator", "D51:0-50", "D51:10-16", "C", f"{D}:2")
    add(D, SLOT0[D], "governor", "D52:0-50", "D52:10-17", "I", "0")
    add(D, SLOT0[D], "chef", "D53:0-50", "D53:10-13", "W", "0")
    return [f"{BASE}_{i:04d}\t{q}:{slot}\t{rel}\t{v}\t{vp}\t{code}\t{code}\t{ec}"
            for i, (q, slot, rel, v, vp, code, ec) in enumerate(rows, start=1)]


def run1() -> list[str]:
    r = "run1"
    rows = []

    def add(q, slot, value, rel, vtype, vprov, conf="1.0"):
        rows.append(f"{q}\t{slot}\t{r}\t{rel}\t{value}\t{vtype}\t{vprov}\t{conf}")

    # A1 hop 0: both class-1 strings (one redundant), provenance listed in another order,
    # class 2, a wrong, an inexact, an unassessed
    add(A1, SLOT0[A1], "Acme Corp", "D10:30-50,D10:0-20", "ORG", "D10:5-13")
    add(A1, SLOT0[A1], "Acme", "D11:0-40", "ORG", "D11:2-5", "0.9")
    add(A1, SLOT0[A1], "Beta LLC", "D12:0-40", "ORG", "D12:10-17", "0.8")
    add(A1, SLOT0[A1], "Gamma Inc", "D13:0-40", "ORG", "D13:1-9", "0.5")
    add(A1, SLOT0[A1], "Delta Co", "D14:0-40", "ORG", "D14:3-10", "0.4")
    add(A1, SLOT0[A1], "Omega Ltd", "D19:0-40", "ORG", "D19:3-11", ".3")
    # A1 hop 1: right/wrong under a right parent; two classes of a single slot under Beta;
    # children of a wrong, an inexact and an unassessed parent
    acme = child(A1, "Acme Corp", "D10:5-13")
    add(acme, SLOT1[A1], "Boston", "D20:0-30", "GPE", "D20:4-9")
    add(acme, SLOT1[A1], "Cambridge", "D20:40-80", "GPE", "D20:50-58")
    beta = child(A1, "Beta LLC", "D12:10-17")
    add(beta, SLOT1[A1], "Denver", "D21:0-30", "GPE", "D21:1-6")
    add(beta, SLOT1[A1], "Austin", "D22:0-30", "GPE", "D22:1-6")
    add(child(A1, "Gamma Inc", "D13:1-9"), SLOT1[A1], "Seattle", "D24:0-30", "GPE", "D24:1-8")
    add(child(A1, "Delta Co", "D14:3-10"), SLOT1[A1], "Miami", "D25:0-30", "GPE", "D25:1-6")
    add(child(A1, "Omega Ltd", "D19:3-11"), SLOT1[A1], "Reno", "D26:0-30", "GPE", "D26:1-5")
    # A2: only the wrong answer (so A1 wins LDC-MAX for run1)
    add(A2, SLOT0[A2], "Zeta", "D16:0-30", "ORG", "D16:5-8")
    # B: both right, a lower-case variant (right only under STRING_CASE), hop 1 right + unassessed
    add(B, SLOT0[B], "John Smith", "D30:0-60", "PER", "D30:10-19")
    add(B, SLOT0[B], "Jane Doe", "D31:0-60", "PER", "D31:10-17")
    add(B, SLOT0[B], "jane doe", "D35:0-60", "PER", "D35:10-17", "0.2")
    john = child(B, "John Smith", "D30:10-19")
    add(john, SLOT1[B], "45", "D33:0-40", "STRING", "D33:20-21")
    add(john, SLOT1[B], "47", "D36:0-40", "STRING", "D36:20-21")
    # C1: the same right value twice (two provenances, one class, single slot) and a wrong
    add(C1, SLOT0[C1], "Paris", "D40:0-50", "GPE", "D40:10-14")
    add(C1, SLOT0[C1], "Paris", "D41:0-50", "GPE", "D41:10-14")
    add(C1, SLOT0[C1], "Lyon", "D42:0-50", "GPE", "D42:10-13")
    # C2: right
    add(C2, SLOT0[C2], "London", "D43:0-50", "GPE", "D43:10-15")
    # D: right, ignored, wrong, and a value that is right only as an exact string elsewhere
    add(D, SLOT0[D], "mayor", "D50:0-50", "STRING", "D50:10-14")
    add(D, SLOT0[D], "governor", "D52:0-50", "STRING", "D52:10-17")
    add(D, SLOT0[D], "chef", "D53:0-50", "STRING", "D53:10-13")
    add(D, SLOT0[D], "senator", "D54:0-50", "STRING", "D54:10-16", "0.1")
    return rows


def run2() -> list[str]:
    r = "run2"
    rows = []

    def add(q, slot, value, rel, vtype, vprov, conf="1.0"):
        rows.append(f"{q}\t{slot}\t{r}\t{rel}\t{value}\t{vtype}\t{vprov}\t{conf}")

    # A1: a hop-1 answer whose parent answer this run never gave (parent right in the pool)
    add(child(A1, "Beta LLC", "D12:10-17"), SLOT1[A1], "Denver", "D21:0-30", "GPE", "D21:1-6")
    add(A1, SLOT0[A1], "Gamma Inc", "D13:0-40", "ORG", "D13:1-9")
    # A2: right with a right child (A2 wins LDC-MAX for run2)
    add(A2, SLOT0[A2], "Acme Corp", "D15:0-30", "ORG", "D15:5-13")
    add(child(A2, "Acme Corp", "D15:5-13"), SLOT1[A2], "Boston", "D23:0-30", "GPE", "D23:4-9")
    # B: one right, one wrong; hop 1 wrong
    add(B, SLOT0[B], "Jane Doe", "D31:0-60", "PER", "D31:10-17")
    add(B, SLOT0[B], "Bob", "D32:0-60", "PER", "D32:10-12")
    add(child(B, "Jane Doe", "D31:10-17"), SLOT1[B], "30", "D37:0-40", "STRING", "D37:5-6")
    # C1 wrong, C2 right
    add(C1, SLOT0[C1], "Lyon", "D42:0-50", "GPE", "D42:10-13")
    add(C2, SLOT0[C2], "London", "D43:0-50", "GPE", "D43:10-15")
    add(C2, SLOT0[C2], "Leeds", "D44:0-50", "GPE", "D44:10-14")
    # D: nothing
    return rows


UNICODE = [("Société Générale", "C", 1), ('Café "Le Monde"', "C", 2), ("back\\slash Ltd", "W", 0),
           ("北京大学", "C", 3), ("ÉCOLE Normale", "C", 4)]


def unicode_files() -> tuple[list[str], list[str]]:
    """Non-ASCII, quoted and backslashed values (their hop-1 IDs hash the JSON-escaped value),
    and a case-folded variant for STRING_CASE."""
    pool, run = [], []
    for i, (value, code, ec) in enumerate(UNICODE):
        vprov = f"U{i}:3-9"
        pool.append(f"U{i}\t{A1}:{SLOT0[A1]}\tU{i}:0-40\t{value}\t{vprov}\t{code}\t{code}\t"
                    + (f"{A1}:{ec}" if ec else "0"))
        run.append(f"{A1}\t{SLOT0[A1]}\tuni\tU{i}:0-40\t{value}\tORG\t{vprov}\t0.9")
        kid = child(A1, value, vprov)
        if code == "C":
            pool.append(f"V{i}\t{kid}:{SLOT1[A1]}\tV{i}:0-40\tZürich\tV{i}:1-6\tC\tC\t{A1}:{ec}:1")
        run.append(f"{kid}\t{SLOT1[A1]}\tuni\tV{i}:0-40\tZürich\tGPE\tV{i}:1-6\t0.8")
    run.append(f"{A1}\t{SLOT0[A1]}\tuni\tW9:0-40\técole normale\tORG\tW9:3-9\t0.1")
    return pool, run


def expanded_pool() -> list[str]:
    """The pool in the 11-column "expanded" layout (LDC query ID, subject and its span added)."""
    subject = {}
    for i, (ldc, _, _, eps) in enumerate(LDC):
        for j, (name, docid, beg, end) in enumerate(eps):
            subject[sf_id(i, j)] = (ldc, name.replace("&amp;", "&").replace("&apos;", "'"),
                                    f"{docid}:{beg}-{end}")
    out = []
    for line in pool():
        f = line.split("\t")
        root = f[1].split(":")[0][:len(BASE) + 11]
        ldc, name, span = subject[root]
        out.append("\t".join([f[0], ldc, f[1], name, span] + f[2:]))
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ldc_queries.xml").write_text(xml(LDC))
    (OUT / "sf_queries.xml").write_text(xml(sf_queries()))
    (OUT / "pool.tab").write_text("\n".join(pool()) + "\n")
    (OUT / "pool_expanded.tab").write_text("\n".join(expanded_pool()) + "\n")
    upool, urun = unicode_files()
    (OUT / "pool_unicode.tab").write_text("\n".join(upool) + "\n", encoding="utf-8")
    (OUT / "run_unicode.tab").write_text("\n".join(urun) + "\n", encoding="utf-8")
    (OUT / "run1.tab").write_text("# run1: every code path of hop 0 and hop 1\n"
                                  + "\n".join(run1()) + "\n")
    (OUT / "run2.tab").write_text("\n".join(run2()) + "\n")
    lines = []
    for i, (ldc, _, slots, eps) in enumerate(LDC):
        for j in range(len(eps)):
            hop = "" if ldc != "CS15_ENG_0002" else " 0"
            lines.append(f"{ldc} {sf_id(i, j)}{hop}")
    (OUT / "cssf_queryids.txt").write_text("\n".join(lines) + "\n")
    (OUT / "unknown_queryids.txt").write_text(f"CS15_ENG_0001 {A1} 1\n"
                                              "CS15_ENG_0009 CSSF15_ENG_0123456789 1\n"
                                              f"CS15_ENG_0002 {B} 0\n")
    (OUT / "some_queryids.txt").write_text(f"CS15_ENG_0001 {A1} 1\nCS15_ENG_0001 {A2} 1\n"
                                           f"CS15_ENG_0003 {C2}\n")


if __name__ == "__main__":
    main()
