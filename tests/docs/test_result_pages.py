"""The generated result pages (:mod:`agentic_env.reports.docs_pages`) read a prediction's
history as the ledger does: an entry annotated as frozen after its target was seen shows so,
though it was not marked when frozen."""

from __future__ import annotations

import pathlib

from agentic_env.reports import ledger
from agentic_env.reports.docs_pages import prediction_page


def _prediction(annotations: tuple[ledger.Annotation, ...] = ()) -> ledger.Prediction:
    entries = (ledger.Entry(revision=1, frozen_at="2026-11-28T19:02:00+00:00",
                            reason="first freeze", after_target=False, hashes={}),
               ledger.Entry(revision=2, frozen_at="2026-11-28T20:00:00+00:00",
                            reason="a profile changed", after_target=True, hashes={}),
               ledger.Entry(revision=3, frozen_at="2026-11-28T21:00:00+00:00",
                            reason="the world changed", after_target=False, hashes={}))
    return ledger.Prediction(id="demo", target="a paper's table", sweep="sweeps/none.yaml",
                             seeds={"start": 2000, "count": 20}, entries=entries,
                             annotations=annotations)


def _revision_rows(page: str) -> dict[str, str]:
    """Revision -> its "after seeing the target" cell, from the page's Revisions table."""
    table = page.split("## Revisions\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ")]
    return {row[0].lstrip("| "): row[2] for row in rows[1:]}


def test_revisions_read_the_marks_made_when_frozen(tmp_path: pathlib.Path) -> None:
    page = prediction_page(tmp_path, _prediction(), None)
    assert _revision_rows(page) == {"1": "no", "2": "yes", "3": "no"}
    assert "predict annotate" not in page


def test_an_annotation_marks_its_revisions_after_the_target(tmp_path: pathlib.Path) -> None:
    note = "measured outside the ledger in commit b14a8da before the first freeze"
    annotation = ledger.Annotation(at="2026-12-02T10:13:45+00:00", kind=ledger.SEEN_BEFORE,
                                   revisions=(1, 2), note=note)
    prediction = _prediction((annotation,))
    page = prediction_page(tmp_path, prediction, None)
    rows = _revision_rows(page)
    assert rows["1"] == ("yes (annotated 2026-12-02T10:13:45+00:00; not marked when frozen)")
    assert rows["2"] == "yes"  # marked when frozen: the annotation adds nothing to its cell
    assert rows["3"] == "no"
    assert [prediction.after_target(e) for e in prediction.entries] == [True, True, False]
    assert "revisions 1, 2 frozen after the target was seen: " + note in page
    assert "predict annotate" in page


def test_the_ledger_s_own_annotated_predictions_show_them() -> None:
    """Every annotated prediction of this checkout's ledger shows its annotation."""
    root = pathlib.Path(__file__).resolve().parents[2]
    annotated = [p for p in ledger.all_predictions(root) if p.annotations]
    for prediction in annotated:
        page = prediction_page(root, prediction, None)
        for entry in prediction.entries:
            if prediction.after_target(entry):
                assert _revision_rows(page)[str(entry.revision)].startswith("yes")
        assert "frozen after the target was seen" in page
