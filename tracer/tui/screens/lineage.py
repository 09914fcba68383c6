"""What a derived text was built from, down to original passages, each with its states.

The engine gives the answer's effective states (the strictest found anywhere in its
lineage); this screen walks the same lineage with `Tracer.trace(record=False)` only to
show where that strictest state comes from, highlights those nodes and explains them.
For a viewer in scope every node names its document title and collection; the pane
under the tree shows the highlighted node whole, and for a strictest node why it
decides the answer's state.  Out of scope, a node keeps its id and "outside your scope".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from store.attest import IMPORTED_MARK
from tracer.engine.trace import AnswerTrace, PassageTrace, Tracer, UnknownAnswerError
from tracer.engine.vocabulary import Currency, Integrity, currency_meaning, integrity_meaning
from tracer.inert import inert
from tracer.tui.messages import Failed
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.text import plain, safe_line, state_word
from tracer.tui.widgets.edge_mark import MarkedTree
from tracer.tui.widgets.imported import lineage_facts

__all__ = ["LNode", "LineageScreen", "strictest_paths"]

MAX_DEPTH = 12
BEST = (Integrity.INTACT, Currency.VERIFIED)


@dataclass
class LNode:
    what: str
    ident: str
    integrity: Integrity
    currency: Currency
    visible: bool = True
    note: str = ""
    children: list[LNode] = field(default_factory=list)
    title: str = ""
    collection: str = ""
    document: str = ""
    #: an imported answer or passage: not attested by its producer (`facts`: each with its state)
    imported: bool = False
    facts: dict[str, Text] = field(default_factory=dict)


def _title(p: PassageTrace) -> str:
    """The cited revision's title, else the source path its chain names."""
    cited, chain = p.currency.cited, p.record.chain if p.record is not None else None
    if cited is not None:
        return cited.title
    return chain.source.path if chain is not None else ""


def _passage(p: PassageTrace) -> LNode:
    if not p.visible:
        note = f"derived from {p.derived_from}" if p.derived_from else "outside your scope"
        return LNode("passage", p.passage_id, Integrity.UNAVAILABLE, Currency.UNAVAILABLE, False, note)
    note = f"derived from {p.derived_from}" if p.derived_from else ""
    node = LNode("passage", p.passage_id, p.integrity, p.currency.state, True, note)
    node.document = p.document_id or ""
    node.title = _title(p)
    node.collection = p.collection
    if p.imported:
        node.imported, node.facts = True, lineage_facts(p)
    return node


def _expand(tracer: Tracer, t: AnswerTrace, seen: frozenset[str], depth: int) -> list[LNode]:
    out: list[LNode] = []
    walked: set[str] = set()
    for p in t.passages:
        node = _passage(p)
        if p.derived_from and p.visible:
            node.children.append(_walk(tracer, p.derived_from, seen, depth + 1))
            walked.add(p.derived_from)
        out.append(node)
    for n in t.lineage:
        if n.answer_id not in walked:
            out.append(_walk(tracer, n.answer_id, seen, depth + 1))
    return out


def _walk(tracer: Tracer, answer_id: str, seen: frozenset[str], depth: int) -> LNode:
    if answer_id in seen or depth > MAX_DEPTH:
        return LNode("answer", answer_id, Integrity.MISSING, Currency.UNCHECKED, note="lineage cycle")
    try:
        t = tracer.trace(answer_id, record=False)
    except UnknownAnswerError:
        return LNode("answer", answer_id, Integrity.MISSING, Currency.UNCHECKED, note="not in this vault")
    node = LNode(t.kind, answer_id, t.integrity, t.currency, t.visible)
    if not t.visible:
        node.note = "outside your scope"
        return node
    node.collection = t.collection
    node.imported = t.imported is not None
    node.children = _expand(tracer, t, seen | {answer_id}, depth)
    return node


def build_lineage(tracer: Tracer, t: AnswerTrace) -> LNode:
    root = LNode(t.kind, t.answer_id, t.integrity, t.currency, t.visible, collection=t.collection)
    root.imported = t.imported is not None
    root.children = _expand(tracer, t, frozenset({t.answer_id}), 0)
    return root


def strictest_paths(root: LNode, axis: str) -> list[list[LNode]]:
    """Paths from the root to the deepest nodes whose own state equals the root's."""
    target = getattr(root, axis)
    found: list[list[LNode]] = []

    def visit(node: LNode, path: list[LNode]) -> bool:
        hit_below = False
        for child in node.children:
            hit_below = visit(child, [*path, child]) or hit_below
        if not hit_below and path and getattr(node, axis) == target:
            found.append(path)
            return True
        return hit_below

    if target not in BEST:
        visit(root, [])
    return found


def _label(n: LNode, axes: tuple[str, ...]) -> Text:
    mark = f"▶ strictest {' and '.join(axes)}  " if axes else ""
    out = Text(mark, style="bold reverse" if axes else "")
    out.append(f"{n.what} ")
    out.append_text(safe_line(n.ident, "bold"))
    if n.imported and n.what != "imported":  # an imported answer's kind already says so
        out.append_text(plain(" imported", "italic reverse"))
    out.append("  integrity ")
    out.append_text(state_word(n.integrity))
    out.append("  currency ")
    out.append_text(state_word(n.currency))
    if n.title or n.document:
        out.append("  ")
        out.append_text(safe_line(n.title or n.document, limit=40))
    if n.collection:
        out.append("  [")
        out.append_text(safe_line(n.collection))
        out.append("]")
    if n.note:
        out.append("  (")
        out.append_text(safe_line(n.note))
        out.append(")")
    return out


def node_text(n: LNode, root: LNode, axes: tuple[str, ...]) -> Text:
    """The highlighted node whole: what it is, where from, its scope, and why it decides."""
    out = Text.assemble(plain(f"{n.what} ", "bold"), safe_line(n.ident, "bold"))
    if n.imported:
        out.append_text(plain(f"  {IMPORTED_MARK}", "italic reverse"))
    out.append("\n")
    facts = (("title", n.title), ("document", n.document), ("collection", n.collection))
    for label, value in facts:
        if value:
            out.append_text(plain(f"{label:<11}", "bold"))
            out.append_text(n.facts.get(label) or Text(inert(value, keep_newlines=False)))
            out.append("\n")
    out.append_text(plain(f"{'scope':<11}", "bold"))
    out.append_text(plain("in your scope" if n.visible else "outside your scope: ids only"))
    out.append("\n")
    if "located" in n.facts:
        out.append_text(plain(f"{'attested':<11}", "bold"))
        out.append_text(Text("  ").join([n.facts["revision"], n.facts["located"]]))
        out.append("\n")
    out.append_text(Text.assemble(plain("states     integrity "), state_word(n.integrity)))
    out.append_text(Text.assemble(plain("  currency "), state_word(n.currency), "\n"))
    for axis in axes:
        word = getattr(n, axis)
        out.append_text(
            Text.assemble(
                plain("decides    ", "bold"),
                plain(f"its {axis} "),
                state_word(word),
                plain(f" is the strictest in the lineage, so the {root.what}'s effective {axis} is "),
                state_word(word),
                plain(f" too: {_meaning(axis, word)}"),
                "\n",
            )
        )
    if n.note:
        out.append_text(Text.assemble(plain(f"{'note':<11}", "bold"), safe_line(n.note)))
    return out


def _meaning(axis: str, word: str) -> str:
    return integrity_meaning(word) if axis == "integrity" else currency_meaning(word)


def _explain(root: LNode, axis: str, paths: list[list[LNode]]) -> Text:
    word = getattr(root, axis)
    meaning = _meaning(axis, word)
    out = Text(f"Effective {axis}: ")
    out.append_text(state_word(word))
    out.append(f" — {meaning}\n")
    if not paths:
        out.append("  nothing in the lineage is stricter than this.\n")
    for path in paths:
        out.append("  from ")
        out.append_text(safe_line(" › ".join(f"{n.what} {n.ident}" for n in path)))
        out.append("\n")
    return out


class LineageScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]

    @dataclass
    class Built(Message):
        root: LNode

    def __init__(self, trace: AnswerTrace):
        super().__init__()
        self.trace = trace
        self.root: LNode | None = None
        self._axes: dict[int, list[str]] = {}

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        with VerticalScroll(id="lineage-body"):
            yield Static(plain("walking the lineage…"), id="lineage-explain")
            tree: Tree[LNode] = MarkedTree(plain("lineage"), id="lineage-tree")
            yield tree
        yield Static(id="lineage-node")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._build()

    @work(thread=True, exclusive=True, group="lineage")
    def _build(self) -> None:
        try:
            with self.engine.use() as s:
                # under the normalizer the screens check currency under (key M)
                root = build_lineage(self.engine.tracer(s), self.trace)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("lineage", str(exc)))
            return
        self.post_message(self.Built(root))

    def on_lineage_screen_built(self, message: Built) -> None:
        root = self.root = message.root
        for axis in ("integrity", "currency"):
            for path in strictest_paths(root, axis):
                self._axes.setdefault(id(path[-1]), []).append(axis)
        explain = Text()
        for axis in ("integrity", "currency"):
            explain.append_text(_explain(root, axis, strictest_paths(root, axis)))
        self.query_one("#lineage-explain", Static).update(explain)
        tree = self.query_one("#lineage-tree", Tree)
        tree.root.set_label(_label(root, ()))
        tree.root.data = root

        def add(parent: TreeNode[LNode], node: LNode) -> None:
            child = parent.add(_label(node, self.axes(node)), data=node, expand=True)
            for c in node.children:
                add(child, c)

        for c in root.children:
            add(tree.root, c)
        tree.root.expand_all()
        tree.focus()
        self._show(root)

    def axes(self, node: LNode) -> tuple[str, ...]:
        """The axes on which `node` sets the answer's effective state."""
        return tuple(self._axes.get(id(node), ()))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[LNode]) -> None:
        if event.node.data is not None:
            self._show(event.node.data)

    def _show(self, node: LNode) -> None:
        if self.root is not None:
            self.query_one("#lineage-node", Static).update(node_text(node, self.root, self.axes(node)))
