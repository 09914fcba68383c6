"""An imported trace in the TUI: every unattested fact marked, nothing pretended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static, Tree

from tests.helpers import PASSPHRASE, new_case
from tests.tui.conftest import SIZE, screen_text, settle, until
from tracer.importers.build import DocumentMapping
from tracer.importers.mapping import ReadOptions
from tracer.importers.run import ExportFormat, import_files
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.timeline import TimelineScreen

EXPORT = Path(__file__).resolve().parents[1] / "imports" / "fixtures" / "langchain-openinference-0.1.80.jsonl"


def make(tmp: Path, export: Path = EXPORT, **opts: Any) -> tuple[TracerApp, list[str]]:
    """A vault holding only an imported trace (by default the LangChain one): no source
    revisions, so its passages are located nowhere and their currency is unchecked."""
    case = new_case(tmp / "vault")
    try:
        plan = import_files(
            case.vault,
            case.custodian,
            [export],
            ExportFormat.OTLP_JSON,
            "support",
            "2026-06-02T00:00:00Z",
            DocumentMapping(),
            ReadOptions(**opts),
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
    from tracer.engine.currency import CurrencyResult
    from tracer.engine.evidence import TextResult
    from tracer.engine.trace import PassageTrace
    from tracer.engine.transform import Transform
    from tracer.engine.vocabulary import Currency, CurrencyReason, Integrity, TransformState
    from tracer.tui.screens.timeline import timeline_document

    def passage(document_id: str | None, visible: bool) -> PassageTrace:
        record = Passage(
            "p", "support", DocumentRef(document_id, None), None, None, None, None, None, None, None
        )
        text = TextResult("", Integrity.MISSING)
        unchecked = CurrencyResult(Currency.UNCHECKED, CurrencyReason.NO_REVISIONS_IMPORTED)
        transform = Transform(TransformState.REVISION_NOT_IMPORTED)
        return PassageTrace(
            0, "p", "support", visible, text, text, Integrity.MISSING, unchecked, transform,
            Integrity.MISSING, Currency.UNCHECKED, record if visible else None,
        )  # fmt: skip

    nowhere, hidden, named = passage(None, True), passage("legal-draft", False), passage("returns", True)
    assert timeline_document([nowhere, hidden]) is None
    assert timeline_document([nowhere, hidden, named]) == "returns"


def _statics(pilot: Any) -> str:
    """Every Static of the screen, scrolled into view or not."""
    return "\n".join(str(w.render()) for w in pilot.app.screen.query(Static))


MARK = "IMPORTED — NOT ATTESTED BY THE PRODUCER"


async def test_at_80x24_every_imported_fact_is_marked_claims_runtime_and_lineage(tmp_path: Path) -> None:
    app, answer_ids = make(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(answer_ids[0]))
        await settle(pilot)
        assert MARK in screen_text(pilot)  # the header: never scrolls away
        assert _statics(pilot).count(MARK) == 1  # said once, not again under the header
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        table = screen.query_one("#citations", DataTable)
        claim = str(table.get_row_at(0)[0])
        assert claim == "[1] imported", claim  # the importer computed the citation
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        body = _statics(pilot)
        span_ids = {
            p.record.imported["span_id"] for p in app.screen.passages if p.record and p.record.imported
        }
        for span_id in span_ids:
            assert f"span {span_id} [importer-computed]" in body and f"span {span_id} [absent]" not in body
        assert "signed and logged by the importer, not by the producer" in body
        context = str(app.screen.query_one("#run-context", Static).render())
        assert "imported — not attested" in context and "None" not in context
        assert "Authorization at run time  — [absent]" in context
        assert "prompt, pipeline, parameters — [absent]" in context
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        lineage = app.screen
        assert isinstance(lineage, LineageScreen)
        tree = lineage.query_one("#lineage-tree", Tree)
        passages = [n for n in tree.root.children if n.data is not None and n.data.what == "passage"]
        assert passages and all(" imported " in str(n.label) for n in passages)
        await pilot.press("down")
        await settle(pilot)
        node = str(lineage.query_one("#lineage-node", Static).render())
        assert node.startswith("passage ") and "imported — not attested by the producer" in node
        assert "[importer-computed]" in node and "located no [absent]" in node
        assert "located no" in screen_text(pilot)  # the pane's lines fit at 80x24


async def test_redacted_and_truncated_imports_are_never_shown_as_verified(tmp_path: Path) -> None:
    from tests.imports.conftest import dump, spans
    from tests.imports.test_pitfalls import PASSAGE, _rag, retrace

    redacted = _rag()
    spans(redacted)[0]["attributes"][2]["value"] = {"stringValue": "__REDACTED__"}  # the answer
    export = tmp_path / "cut.jsonl"
    export.write_bytes(dump([redacted, retrace(_rag(), "9" * 32)]))
    _app, answer_ids = make(tmp_path, export, value_length_limit=40)
    for size in ((80, 24), (160, 48)):
        app = TracerApp(LaunchOptions(tmp_path / "vault", tmp_path / "keys" / "ines.key", PASSPHRASE))
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            for answer_id in answer_ids:
                app.push_screen(AnswerScreen(answer_id))
                await settle(pilot)
                shown = _statics(pilot)
                assert MARK in screen_text(pilot) and "not_captured" in shown
                assert "__REDACTED__" not in shown and PASSAGE[:40] not in shown
                await pilot.press("enter")
                await settle(pilot)
                evidence = _statics(pilot)
                assert "truncated" in evidence and "verified" not in evidence.replace("SHA-256 verified", "")
                assert PASSAGE[:40] not in evidence  # a cut text is never shown as the text
                await pilot.press("escape", "escape")
                await settle(pilot)


async def test_an_old_import_that_recorded_a_field_name_as_its_file_says_so(tmp_path: Path) -> None:
    from tracer.engine.imported import MISRECORDED_FILE

    # the same signed bytes the old defect wrote: an export whose file has that name
    export = tmp_path / MISRECORDED_FILE
    export.write_bytes(EXPORT.read_bytes())
    app, answer_ids = make(tmp_path, export)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(answer_ids[0]))
        await until(pilot, lambda: "older import's defect" in screen_text(pilot))
        assert f"from {MISRECORDED_FILE} (not the file name" in screen_text(pilot)
