"""One retained passage: states, historical vs current text, model input, chain, details.

Historical text is handed to `HistoricalText` as the engine's `TextResult`; the current
excerpt goes only to `CurrentRevisionPane`, beside it, for moved/stale/ambiguous.  Every
stored text that stands behind the passage gets its verdict, and a tombstone card or
alarm where it is gone: the retrieved text, the model input, the cited revision, and
the current revision (whose verdict the evidence screen reads and hands to
`show_current_content`).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static, Tree

from tracer.engine.evidence import TextResult
from tracer.engine.times import utc
from tracer.engine.trace import PassageTrace
from tracer.engine.vocabulary import CURRENCY_MEANING, INTEGRITY_MEANING, MODEL_INPUT_MEANING, ModelInput
from tracer.tui.text import plain, safe_line, short, state_word
from tracer.tui.widgets.current import CurrentRevisionPane, current_title
from tracer.tui.widgets.edge_mark import MarkedTree
from tracer.tui.widgets.historical import ContentVerdict, HistoricalText, digest_line
from tracer.tui.widgets.imported import ImportedPassage
from tracer.tui.words import reason, transform

__all__ = ["PassageView", "chain_tree", "compared_quote", "needs_current_content", "shows_current"]

#: currency reasons that name a current revision whose text cannot be shown
_CURRENT_GONE = ("latest_revision_purged", "latest_revision_unreadable")


def shows_current(p: PassageTrace) -> bool:
    return p.visible and p.currency.shows_current


def compared_quote(p: PassageTrace) -> tuple[str | None, bool]:
    """(the quote the currency verdict compared with the current excerpt, whether it is
    not the historical text as shown).

    Under a normalizer other than the recorded one (key M: tracer-norm/2 for a /1
    passage) the verdict compares the quote as carried into that normalizer
    (`relocation.old_excerpt`): Markdown markers, bullets and emphasis read as text there,
    so diffing the historical text itself would mark them as deleted.  None when the
    historical text is not verified: nothing is compared on screen then.
    """
    r = p.retrieved
    if not r.verified or r.text is None:
        return None, False
    rel, chain = p.currency.relocation, p.record.chain if p.record is not None else None
    recorded = str(chain.normalizer_version) if chain is not None else None
    under = p.currency.normalizer
    if rel is None or not rel.old_excerpt or not under or recorded in (None, under):
        return r.text, False
    return rel.old_excerpt, True


def needs_current_content(p: PassageTrace) -> bool:
    """The current revision is known but its text is gone: its verdict (card) belongs beside."""
    c = p.currency
    return p.visible and c.current is not None and not shows_current(p) and c.reason in _CURRENT_GONE


def _states(p: PassageTrace) -> Text:
    out = Text.assemble(plain("passage "), safe_line(p.passage_id, "bold"), plain("  integrity "))
    out.append_text(state_word(p.integrity))
    out.append("  currency ")
    out.append_text(state_word(p.currency.state))
    out.append(": ")
    out.append_text(reason(p.currency.reason))
    if p.visible and p.currency.detail:
        out.append("\n")
        out.append_text(safe_line(p.currency.detail))
    if (p.effective_integrity, p.effective_currency) != (p.integrity, p.currency.state):
        out.append("\nthrough lineage: integrity ")
        out.append_text(state_word(p.effective_integrity))
        out.append("  currency ")
        out.append_text(state_word(p.effective_currency))
    out.append(f"\n{INTEGRITY_MEANING.get(p.effective_integrity, '')}; ")
    out.append(CURRENCY_MEANING.get(p.effective_currency, ""))
    if p.visible and p.model_input_state not in (None, ModelInput.SENT):  # sent: the panes below say it
        out.append("\n")
        out.append_text(model_input_line(p))
    return out


def model_input_line(p: PassageTrace) -> Text:
    """`model input WORD: meaning`: what the producer signed the model was given."""
    word = p.model_input_state
    meaning = MODEL_INPUT_MEANING[word] if word is not None else ""
    return Text.assemble(plain("model input "), state_word(word or ""), plain(f": {meaning}"))


def chain_tree(p: PassageTrace) -> Tree[None]:
    """passage → chunk → imported revision → source revision, each label inert."""
    tree: Tree[None] = MarkedTree(Text.assemble(plain("passage "), safe_line(p.passage_id)), classes="chain")
    if p.record is None or p.record.chain is None:
        tree.root.add_leaf(plain("no chain: outside your scope or not located"))
        return tree
    d, ch = p.record.document, p.record.chain
    s, c, loc = ch.source, ch.chunk, ch.locator
    where = " > ".join(str(h) for h in loc.heading_path) or "(top)"
    chunk = tree.root.add(
        Text.assemble(
            plain("chunk "),
            safe_line(str(c.chunk_id)),
            plain(" by chunker "),
            safe_line(str(c.pipeline_version)),
        ),
        expand=True,
    )
    # Tree labels do not wrap: each starts with the short facts (numbers, revision ids)
    # and the long ones (headings, URIs, paths) get a line of their own, last; the
    # details under the tree repeat the long ones wrapped (`_details`).
    locator = chunk.add(
        Text.assemble(
            plain(f"locator ¶{loc.paragraph} chars {loc.char_start}..{loc.char_end}  transform: "),
            transform(p.transform.state),
        ),
        expand=True,
    )
    locator.add_leaf(Text.assemble(plain("under "), safe_line(where)))
    imported = chunk.add(
        Text.assemble(
            plain("imported revision "),
            safe_line(str(d.revision)),
            plain(" of document "),
            safe_line(str(d.document_id)),
            plain(" ("),
            safe_line(str(d.backend)),
            plain(")"),
        ),
        expand=True,
    )
    imported.add_leaf(Text.assemble(plain("at "), safe_line(str(d.uri))))
    source = imported.add(
        Text.assemble(
            plain("source revision "),
            safe_line(str(s.revision)),
            plain(" in "),
            safe_line(str(s.system)),
        ),
        expand=True,
    )
    source.add_leaf(Text.assemble(plain("path "), safe_line(str(s.path))))
    tree.root.expand_all()
    tree.show_root = True
    return tree


def _details(p: PassageTrace) -> Text:
    m = p.record
    c = m.chain if m is not None else None
    if m is None or c is None:
        return plain("no chain: outside your scope or not located")
    out = Text.assemble(
        plain("chunker "),
        safe_line(str(c.chunk.pipeline_version)),
        plain(" parameters "),
        safe_line(str(dict(c.chunk.parameters))),
        plain("  normalizer "),
        safe_line(str(c.normalizer_version)),
        plain("\nretrieved at "),
        safe_line(f"{m.retrieved_at and utc(m.retrieved_at)}  rank {m.rank}  score {m.score}"),
        plain(f"  query sha256 {short(str(m.query_sha256))}"),
    )
    out.append("\nheading path ")
    out.append_text(safe_line(" > ".join(str(h) for h in c.locator.heading_path) or "(top)"))
    out.append("\nimported at ")
    out.append_text(safe_line(str(m.document.uri)))
    out.append("\nsource path ")
    out.append_text(safe_line(f"{c.source.system}:{c.source.path}"))
    if p.transform.detail:
        out.append("\ntransform: ")
        out.append_text(safe_line(p.transform.detail))
    if p.derived_from:
        out.append("\nderived text: its state comes from ")
        out.append_text(safe_line(p.derived_from))
        out.append(" (press l on the answer for the lineage tree)")
    return out


def _historical_title(p: PassageTrace) -> Text:
    revision = p.record.document.revision if p.record is not None else None
    when = f" ({utc(p.currency.cited.committed_at)})" if p.currency.cited is not None else ""
    return Text.assemble(
        plain("Historical: retrieved text as recorded, revision "), safe_line(str(revision)), plain(when)
    )


def _cited_title(p: PassageTrace) -> Text:
    rev = p.currency.cited
    if rev is None:
        return plain("Cited revision: content")
    return Text.assemble(
        plain("Cited revision "),
        safe_line(rev.revision),
        plain(f" ({utc(rev.committed_at)}): stored content, verdict only"),
    )


class PassageView(Vertical):
    DEFAULT_CSS = "PassageView { height: auto; }"

    def __init__(self, passage: PassageTrace):
        super().__init__(classes="passage")
        self.passage = passage

    def compose(self) -> ComposeResult:
        p = self.passage
        yield Static(_states(p), classes="passage-states")
        if not p.visible:
            yield Static(plain("UNAVAILABLE: outside your scope", "bold reverse"))
            return
        if p.imported:
            yield ImportedPassage(p)
            return
        yield self._side_by_side(p)
        yield self._model_input(p)
        if p.currency.cited_text is not None:
            yield ContentVerdict(_cited_title(p), p.currency.cited_text, classes="cited-content")
        yield chain_tree(p)
        yield Static(_details(p), classes="details")

    @staticmethod
    def _side_by_side(p: PassageTrace) -> Horizontal:
        """The historical text, and beside it the current revision when it differs."""
        current = p.currency.current_excerpt if shows_current(p) else None
        base, carried = compared_quote(p)
        # the historical pane shows the verified historical text, always; its words are
        # marked only when they are what the verdict compared (not a carried quote)
        marks = current if not carried else None
        panes: list[Widget] = [HistoricalText(_historical_title(p), p.retrieved, marks, classes="historical")]
        if current is not None and p.currency.current is not None:
            panes.append(
                CurrentRevisionPane(
                    p.currency.current,
                    current,
                    base,
                    p.currency.relocation.locator if p.currency.relocation else None,
                    classes="current",
                    carried_into=p.currency.normalizer if carried else None,
                )
            )
        return Horizontal(*panes, classes="side-by-side", id=f"side-{p.index}")

    @staticmethod
    def _model_input(p: PassageTrace) -> Widget:
        """The model input: not sent, the same text as retrieved, or its own recorded text."""
        if p.model_input_state == ModelInput.NOT_SENT:
            return Static(model_input_line(p), classes="model-input-state")
        if p.model_input.digest == p.retrieved.digest:
            return Static(
                Text.assemble(
                    plain("Model input: the same recorded text (same digest)  "),
                    digest_line(p.model_input),
                ),
                classes="digests",
            )
        title = "Model input as recorded" + (
            ", rewritten by the pipeline" if p.model_input_state == ModelInput.REWRITTEN else ""
        )
        return HistoricalText(plain(title), p.model_input, classes="historical")

    def show_current_content(self, result: TextResult) -> None:
        """Beside the historical text: the current revision's verdict, a tombstone when purged."""
        cur = self.passage.currency.current
        if cur is None:
            return
        side = self.query_one(f"#side-{self.passage.index}", Horizontal)
        side.mount(ContentVerdict(current_title(cur), result, classes="current"))
