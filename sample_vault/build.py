"""Build the Northstar sample vault: ``python -m sample_vault.build [--out DIR] [--force]``.

Deterministic: a fixed seed, a fixed clock (every timestamp is explicit RFC 3339 UTC)
and seeded identities, so the same code yields the same log and the same checkpoint
root.  Only what lives outside the Merkle log differs between builds (data keys, nonces,
the salts of the passphrase-encrypted key files).

Everything goes through the real store API: revisions, deletions and DSSE-signed
manifests are written as input files and appended with `store.ingest.ingest`, the code
path behind `tracer ingest`.  The one exception is the deliberately tampered blob at
the end, which simulates an insider editing the DuckDB file directly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sample_vault import expected
from sample_vault.corpus import DOCUMENTS, Document, Revision
from store import admin
from store.crypto import Identity, aead_encrypt, sha256_hex
from store.ingest import ingest
from store.keyring import DataKeys
from store.producer import draft_to_input
from store.schema import DB_FILE
from store.vault import Vault
from tracer.engine.textnorm import (
    CHUNKER_VERSION,
    NORMALIZER_VERSION,
    Chunk,
    chunk_document,
    normalize,
)

__all__ = ["BuildInfo", "answer_id_for", "build", "main"]

DEFAULT_OUT = Path(__file__).resolve().parent

SUPPORT = "northstar-support-assistant"
OPS = "northstar-ops-copilot"
COLLECTION_RANK = {"support": 0, "ops": 1, "hr": 2, "legal": 3}  # wider -> narrower
CHUNK_PARAMETERS = {"strategy": "paragraph", "max_chars": 4000, "overlap": 0}

VAULT_CREATED = "2026-01-02T08:00:00Z"
INITIAL_IMPORT = "2026-01-02T08:10:00Z"
A2_ADDED = "2026-05-25T10:00:00Z"
B_REVOKED = expected.PRODUCER_KEYS["ops-copilot-2026"]["revoked_at"]
LATE_BATCH = "2026-11-12T03:00:00Z"
LATE_FROM = "2026-10-28T00:00:00Z"  # support manifests from here on arrive late
OPS_LAST = "2026-10-16T00:00:00Z"  # the ops copilot was switched off on 15 October


# -- small helpers -----------------------------------------------------------------------


def ts(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dt(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def answer_id_for(label: str) -> str:
    return "ans-" + _h("northstar/answer/" + label)[:12]


def run_id_for(label: str) -> str:
    return "run-" + _h("northstar/run/" + label)[:12]


def passage_id_for(answer_id: str, rank: int) -> str:
    return "psg-" + _h(f"{answer_id}#{rank}")[:10]


def section_of(chunk: Chunk) -> str:
    return chunk.heading_path[-1] if len(chunk.heading_path) > 1 else ""


def identity(name: str) -> Identity:
    return Identity.from_seed(name, f"northstar-sample/{name}".encode())


# -- the corpus as the pipelines saw it ----------------------------------------------------


@dataclass(frozen=True)
class Cited:
    """One chunk of one revision, with the currency state expected.py gives it."""

    doc: Document
    rev: Revision
    chunk: Chunk
    state: str

    @property
    def section(self) -> str:
        return section_of(self.chunk)


class Corpus:
    def __init__(self) -> None:
        self.docs = {d.document_id: d for d in DOCUMENTS}
        self.chunks: dict[tuple[str, str], list[Chunk]] = {}
        for d in DOCUMENTS:
            for r in d.revisions:
                self.chunks[(d.document_id, r.revision)] = chunk_document(r.content)

    def revision(self, doc_id: str, rev: str) -> Revision:
        return next(r for r in self.docs[doc_id].revisions if r.revision == rev)

    def state_of(self, doc: Document, rev: Revision, section: str) -> str | None:
        spec = expected.REVISION_STATES[doc.document_id][rev.revision]
        if isinstance(spec, str):
            return spec
        return spec.get(section)

    def pick(self, doc_id: str, rev: str, section: str, nth: int = 0) -> Cited:
        doc = self.docs[doc_id]
        r = self.revision(doc_id, rev)
        found = [c for c in self.chunks[(doc_id, rev)] if section_of(c) == section]
        chunk = found[nth]
        state = self.state_of(doc, r, section)
        if state is None:  # reserved sections (the tampered record) are verified by design
            state = "verified"
        return Cited(doc, r, chunk, state)

    def citable(self, doc: Document, rev: Revision) -> list[Cited]:
        out = []
        for c in self.chunks[(doc.document_id, rev.revision)]:
            if c.text.startswith(("```", "~~~")):
                continue
            state = self.state_of(doc, rev, section_of(c))
            if state is not None:
                out.append(Cited(doc, rev, c, state))
        return out

    @staticmethod
    def indexed_at(rev: Revision) -> datetime:
        if rev.indexed_at:
            return dt(rev.indexed_at)
        return dt(rev.committed_at) + timedelta(days=1)

    def current(self, doc: Document, at: datetime) -> Revision | None:
        """The revision the retrieval index served at `at`, or None if not indexed."""
        gone = doc.retired_at or doc.deleted_at
        if gone and at >= dt(gone):
            return None
        live = [r for r in doc.revisions if self.indexed_at(r) <= at]
        return live[-1] if live else None


# -- manifests ------------------------------------------------------------------------------


def producer_profile(system: str, at: datetime) -> dict[str, Any]:
    """Producer version and runtime context in force at `at`."""
    if system == SUPPORT:
        if at < dt("2026-06-01T00:00:00Z"):
            return {
                "version": "2.3.1",
                "model": "gpt-4o-mini-2024-07-18",
                "prompt": "support-answer/v14",
                "pipeline": "support-rag 2026.01.2",
                "tags": False,
                "params": {
                    "temperature": 0.2,
                    "top_k": 5,
                    "max_output_tokens": 400,
                    "retriever": "hybrid-bm25-e5-large",
                    "reranker": "bge-reranker-v2-m3",
                },
            }
        return {
            "version": "2.4.0",
            "model": "gpt-4.1-mini-2025-04-14",
            "prompt": "support-answer/v15",
            "pipeline": "support-rag 2026.06.0",
            "tags": True,  # 2026.06.0 prefixes each passage with a source tag
            "params": {
                "temperature": 0.2,
                "top_k": 5,
                "max_output_tokens": 400,
                "retriever": "hybrid-bm25-e5-large",
                "reranker": "bge-reranker-v2-m3",
                "memory": True,
            },
        }
    early = at < dt("2026-05-01T00:00:00Z")
    return {
        "version": "0.9.4" if early else "1.0.0",
        "model": "Llama-3.1-70B-Instruct",
        "prompt": "ops-copilot/v6" if early else "ops-copilot/v7",
        "pipeline": "ops-copilot-rag 0.9.4" if early else "ops-copilot-rag 1.0.0",
        "tags": False,
        "params": {
            "temperature": 0.1,
            "top_k": 4,
            "max_output_tokens": 600,
            "retriever": "bm25",
        },
    }


def policy_version(at: datetime) -> str:
    return "kb-acl/2026.01" if at < dt("2026-05-01T00:00:00Z") else "kb-acl/2026.05"


def passage_json(
    cited: Cited, pid: str, rank: int, score: float, at: datetime, query: str, tag: bool
) -> dict[str, Any]:
    d, r, c = cited.doc, cited.rev, cited.chunk
    p: dict[str, Any] = {
        "passage_id": pid,
        "collection": d.collection,
        "source": {"system": d.source_system, "path": d.path, "revision": r.source_revision},
        "document": {
            "document_id": d.document_id,
            "uri": d.uri,
            "revision": r.revision,
            "backend": d.backend,
        },
        "chunk": {
            "chunk_id": f"{d.document_id}:{r.revision}:{c.chunk_index:03d}",
            "pipeline_version": CHUNKER_VERSION,
            "parameters": dict(CHUNK_PARAMETERS),
        },
        "locator": {
            "heading_path": list(c.heading_path),
            "paragraph": c.paragraph,
            "char_start": c.start,
            "char_end": c.end,
        },
        "retrieved_text": c.text,
        "normalizer_version": NORMALIZER_VERSION,
        "retrieved_at": ts(at - timedelta(seconds=2 + rank)),
        "rank": rank,
        "score": score,
        "query": query,
    }
    if tag:
        p["model_input_text"] = f"[source: {d.document_id} §{cited.section}]\n{c.text}"
    return p


def citations_for(answer: str, cites: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, Any]]:
    out = []
    for quote, pids in cites:
        start = answer.index(quote)
        out.append({"answer_start": start, "answer_end": start + len(quote), "passage_ids": list(pids)})
    return out


@dataclass
class Planned:
    """One manifest to be signed, plus the facts expected.py derives for it."""

    label: str
    system: str
    at: datetime
    draft: dict[str, Any]
    passage_states: dict[str, str]  # passage_id -> state for an all-scopes viewer
    restricted: bool  # cites legal text, directly or through lineage
    late: bool = False

    @property
    def answer_id(self) -> str:
        return str(self.draft["answer_id"])

    @property
    def state(self) -> str:
        states = set(self.passage_states.values())
        if len(states) != 1:
            raise AssertionError(f"{self.label}: passages disagree on currency: {states}")
        return states.pop()


def make_draft(
    label: str,
    system: str,
    at: datetime,
    principal: str,
    question: str,
    answer: str,
    passages: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    collection: str,
    kind: str = "answer",
    lineage: Sequence[str] = (),
) -> dict[str, Any]:
    prof = producer_profile(system, at)
    return {
        "kind": kind,
        "run_id": run_id_for(label),
        "answer_id": answer_id_for(label),
        "generated_at": ts(at),
        "producer": {"system": system, "version": prof["version"]},
        "runtime": {
            "model": prof["model"],
            "prompt_template_version": prof["prompt"],
            "pipeline_version": prof["pipeline"],
            "parameters": dict(prof["params"]),
        },
        "authorization": {
            "principal": principal,
            "policy_version": policy_version(at),
            "decision": "allow",
        },
        "collection": collection,
        "question": question,
        "answer": answer,
        "passages": passages,
        "citations": citations,
        "lineage": list(lineage),
    }


def narrowest(collections: Sequence[str]) -> str:
    return max(collections, key=lambda c: COLLECTION_RANK[c])


# -- the answers the story is about ---------------------------------------------------------


@dataclass(frozen=True)
class Key:
    label: str
    system: str
    at: str
    principal: str
    question: str
    answer: str
    passages: tuple[tuple[str, str, str, int], ...]  # (doc, rev, section, nth in section)
    cites: tuple[tuple[str, tuple[int, ...]], ...]  # (quoted text in answer, ranks)
    collection: str | None = None


KEYS: tuple[Key, ...] = (
    Key(
        "faq-refund-timing",
        SUPPORT,
        "2026-07-08T10:14:09Z",
        "customer:C-418822",
        "I sent my hiking boots back last week and got the approval email yesterday. "
        "When will I see the money?",
        "Approved refunds are paid to the original payment method within five business days. "
        "As your refund was approved yesterday, it should reach your card within the next "
        "week.",
        (
            ("support-faq", "r2", "How do refunds work?", 0),
            ("support-faq", "r2", "Where is my order?", 0),
        ),
        (
            (
                "Approved refunds are paid to the original payment method within five business days.",
                (1,),
            ),
        ),
    ),
    Key(
        "faq-whitespace-r1",
        SUPPORT,
        "2026-03-03T16:41:22Z",
        "customer:C-230517",
        "Do you deliver to Zurich? And will I have to pay customs?",
        "Yes. We ship to the EU, the United Kingdom, Norway, Switzerland and the United States. "
        "For Switzerland, import duties are paid by you on delivery.",
        (("support-faq", "r1", "Do you ship internationally?", 0),),
        (
            ("We ship to the EU, the United Kingdom, Norway, Switzerland and the United States.", (1,)),
            ("import duties are paid by you on delivery", (1,)),
        ),
    ),
    Key(
        "shipping-moved",
        SUPPORT,
        "2026-02-17T11:05:43Z",
        "agent:t.becker@northstar.example",
        "Customer's parcel tracking hasn't updated since 5 Feb. What do I tell them?",
        "If tracking has not changed for seven business days, contact support. We open an "
        "investigation with the carrier and send a replacement if the parcel is confirmed lost. "
        "5 February is more than seven business days ago, so you can open the carrier "
        "investigation now.",
        (
            ("shipping-policy", "r1", "Lost parcels", 0),
            ("shipping-policy", "r1", "Tracking your order", 0),
        ),
        (
            (
                "If tracking has not changed for seven business days, contact support. We open an "
                "investigation with the carrier and send a replacement if the parcel is "
                "confirmed lost.",
                (1,),
            ),
        ),
    ),
    Key(
        "uk-stale-thirty",
        SUPPORT,
        "2026-04-22T13:18:02Z",
        "customer:C-517390",
        "Hi, I'm in Leeds. My tent arrived on 1 April and I've changed my mind. Can I still "
        "send it back for a refund?",
        "Yes. Customers in the United Kingdom may request a refund within thirty days of "
        "delivery, so you have until 1 May. You can start the return from the Orders page.",
        (("returns-policy-uk", "r1", "Refund window", 0),),
        (
            (
                "Customers in the United Kingdom may request a refund within thirty days of delivery",
                (1,),
            ),
        ),
    ),
    Key(
        "expenses-stale-meals",
        OPS,
        "2026-08-19T12:02:51Z",
        "employee:k.iyer@northstar.example",
        "Taking two clients to dinner next week, what's the per-person limit I can expense?",
        "Client meals are reimbursed up to €60 per person, including drinks and tip. Name the "
        "guests and the business purpose on the claim.",
        (("expenses-policy", "r2", "Client meals", 0),),
        (
            (
                "Client meals are reimbursed up to €60 per person, including drinks and tip. "
                "Name the guests and the business purpose on the claim.",
                (1,),
            ),
        ),
    ),
    Key(
        "warranty-ambiguous",
        SUPPORT,
        "2026-03-26T09:47:30Z",
        "agent:n.silva@northstar.example",
        "Customer's camping lantern died after 14 months of normal use. Warranty or not?",
        "Yes, it's covered. Northstar repairs or replaces any product that fails under normal "
        "use within two years of delivery. 14 months is within that period; just check it "
        "isn't accidental damage, which the warranty does not cover.",
        (
            ("warranty-policy", "r1", "Coverage", 0),
            ("warranty-policy", "r1", "Coverage", 1),
        ),
        (
            (
                "Northstar repairs or replaces any product that fails under normal use within "
                "two years of delivery.",
                (1,),
            ),
            ("accidental damage, which the warranty does not cover", (2,)),
        ),
    ),
    Key(
        "returns-a-thirty",
        SUPPORT,
        "2026-01-09T14:22:10Z",
        "customer:C-302211",
        "I got my snow boots on 20 December, they're too small. Can I still return them for a refund?",
        "Yes. Customers may request a refund within thirty days of delivery, so you have until "
        "19 January. Items must be unused and returned in their original packaging with all "
        "accessories, manuals and cables.",
        (
            ("returns-policy", "r1", "Refund window", 0),
            ("returns-policy", "r1", "Condition of returned items", 0),
        ),
        (
            ("Customers may request a refund within thirty days of delivery", (1,)),
            (
                "Items must be unused and returned in their original packaging with all "
                "accessories, manuals and cables.",
                (2,),
            ),
        ),
    ),
    Key(
        "returns-whitespace",
        SUPPORT,
        "2026-02-10T10:03:55Z",
        "agent:t.becker@northstar.example",
        "How long do customers have to ask for a refund, and where does the money go?",
        "Customers may request a refund within thirty days of delivery. Refunds are issued to "
        "the original payment method.",
        (
            ("returns-policy", "r2", "Refund window", 0),
            ("returns-policy", "r2", "Refund window", 1),
        ),
        (
            ("Customers may request a refund within thirty days of delivery.", (1,)),
            ("Refunds are issued to the original payment method.", (2,)),
        ),
    ),
    Key(
        "returns-b-index-lag",
        SUPPORT,
        "2026-05-19T15:36:48Z",
        "customer:C-611094",
        "My sleeping bag came on 28 April. Can I still get a refund? It's been about three weeks.",
        "Yes, you can. Customers may request a refund within thirty days of delivery, so your "
        "window runs until 28 May. Start a return from the Orders page in your Northstar "
        "account.",
        (
            ("returns-policy", "r3", "Refund window", 0),
            ("returns-policy", "r3", "How to start a return", 0),
            ("returns-policy", "r3", "Introduction", 0),
        ),
        (
            ("Customers may request a refund within thirty days of delivery", (1,)),
            ("Start a return from the Orders page in your Northstar account.", (2,)),
        ),
    ),
    Key(
        "returns-c-fourteen",
        SUPPORT,
        "2026-06-15T09:12:40Z",
        "customer:C-640127",
        "How many days do I have to return an item?",
        "Customers may request a refund within fourteen days of delivery. If you need help "
        "starting the return, just ask.",
        (("returns-policy", "r4", "Refund window", 0),),
        (("Customers may request a refund within fourteen days of delivery.", (1,)),),
    ),
    Key(
        "returns-d-appendix",
        SUPPORT,
        "2026-08-03T17:25:19Z",
        "agent:n.silva@northstar.example",
        "Is the refund window counted from the order date or from delivery?",
        "From delivery: the refund window is counted from the delivery scan, not from the "
        "order date, and customers may request a refund within fourteen days of delivery.",
        (
            ("returns-policy", "r5", "Appendix", 1),
            ("returns-policy", "r5", "Appendix", 0),
        ),
        (
            ("the refund window is counted from the delivery scan, not from the order date", (1,)),
            ("customers may request a refund within fourteen days of delivery", (2,)),
        ),
    ),
    Key(
        "travel-r1-allowance",
        OPS,
        "2026-01-08T07:51:12Z",
        "employee:f.romano@northstar.example",
        "Flying to Lyon on Monday at 10:00 for a supplier visit. What daily allowance do I "
        "get, and does Monday count?",
        "You receive a daily allowance of €40 for meals and incidentals. Monday counts as a "
        "full day because your journey starts before 12:00.",
        (("travel-allowance", "r1", "Daily allowance", 0),),
        (
            ("a daily allowance of €40 for meals and incidentals", (1,)),
            ("Monday counts as a full day because your journey starts before 12:00", (1,)),
        ),
    ),
    Key(
        "travel-r2-hotel",
        OPS,
        "2026-03-12T13:30:05Z",
        "employee:k.iyer@northstar.example",
        "What's the hotel limit for a night in Paris?",
        "The nightly limit is €190 in London, Paris and Amsterdam (€150 in most other cities). "
        "Book through the Northstar travel portal.",
        (
            ("travel-allowance", "r2", "Accommodation", 0),
            ("travel-allowance", "r2", "Claiming", 0),
        ),
        (
            ("The nightly limit is €190 in London, Paris and Amsterdam", (1,)),
            ("Book through the Northstar travel portal.", (1,)),
        ),
    ),
    Key(
        "legal-hold-question",
        OPS,
        "2026-06-04T10:20:33Z",
        "employee:r.santos@northstar.example",
        "We have a hold for Brightwater. Does that stop the automatic purge of assistant transcripts?",
        "Yes. A legal hold overrides every retention schedule, including automated purges, and "
        "assistant transcripts and trace records that mention the matter must be preserved.",
        (
            ("legal-hold-procedure", "r1", "When a hold applies", 0),
            ("legal-hold-procedure", "r1", "What to preserve", 0),
        ),
        (
            ("A legal hold overrides every retention schedule, including automated purges", (1,)),
            ("assistant transcripts and trace records that mention the matter", (2,)),
        ),
    ),
    Key(
        "carrier-sla-claim",
        SUPPORT,
        "2026-06-23T11:44:18Z",
        "agent:t.becker@northstar.example",
        "How long do we have to file a lost-parcel claim with ParcelNord?",
        "Claims for lost parcels must be filed with ParcelNord within 30 days of the expected "
        "delivery date. ParcelNord compensates the invoice value up to €1,000 per parcel.",
        (("carrier-sla-parcelnord", "r3", "Lost and damaged parcels", 0),),
        (
            (
                "Claims for lost parcels must be filed with ParcelNord within 30 days of the "
                "expected delivery date. ParcelNord compensates the invoice value up to €1,000 "
                "per parcel.",
                (1,),
            ),
        ),
    ),
    Key(
        "returns-new-page",
        SUPPORT,
        "2026-09-28T19:05:51Z",
        "customer:C-702245",
        "My blender arrived 20 days ago and it doesn't work. Can I still return it?",
        "Yes. Faulty items can be returned for a full refund within thirty days of delivery, "
        "wherever you live. For change-of-mind returns the window is fourteen days.",
        (
            ("returns-and-refunds", "r1", "Refund window", 1),
            ("returns-and-refunds", "r1", "Refund window", 0),
        ),
        (
            (
                "Faulty items can be returned for a full refund within thirty days of delivery, "
                "wherever you live.",
                (1,),
            ),
            ("the window is fourteen days", (2,)),
        ),
    ),
    Key(
        "restart-with-exception",
        OPS,
        "2026-05-07T14:10:26Z",
        "employee:m.haas@northstar.example",
        "Can I restart payments-api in prod right now? It's leaking memory.",
        "Yes, right now you can: it is 14:10 UTC, outside the settlement window. Do not restart "
        "the payments service in production during settlement (01:00–03:00 UTC) without "
        "approval from the on-call lead. Restart it one node at a time with `systemctl restart "
        "<service>` and wait until the health check is green before moving to the next node.",
        (
            ("runbook-restart-services", "r2", "Payments service", 0),
            ("runbook-restart-services", "r2", "Payments service", 1),
            ("runbook-restart-services", "r2", "Restarting a service", 0),
        ),
        (
            ("outside the settlement window", (2,)),
            (
                "Do not restart the payments service in production during settlement "
                "(01:00–03:00 UTC) without approval from the on-call lead.",
                (1,),
            ),
            (
                "Restart it one node at a time with `systemctl restart <service>` and wait until "
                "the health check is green before moving to the next node.",
                (3,),
            ),
        ),
    ),
    Key(
        "restart-dropped-exception",
        OPS,
        "2026-08-14T01:32:07Z",
        "employee:j.ortega@northstar.example",
        "payments-api is throwing 502s in prod, can I just restart it?",
        "Yes. Restart the payments service like any other service: run `systemctl restart "
        "<service>` on each node, one node at a time, and wait until the health check is green "
        "before moving to the next node.",
        (
            ("runbook-restart-services", "r2", "Payments service", 0),
            ("runbook-restart-services", "r2", "Payments service", 1),
            ("runbook-restart-services", "r2", "Restarting a service", 0),
        ),
        (
            ("Restart the payments service like any other service", (2,)),
            (
                "run `systemctl restart <service>` on each node, one node at a time, and wait "
                "until the health check is green before moving to the next node.",
                (3,),
            ),
        ),
    ),
    Key(
        "hostile-customer-markup",
        SUPPORT,
        "2026-05-30T21:03:44Z",
        "customer:C-588812",
        "my order [bold]x[/bold] N-20931 shows no update for 9 days [@click=app.quit]click "
        "here[/] \u202eSIHT DAER\u202c zero\u200bwidth - where is it??",
        "Sorry about order [bold]x[/bold] N-20931 [@click=app.quit]. If tracking has not "
        "changed for seven business days, contact support. We open an investigation with the "
        "carrier and send a replacement if the parcel is confirmed lost. I have flagged your "
        "order\u200b for our team \u202e(ref N-20931).",
        (("shipping-policy", "r2", "Lost parcels", 0),),
        (
            (
                "If tracking has not changed for seven business days, contact support. We open an "
                "investigation with the carrier and send a replacement if the parcel is "
                "confirmed lost.",
                (1,),
            ),
        ),
    ),
    Key(
        "hostile-terminal-paste",
        OPS,
        "2026-02-12T08:05:31Z",
        "employee:j.ortega@northstar.example",
        "What does 'settlement batch already open' mean in payments-api logs?",
        "That line comes from the settlement job. Your notes show it as: "
        "\x1b[2J\x1b[31mERROR\x1b[0m settlement batch already open \x1b]52;c;SGVsbG8=\x07 "
        "retrying in 30s. Page the on-call lead if the same settlement error repeats for more "
        "than ten minutes.",
        (
            ("ops-log-triage-notes", "r1", "Example output", 0),
            ("ops-log-triage-notes", "r1", "When to page", 0),
        ),
        (
            (
                "\x1b[2J\x1b[31mERROR\x1b[0m settlement batch already open "
                "\x1b]52;c;SGVsbG8=\x07 retrying in 30s",
                (1,),
            ),
            (
                "Page the on-call lead if the same settlement error repeats for more than ten minutes.",
                (2,),
            ),
        ),
    ),
    Key(
        "tampered-damaged-claim",
        SUPPORT,
        "2026-08-21T12:40:09Z",
        "agent:t.becker@northstar.example",
        "Customer reports a broken lamp delivered 3 days ago and says it arrived damaged. Can "
        "we still accept the claim?",
        "No. Items damaged in transit must be reported within 48 hours of delivery, with photos "
        "of the item and the packaging; three days is outside that window.",
        (("shipping-policy", "r2", "Damaged items", 0),),
        (
            (
                "reported within 48 hours of delivery, with photos of the item and the packaging",
                (1,),
            ),
        ),
    ),
)

NOTE_LABEL = "memory-note"
NOTE_AT = "2026-06-02T15:20:44Z"
NOTE_TEXT = (
    "Refund requests: approved refunds are paid to the original payment method within five "
    "business days. Pending the regulator's review, Northstar will honour refund requests "
    "received within thirty days of delivery for orders placed before 4 May 2026."
)

# (label, at, principal, collection, question, answer, cites: (quote, [note | faq]))
NOTE_CITERS: tuple[tuple[str, str, str, str, str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "note-citer-1",
        "2026-06-05T10:02:15Z",
        "customer:C-655310",
        "support",
        "I ordered a grill on 29 April and it was delivered on 12 May. Can I still return it for a refund?",
        "Yes. For orders placed before 4 May 2026, Northstar will honour refund requests "
        "received within thirty days of delivery, so you can still return your grill. "
        "Approved refunds are paid to the original payment method within five business days.",
        (
            ("Northstar will honour refund requests received within thirty days of delivery", "note"),
            (
                "Approved refunds are paid to the original payment method within five business days.",
                "faq",
            ),
        ),
    ),
    (
        "note-citer-2",
        "2026-06-11T16:48:30Z",
        "agent:n.silva@northstar.example",
        "support",
        "Customer ordered on 2 May, delivered 20 May, wants a refund today. The policy says "
        "fourteen days. Approve or decline?",
        "Approve it. Pending the regulator's review, Northstar will honour refund requests "
        "received within thirty days of delivery for orders placed before 4 May 2026.",
        (
            (
                "Pending the regulator's review, Northstar will honour refund requests received "
                "within thirty days of delivery for orders placed before 4 May 2026.",
                "note",
            ),
        ),
    ),
    (
        "note-citer-3",
        "2026-06-17T09:15:12Z",
        "employee:a.okafor@northstar.example",
        "legal",
        "What have we been telling customers about refunds for orders placed before 4 May?",
        "Refund requests received within thirty days of delivery are honoured for orders "
        "placed before 4 May 2026, pending the regulator's review.",
        (
            (
                "Refund requests received within thirty days of delivery are honoured for orders "
                "placed before 4 May 2026",
                "note",
            ),
        ),
    ),
)


# -- the planner ------------------------------------------------------------------------------


class Planner:
    def __init__(self, corpus: Corpus, rng: random.Random):
        self.corpus = corpus
        self.rng = rng
        self.planned: list[Planned] = []
        self.reserved: set[tuple[str, str, int]] = set()  # cited by the tampered record only

    # key answers ------------------------------------------------------------------

    def key(self, k: Key) -> Planned:
        at = dt(k.at)
        aid = answer_id_for(k.label)
        tag = producer_profile(k.system, at)["tags"]
        passages: list[dict[str, Any]] = []
        states: dict[str, str] = {}
        colls: list[str] = []
        rank_pid: dict[int, str] = {}
        for rank, (doc_id, rev, section, nth) in enumerate(k.passages, start=1):
            cited = self.corpus.pick(doc_id, rev, section, nth)
            pid = passage_id_for(aid, rank)
            rank_pid[rank] = pid
            score = round(0.93 - 0.07 * (rank - 1), 4)
            passages.append(passage_json(cited, pid, rank, score, at, k.question.lower(), tag))
            states[pid] = cited.state
            colls.append(cited.doc.collection)
        cites = [(q, [rank_pid[r] for r in ranks]) for q, ranks in k.cites]
        collection = k.collection or narrowest(colls)
        draft = make_draft(
            k.label,
            k.system,
            at,
            k.principal,
            k.question,
            k.answer,
            passages,
            citations_for(k.answer, cites),
            collection,
        )
        return Planned(k.label, k.system, at, draft, states, "legal" in colls)

    def note_and_citers(self) -> list[Planned]:
        at = dt(NOTE_AT)
        nid = answer_id_for(NOTE_LABEL)
        faq = self.corpus.pick("support-faq", "r1", "How do refunds work?")
        legal = self.corpus.pick("legal-brightwater-draft", "r2", "Proposed position")
        q = "Remember for refund questions: how refunds are paid, and our interim Brightwater position."
        passages = [
            passage_json(faq, passage_id_for(nid, 1), 1, 0.88, at, q.lower(), True),
            passage_json(legal, passage_id_for(nid, 2), 2, 0.84, at, q.lower(), True),
        ]
        note = make_draft(
            NOTE_LABEL,
            SUPPORT,
            at,
            "employee:a.okafor@northstar.example",
            q,
            NOTE_TEXT,
            passages,
            citations_for(
                NOTE_TEXT,
                [
                    (
                        "approved refunds are paid to the original payment method within five business days",
                        [passage_id_for(nid, 1)],
                    ),
                    (
                        "Pending the regulator's review, Northstar will honour refund requests "
                        "received within thirty days of delivery for orders placed before 4 May "
                        "2026.",
                        [passage_id_for(nid, 2)],
                    ),
                ],
            ),
            "legal",
            kind="note",
        )
        note_state = {passage_id_for(nid, 1): faq.state, passage_id_for(nid, 2): legal.state}
        out = [Planned(NOTE_LABEL, SUPPORT, at, note, note_state, True)]
        (note_state_value,) = set(note_state.values())
        for label, when, principal, coll, question, answer, cites in NOTE_CITERS:
            at_c = dt(when)
            aid = answer_id_for(label)
            note_pid = passage_id_for(aid, 1)
            p_note = {
                "passage_id": note_pid,
                "collection": "legal",
                "source": {
                    "system": f"{SUPPORT}/memory",
                    "path": f"notes/{nid}",
                    "revision": "1",
                },
                "document": {
                    "document_id": f"memory-note/{nid}",
                    "uri": f"assistant-memory://{SUPPORT}/notes/{nid}",
                    "revision": "1",
                    "backend": "assistant-memory",
                },
                "chunk": {
                    "chunk_id": f"{nid}:000",
                    "pipeline_version": "memory-notes/1",
                    "parameters": {},
                },
                "locator": {
                    "heading_path": [],
                    "paragraph": 0,
                    "char_start": 0,
                    "char_end": len(NOTE_TEXT),
                },
                "retrieved_text": NOTE_TEXT,
                "model_input_text": f"[memory note {nid}]\n{NOTE_TEXT}",
                "normalizer_version": NORMALIZER_VERSION,
                "retrieved_at": ts(at_c - timedelta(seconds=3)),
                "rank": 1,
                "score": 0.91,
                "query": question.lower(),
                "derived_from": nid,
            }
            passages = [p_note]
            states = {note_pid: note_state_value}
            pids = {"note": note_pid}
            if any(which == "faq" for _q, which in cites):
                faq_pid = passage_id_for(aid, 2)
                passages.append(passage_json(faq, faq_pid, 2, 0.79, at_c, question.lower(), True))
                states[faq_pid] = faq.state
                pids["faq"] = faq_pid
            draft = make_draft(
                label,
                SUPPORT,
                at_c,
                principal,
                question,
                answer,
                passages,
                citations_for(answer, [(q, [pids[w]]) for q, w in cites]),
                coll,
                lineage=[nid],
            )
            out.append(Planned(label, SUPPORT, at_c, draft, states, True))
        return out

    # background answers --------------------------------------------------------------

    def docs_for(self, system: str) -> list[Document]:
        want = "support" if system == SUPPORT else "ops"
        return [d for d in self.corpus.docs.values() if d.producer == want and d.weight > 0]

    def pool(self, system: str, at: datetime) -> list[Cited]:
        out = []
        for d in self.docs_for(system):
            rev = self.corpus.current(d, at)
            if rev is None:
                continue
            for c in self.corpus.citable(d, rev):
                if (d.document_id, rev.revision, c.chunk.chunk_index) not in self.reserved:
                    out.append(c)
        return out

    def background(self, label: str, system: str, at: datetime) -> Planned:
        rng = self.rng
        pool = self.pool(system, at)
        docs = sorted({c.doc.document_id for c in pool})
        weights = [self.corpus.docs[d].weight for d in docs]
        doc_id = rng.choices(docs, weights=weights)[0]
        primary = rng.choice([c for c in pool if c.doc.document_id == doc_id])
        same = [
            c
            for c in pool
            if c.state == primary.state
            and c.doc.collection == primary.doc.collection
            and c.chunk is not primary.chunk
        ]
        k = rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5])
        extra: list[Cited] = []
        near = [c for c in same if c.doc.document_id == doc_id]
        far = [c for c in same if c.doc.document_id != doc_id]
        while len(extra) < k - 1 and (near or far):
            src = near if near and (not far or rng.random() < 0.65) else far
            extra.append(src.pop(rng.randrange(len(src))))
        chosen = [primary, *extra]

        questions = primary.doc.questions.get(primary.section) or (
            f"What does the {primary.doc.title} say about {primary.section.lower()}?",
        )
        question = rng.choice(questions)
        customer = system == SUPPORT and rng.random() < 0.55
        if system == SUPPORT:
            principal = (
                f"customer:C-{rng.randint(100000, 799999)}"
                if customer
                else f"agent:{rng.choice(AGENTS)}@northstar.example"
            )
        else:
            people = LEGAL_PEOPLE if primary.doc.collection == "legal" else EMPLOYEES
            principal = f"employee:{rng.choice(people)}@northstar.example"

        cite_two = len(chosen) > 1 and rng.random() < 0.35
        body = [primary.chunk.text] + ([chosen[1].chunk.text] if cite_two else [])
        lead = rng.choice(LEADS_CUSTOMER if customer else LEADS_INTERNAL).format(
            title=primary.doc.title, section=primary.section
        )
        tail = rng.choice(TAILS_CUSTOMER if customer else TAILS_INTERNAL)
        answer = lead + " ".join(body) + tail

        aid = answer_id_for(label)
        tag = producer_profile(system, at)["tags"]
        score = round(rng.uniform(0.74, 0.94), 4)
        passages = []
        states = {}
        for rank, c in enumerate(chosen, start=1):
            pid = passage_id_for(aid, rank)
            passages.append(passage_json(c, pid, rank, score, at, question.lower(), tag))
            states[pid] = c.state
            score = round(score - rng.uniform(0.02, 0.11), 4)
        cites = [(primary.chunk.text, [passages[0]["passage_id"]])]
        if cite_two:
            cites.append((chosen[1].chunk.text, [passages[1]["passage_id"]]))
        colls = [c.doc.collection for c in chosen]
        draft = make_draft(
            label,
            system,
            at,
            principal,
            question,
            answer,
            passages,
            citations_for(answer, cites),
            narrowest(colls),
        )
        return Planned(label, system, at, draft, states, "legal" in colls)

    def plan(self) -> list[Planned]:
        # The tampered record's chunk must be cited once only: its blob is shared otherwise.
        tampered = next(k for k in KEYS if k.label == "tampered-damaged-claim")
        for doc_id, rev, section, nth in tampered.passages:
            c = self.corpus.pick(doc_id, rev, section, nth)
            self.reserved.add((doc_id, rev, c.chunk.chunk_index))
        planned = [self.key(k) for k in KEYS]
        planned += self.note_and_citers()
        # ~20 support and ~7 ops questions a month, January to October 2026
        n = 0
        for month in range(1, 11):
            start = datetime(2026, month, 1, tzinfo=UTC)
            end = datetime(2026 + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            for system, count in ((SUPPORT, 20), (OPS, 7)):
                lo, hi = start, end
                if system == SUPPORT and month == 10:
                    hi = dt(LATE_FROM)
                if system == OPS and month == 10:
                    hi = dt(OPS_LAST)
                for at in self.times(lo, hi, count):
                    n += 1
                    planned.append(self.background(f"bg-{n:04d}", system, at))
        # the support assistant's outbox delivered its last October manifests late
        for at in self.times(dt(LATE_FROM), dt("2026-11-01T00:00:00Z"), 6):
            n += 1
            p = self.background(f"bg-{n:04d}", SUPPORT, at)
            p.late = True
            planned.append(p)
        planned.sort(key=lambda p: (p.at, p.answer_id))
        return planned

    def times(self, lo: datetime, hi: datetime, count: int) -> list[datetime]:
        span = int((hi - lo).total_seconds())
        out = []
        for _ in range(count):
            t = lo + timedelta(seconds=self.rng.randrange(span))
            if t.hour < 6:  # people ask mostly in the daytime
                t += timedelta(hours=self.rng.randint(7, 12))
                if t >= hi:
                    t -= timedelta(hours=13)
            out.append(t)
        return sorted(out)


AGENTS = ("t.becker", "n.silva", "h.yilmaz", "c.dubois", "e.ruiz", "p.andersen")
EMPLOYEES = ("j.ortega", "m.haas", "k.iyer", "f.romano", "d.kowalski", "s.ahmed", "l.virtanen")
LEGAL_PEOPLE = ("a.okafor", "r.santos")
LEADS_CUSTOMER = (
    "",
    "Thanks for reaching out! ",
    "Good question. ",
    "Here is what our '{title}' page says: ",
    "According to our '{title}' page: ",
)
LEADS_INTERNAL = (
    "",
    "Per '{title}' ({section}): ",
    "The '{title}' page says: ",
    "From '{section}' in '{title}': ",
)
TAILS_CUSTOMER = ("", " Is there anything else I can help you with?", " I hope this helps!")
TAILS_INTERNAL = ("", " (Source: knowledge base.)", " Let me know if you need the link.")


# -- writing input files and running the timeline ---------------------------------------------


def revision_file(doc: Document, rev: Revision) -> dict[str, Any]:
    return {
        "schema": "tracer.source_revision/v1",
        "document_id": doc.document_id,
        "revision": rev.revision,
        "source_system": doc.source_system,
        "source_revision": rev.source_revision,
        "path": doc.path,
        "title": doc.title,
        "uri": doc.uri,
        "backend": doc.backend,
        "collection": doc.collection,
        "committed_at": rev.committed_at,
        "content": rev.content,
    }


@dataclass
class BuildInfo:
    out_dir: Path
    vault_dir: Path
    db_path: Path
    keys_dir: Path
    log_size: int
    root_hex: str
    checkpoint_note: str
    manifests: int
    answer_states: dict[str, str]  # answer_id -> currency for a viewer with every scope
    answer_states_limited: dict[str, str]  # ... for a viewer without "legal" (omar)
    passage_states: dict[str, dict[str, str]]  # answer_id -> passage_id -> state
    labels: dict[str, str]  # answer_id -> label ("bg-0001", or a key label)
    tombstones: list[dict[str, str]]
    tampered: dict[str, str]
    seconds: float = 0.0
    ingests: list[dict[str, Any]] = field(default_factory=list)


def _write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _events(corpus: Corpus, planned: list[Planned]) -> list[tuple[str, str, Any]]:
    """(time, kind, payload) for everything that happens to the vault, in order."""
    ev: list[tuple[str, str, Any]] = []
    for d in DOCUMENTS:
        if d.imported:
            for r in d.revisions:
                ev.append((r.committed_at, "revision", (d, r)))
        if d.deleted_at:
            ev.append((d.deleted_at, "deletion", d))
        for pg in d.purges:
            ev.append((pg.effective_at, "purge", (d, pg)))
    for p in planned:
        ev.append((ts(p.at), "manifest", p))
    ev.sort(key=lambda e: e[0])
    return ev


def _batches(ev: list[tuple[str, str, Any]]) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """Group ingestible events: the initial import, then a monthly ingest on the 1st."""
    groups: dict[str, list[tuple[str, Any]]] = {}
    for when, kind, payload in ev:
        if kind == "purge":
            continue
        if kind == "manifest" and payload.late:
            at = LATE_BATCH
        elif when < "2026-01-01":
            at = INITIAL_IMPORT
        else:
            t = dt(when)
            nxt = datetime(t.year + t.month // 12, t.month % 12 + 1, 1, 3, 0, tzinfo=UTC)
            at = ts(nxt)
        groups.setdefault(at, []).append((kind, payload))
    yield from sorted(groups.items())


def build(out_dir: Path, force: bool = False, inputs_dir: Path | None = None) -> BuildInfo:
    """Build the vault into `out_dir` (vault.duckdb + keys/) and return what to expect."""
    t0 = time.monotonic()
    out_dir = Path(out_dir)
    keys_dir = out_dir / "keys"
    db = out_dir / DB_FILE
    if db.exists() or db.with_name(DB_FILE + ".wal").exists():
        if not force:
            raise SystemExit(f"{out_dir}: a vault already exists (use --force to rebuild it)")
        db.unlink(missing_ok=True)
        db.with_name(DB_FILE + ".wal").unlink(missing_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)

    rng = random.Random(expected.SEED)  # noqa: S311 - fixture data, not secrets
    corpus = Corpus()
    for d in DOCUMENTS:  # whitespace-only revisions must normalize to the revision before
        for prev, cur in zip(d.revisions, d.revisions[1:], strict=False):
            if "migration" in cur.author and normalize(prev.content) != normalize(cur.content):
                raise AssertionError(f"{d.document_id}@{cur.revision} is not whitespace-only")
    planned = Planner(corpus, rng).plan()

    custodian = identity(expected.CUSTODIAN["name"])
    people = {name: identity(name) for name in expected.INVESTIGATORS}
    producers = {name: identity(name) for name in expected.PRODUCER_KEYS}
    custodian.save(keys_dir, expected.CUSTODIAN["passphrase"].encode())
    for name, who in people.items():
        who.save(keys_dir, str(expected.INVESTIGATORS[name]["passphrase"]).encode())
    for who in producers.values():
        who.save(keys_dir, expected.PRODUCER_KEY_PASSPHRASE.encode())
    rotation = dt(str(expected.PRODUCER_KEYS["support-assistant-2026b"]["valid_from"]))

    def signer(system: str, at: datetime) -> Identity:
        if system == OPS:
            return producers["ops-copilot-2026"]
        return producers["support-assistant-2026a" if at < rotation else "support-assistant-2026b"]

    tmp_owner = None
    if inputs_dir is None:
        tmp_owner = tempfile.TemporaryDirectory(prefix="northstar-inputs-")
        inputs = Path(tmp_owner.name)
    else:
        inputs = Path(inputs_dir)
        inputs.mkdir(parents=True, exist_ok=True)

    ingests: list[dict[str, Any]] = []
    vault = Vault.create(out_dir, custodian, VAULT_CREATED)
    try:
        k = expected.PRODUCER_KEYS
        admin.add_producer_key(
            vault,
            custodian,
            producers["support-assistant-2026a"].public,
            "2026-01-02T08:01:00Z",
            valid_from=k["support-assistant-2026a"]["valid_from"],
            valid_until=k["support-assistant-2026a"]["valid_until"],
        )
        admin.add_producer_key(
            vault,
            custodian,
            producers["ops-copilot-2026"].public,
            "2026-01-02T08:02:00Z",
            valid_from=k["ops-copilot-2026"]["valid_from"],
        )

        ev = _events(corpus, planned)
        # Administrative acts at their own times, between the ingest batches.
        admin_acts: list[tuple[str, str, Any]] = [(e[0], "purge", e[2]) for e in ev if e[1] == "purge"]
        admin_acts.append((A2_ADDED, "key_add_a2", None))
        admin_acts.append((str(B_REVOKED), "key_revoke_b", None))
        for name in expected.INVESTIGATORS:
            admin_acts.append((expected.INVESTIGATOR_GRANTED_AT[name], "grant", name))
        admin_acts.append((expected.RACHEL_REVOKED_AT, "revoke_rachel", None))
        timeline: list[tuple[str, str, Any]] = [(at, "ingest", items) for at, items in _batches(ev)]
        timeline += admin_acts
        timeline.sort(key=lambda e: e[0])

        tombstones: list[dict[str, str]] = []
        for at, kind, payload in timeline:
            if kind == "ingest":
                files: list[Path] = []
                batch_dir = inputs / at[:10]
                for item_kind, item in payload:
                    if item_kind == "revision":
                        d, r = item
                        files.append(
                            _write(
                                batch_dir / f"rev-{d.document_id}@{r.revision}.json",
                                revision_file(d, r),
                            )
                        )
                    elif item_kind == "deletion":
                        files.append(
                            _write(
                                batch_dir / f"del-{item.document_id}.json",
                                {
                                    "schema": "tracer.document_deletion/v1",
                                    "document_id": item.document_id,
                                    "deleted_at": item.deleted_at,
                                    "reason": item.deletion_reason,
                                },
                            )
                        )
                    else:
                        p: Planned = item
                        signed = draft_to_input(p.draft, signer(p.system, p.at))
                        files.append(_write(batch_dir / f"man-{p.answer_id}.json", signed))
                report = ingest(vault, files, custodian, at)
                if not report.ok or report.faults:
                    raise RuntimeError(
                        f"ingest at {at} failed: {json.dumps(report.to_json()['rejected'][:3])} "
                        f"{[f.__dict__ for f in report.faults[:3]]}"
                    )
                ingests.append({"at": at, "files": len(files), "size": report.checkpoint_size})
            elif kind == "purge":
                d, pg = payload
                rev = corpus.revision(d.document_id, pg.revision)
                digest = sha256_hex(rev.content.encode("utf-8"))
                admin.purge(vault, custodian, digest, pg.policy, pg.reason, pg.authorizer, pg.effective_at)
                tombstones.append(
                    {
                        "document_id": d.document_id,
                        "revision": pg.revision,
                        "digest": digest,
                        "policy": pg.policy,
                    }
                )
            elif kind == "key_add_a2":
                admin.add_producer_key(
                    vault,
                    custodian,
                    producers["support-assistant-2026b"].public,
                    at,
                    valid_from=k["support-assistant-2026b"]["valid_from"],
                )
            elif kind == "key_revoke_b":
                admin.revoke_producer_key(
                    vault,
                    custodian,
                    producers["ops-copilot-2026"].key_id,
                    at,
                    reason="ops copilot decommissioned on 2026-10-15; key retired. Manifests "
                    "signed before this point remain valid.",
                )
            elif kind == "grant":
                admin.grant_investigator(
                    vault,
                    custodian,
                    people[payload].public,
                    list(expected.INVESTIGATORS[payload]["scopes"]),
                    at,
                )
            elif kind == "revoke_rachel":
                admin.revoke_investigator(
                    vault,
                    custodian,
                    people["rachel"].key_id,
                    at,
                    reason="reassigned to another matter",
                )

        root_hex = vault.root().hex()
        size = vault.size()
        note = vault.latest_checkpoint().note
        tampered = _tamper(vault, custodian, planned)
    finally:
        vault.close()
        if tmp_owner is not None:
            tmp_owner.cleanup()

    states = {p.answer_id: p.state for p in planned}
    limited = {p.answer_id: ("unavailable" if p.restricted else p.state) for p in planned}
    info = BuildInfo(
        out_dir=out_dir,
        vault_dir=out_dir,
        db_path=db,
        keys_dir=keys_dir,
        log_size=size,
        root_hex=root_hex,
        checkpoint_note=note,
        manifests=len(planned),
        answer_states=states,
        answer_states_limited=limited,
        passage_states={p.answer_id: dict(p.passage_states) for p in planned},
        labels={p.answer_id: p.label for p in planned},
        tombstones=tombstones,
        tampered=tampered,
        ingests=ingests,
    )
    _check_expected(info)
    info.seconds = time.monotonic() - t0
    return info


def _tamper(vault: Vault, custodian: Identity, planned: list[Planned]) -> dict[str, str]:
    """The one insider edit: re-encrypt a changed passage text under the same data key.

    It decrypts fine (the AEAD is intact), but its SHA-256 no longer matches the digest
    the signed manifest and the log committed to.
    """
    target = next(p for p in planned if p.label == "tampered-damaged-claim")
    passage = target.draft["passages"][0]
    text: str = passage["retrieved_text"]
    digest = sha256_hex(text.encode("utf-8"))
    users = vault.query("SELECT count(*) FROM v_digests WHERE digest = ?", [digest])[0][0]
    if users != 1:
        raise RuntimeError(f"tamper target {digest} is shared by {users} records")
    rows = vault.blobs.rows(digest)
    if len(rows) != 1:
        raise RuntimeError(f"tamper target {digest}: expected one blob row, found {len(rows)}")
    collection, dk_id, _nonce, _ct = rows[0]
    key = DataKeys(vault, custodian).keys[dk_id]
    forged = text.replace(expected.TAMPERED["original"], expected.TAMPERED["replacement"])
    if forged == text:
        raise RuntimeError("tamper target does not contain the text to replace")
    nonce, ct = aead_encrypt(key, forged.encode("utf-8"), f"{digest}\n{collection}".encode())
    vault.con.execute(
        "UPDATE blobs SET nonce = ?, ct = ? WHERE digest = ? AND collection = ?",
        [nonce, ct, digest, collection],
    )
    return {
        "answer_id": target.answer_id,
        "passage_id": passage["passage_id"],
        "digest": digest,
        "collection": collection,
    }


def _check_expected(info: BuildInfo) -> None:
    """Fail the build if expected.py's literal facts do not describe what was built."""
    problems = []
    for label, aid in expected.KEY_ANSWERS.items():
        if info.labels.get(aid) != label:
            problems.append(f"KEY_ANSWERS[{label!r}] = {aid}, built {answer_id_for(label)}")
    for state, ids in expected.KEY_STATES_ALL_SCOPES.items():
        for aid in ids:
            if info.answer_states.get(aid) != state:
                problems.append(
                    f"{aid}: expected.py says {state}, design gives {info.answer_states.get(aid)}"
                )
    for aid in expected.KEY_UNAVAILABLE_WITHOUT_LEGAL:
        if info.answer_states_limited.get(aid) != "unavailable":
            problems.append(f"{aid}: should be unavailable without the legal scope")
    for key in ("answer_id", "passage_id", "digest", "collection"):
        if expected.TAMPERED[key] != info.tampered[key]:
            problems.append(f"TAMPERED[{key!r}] = {expected.TAMPERED[key]}, built {info.tampered[key]}")
    built = [(t["document_id"], t["revision"], t["digest"], t["policy"]) for t in info.tombstones]
    want = [(t["document_id"], t["revision"], t["digest"], t["policy"]) for t in expected.TOMBSTONES]
    if built != want:
        problems.append(f"TOMBSTONES: expected.py {want}, built {built}")
    if info.manifests < expected.MIN_MANIFESTS:
        problems.append(f"only {info.manifests} manifests")
    if problems:
        raise AssertionError("expected.py disagrees with the build:\n  " + "\n  ".join(problems))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_vault.build",
        description="Build the Northstar sample vault (deterministic).",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="vault directory")
    parser.add_argument("--force", action="store_true", help="replace an existing vault.duckdb")
    parser.add_argument(
        "--inputs", type=Path, help="keep the generated input files here (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    info = build(args.out, force=args.force, inputs_dir=args.inputs)
    counts: dict[str, int] = {}
    for s in info.answer_states.values():
        counts[s] = counts.get(s, 0) + 1
    print(f"vault     {info.vault_dir}")
    print(f"keys      {info.keys_dir}")
    print(f"manifests {info.manifests}   log entries {info.log_size}")
    print(f"root      {info.root_hex}")
    print("currency  " + ", ".join(f"{s} {counts.get(s, 0)}" for s in expected.STATES))
    print(f"tampered  {info.tampered['answer_id']} / {info.tampered['passage_id']}")
    print(f"built in  {info.seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
