"""An imported trace in the TUI: every unattested fact marked, nothing pretended."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from tests.helpers import PASSPHRASE, new_case
from tests.tui.conftest import SIZE, screen_text, settle
from tracer.importers.build import DocumentMapping
from tracer.importers.mapping import ReadOptions
from tracer.importers.run import ExportFormat, import_files
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.timeline import TimelineScreen

EXPORT = Path(__file__).resolve().parents[1] / "imports" / "fixtures" / "langchain-openinference-0.1.80.jsonl"


def make(tmp: Path) -> tuple[TracerApp, list[str]]:
    """A vault holding only an imported LangChain trace: no source revisions, so its
    passages are located nowhere and their currency is unchecked."""
    case = new_case(tmp / "vault")
    try:
        plan = import_files(
            case.vault,
            case.custodian,
            [EXPORT],
            ExportFormat.OTLP_JSON,
            "support",
            "2026-06-02T00:00:00Z",
            DocumentMapping(),
            ReadOptions(),
        )
        answer_ids = [str(it.statement["answer_id"]) for it in plan.items]
    finally:
        case.close()
    keys = tmp / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    return TracerApp(LaunchOptions(tmp / "vault", keys / "ines.key", PASSPHRASE)), answer_ids


async def test_an_imported_answer_is_marked_everywhere_and_never_verified(tmp_path: Path) -> None:
    app, answer_ids = make(tmp_path)
    assert answer_ids
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        listed = screen_text(pilot)
        assert "imported, not attested" in listed
        app.push_screen(AnswerScreen(answer_ids[0]))
        await settle(pilot)
        shown = screen_text(pilot)
        assert "IMPORTED — NOT ATTESTED BY THE PRODUCER" in shown
        assert "[importer-computed]" in shown and "[absent]" in shown  # each fact says what it is
        assert "currency unchecked" in shown and "verified" not in shown.lower()
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        table = screen.query(DataTable).first()
        assert table.row_count >= 1
        # the export named the documents: their timeline opens (with no revision imported)
        await pilot.press("T")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen) and app.screen.document_id not in ("", "None")


def test_a_timeline_opens_only_for_a_passage_that_names_a_document() -> None:
    from store.records import DocumentRef, Passage
    from tracer.engine.currency import Currency
    from tracer.engine.evidence import TextResult
    from tracer.engine.trace import PassageTrace
    from tracer.engine.transform import Transform
    from tracer.tui.screens.timeline import timeline_document

    def passage(document_id: str | None, visible: bool) -> PassageTrace:
        record = Passage(
            "p", "support", DocumentRef(document_id, None), None, None, None, None, None, None, None
        )
        text = TextResult("", "missing")
        return PassageTrace(
            0, "p", "support", visible, text, text, "missing", Currency("unchecked", "x"), Transform("x"),
            "missing", "unchecked", record if visible else None,
        )  # fmt: skip

    nowhere, hidden, named = passage(None, True), passage("legal-draft", False), passage("returns", True)
    assert timeline_document([nowhere, hidden]) is None
    assert timeline_document([nowhere, hidden, named]) == "returns"
