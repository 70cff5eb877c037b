"""Annotation batches to Label Studio and back, keyed by item and annotator.

Export: each open queue item becomes a Label Studio task ``{"data": {"item", "campaign",
"text", …}}`` (``text`` is what our page shows: an ER pair's two records, or the key); a
labelling config with one ``Choices`` named ``label`` (``yes`` / ``no``) is given beside it.
Import: a Label Studio JSON export (tasks with ``annotations``) gives, for each annotation, the
item (``data.item``), the annotator (``ls:`` + Label Studio's ``completed_by`` e-mail or id) and
the value (yes → 1, no → 0; a skipped or cancelled annotation is a skip); each becomes a vote in
the queue exactly like an answer on our page (:func:`assay.service.queue.vote`).

>>> votes_from_export([{"data": {"item": "a"}, "annotations": [{"completed_by": 7,
...     "result": [{"from_name": "label", "type": "choices", "value": {"choices": ["yes"]}}]}]}])
[('a', 'ls:7', 1)]
"""
from __future__ import annotations

from typing import Any

from assay.errors import AssayInputError

CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="label" toName="text" choice="single" showInLine="true">
    <Choice value="yes" hotkey="y"/><Choice value="no" hotkey="n"/>
  </Choices>
</View>"""
VALUES = {"yes": 1, "no": 0}


def task(campaign: str, item: str, shown: dict[str, Any]) -> dict[str, Any]:
    """One Label Studio task for a queued item (no system name, no score).

    >>> task("kb", "x", {"kind": "item", "parts": ["x"], "structure": {}})["data"]["text"]
    'x'
    """
    if shown.get("kind") == "pair":
        lines = [f"{f}: {shown['left'].get(f, '')}  |  {shown['right'].get(f, '')}"
                 for f in shown["fields"]]
        text = f"{shown['ids'][0]}  |  {shown['ids'][1]}\n" + "\n".join(lines)
    else:
        text = " / ".join(shown.get("parts", [item]))
        text += "".join(f"\n{k}: {v}" for k, v in shown.get("structure", {}).items())
    return {"data": {"item": item, "campaign": campaign, "text": text}}


def votes_from_export(tasks: Any, source: str = "Label Studio export"
                      ) -> list[tuple[str, str, int | None]]:
    """(item, annotator, value or None for a skip) of every annotation in an export; a task
    or annotation of another shape is one :class:`AssayInputError` naming its position."""
    return [(item, who, value) for _, item, who, value in located_votes(tasks, source)]


def located_votes(tasks: Any, source: str = "Label Studio export"
                  ) -> list[tuple[str, str, str, int | None]]:
    """(where: "task T, annotation A", item, annotator, value) of every annotation in an
    export; anything of another shape is one :class:`AssayInputError` naming the task and
    annotation."""
    if not isinstance(tasks, list):
        raise AssayInputError(source, "not a JSON list of tasks", expected="Label Studio's "
                              "JSON export")
    out: list[tuple[str, str, str, int | None]] = []
    for t, tk in enumerate(tasks):
        data = tk.get("data") if isinstance(tk, dict) else None
        item = data.get("item") if isinstance(data, dict) else None
        if not isinstance(item, str):
            raise AssayInputError(source, "no data.item", where=f"task {t + 1}",
                                  expected="tasks exported by assay")
        anns = tk.get("annotations") or []
        if not isinstance(anns, list):
            raise AssayInputError(source, "annotations is not a list", where=f"task {t + 1}",
                                  expected="Label Studio's JSON export")
        for a, ann in enumerate(anns):
            where = f"task {t + 1}, annotation {a + 1}"
            who = ann.get("completed_by") if isinstance(ann, dict) else None
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            if who in (None, "") or isinstance(who, (list, dict)):
                raise AssayInputError(source, "no completed_by", where=where)
            if ann.get("was_cancelled"):
                out.append((where, item, f"ls:{who}", None))
                continue
            results = ann.get("result") or []
            bad = (not isinstance(results, list) or any(
                not isinstance(r, dict) or not isinstance(r.get("value") or {}, dict)
                or not isinstance((r.get("value") or {}).get("choices") or [], list)
                for r in results))
            if bad:
                raise AssayInputError(source, f"result {str(results)[:60]!r}", where=where,
                                      expected="a list of results, each an object with "
                                      "value.choices")
            choices = [c for r in results if r.get("from_name") == "label"
                       for c in (r.get("value") or {}).get("choices") or []]
            if len(choices) != 1 or not isinstance(choices[0], str) \
                    or choices[0] not in VALUES:
                raise AssayInputError(source, f"choices {choices!r}", where=where,
                                      expected="one of yes / no")
            out.append((where, item, f"ls:{who}", VALUES[choices[0]]))
    return out


__all__ = ["CONFIG", "located_votes", "task", "votes_from_export"]
