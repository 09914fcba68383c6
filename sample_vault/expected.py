"""What an investigator should find in the sample vault, as plain data.

`build.py` asserts the literal ids and digests below against what it actually built, so
this file cannot silently drift from the vault.  Tests import it; so can anyone checking
the engine's verdicts.

Currency states are given for two viewers: one whose scopes cover every collection
(``ines``, scopes ``["*"]``) and one without the restricted ``legal`` collection
(``omar``, scopes ``support, ops, hr``).  For ``omar`` every answer that cites legal text,
directly or through the memory note, is ``unavailable``.

Every answer's passages are built to share one currency state, so an answer's state is
that state whatever order of strictness the engine uses.  The full per-answer mapping
(all ~300 answers) is returned by ``sample_vault.build.build()`` as
``BuildInfo.answer_states`` / ``answer_states_limited``, derived from
``REVISION_STATES`` below, never from the engine.
"""

from __future__ import annotations

from typing import Any

SEED = 20261129

# -- identities ------------------------------------------------------------------------

CUSTODIAN = {"name": "custodian", "passphrase": "northstar-custodian"}

INVESTIGATORS: dict[str, dict[str, Any]] = {
    "ines": {"passphrase": "ines-demo", "scopes": ["*"], "revoked": False},
    "omar": {"passphrase": "omar-demo", "scopes": ["hr", "ops", "support"], "revoked": False},
    "rachel": {"passphrase": "rachel-demo", "scopes": ["support"], "revoked": True},
}
INVESTIGATOR_GRANTED_AT = {
    "ines": "2026-11-02T09:00:00Z",
    "omar": "2026-11-02T09:01:00Z",
    "rachel": "2026-11-02T09:02:00Z",
}
RACHEL_REVOKED_AT = "2026-11-09T17:00:00Z"

PRODUCERS = {
    "northstar-support-assistant": ["support-assistant-2026a", "support-assistant-2026b"],
    "northstar-ops-copilot": ["ops-copilot-2026"],
}
PRODUCER_KEY_PASSPHRASE = "producer-demo"  # noqa: S105 - demo key, documented
PRODUCER_KEYS: dict[str, dict[str, str | None]] = {
    "support-assistant-2026a": {
        "valid_from": "2026-01-01T00:00:00Z",
        "valid_until": "2026-06-01T00:00:00Z",
        "revoked_at": None,
    },
    "support-assistant-2026b": {
        "valid_from": "2026-06-01T00:00:00Z",
        "valid_until": None,
        "revoked_at": None,
    },
    "ops-copilot-2026": {
        "valid_from": "2026-01-01T00:00:00Z",
        "valid_until": None,
        # after its last manifest (2026-10-15): those manifests stay valid
        "revoked_at": "2026-10-20T12:00:00Z",
    },
}

COLLECTIONS = ["support", "ops", "hr", "legal"]
RESTRICTED_COLLECTIONS = ["legal"]

MIN_MANIFESTS = 250

# -- currency by cited revision ----------------------------------------------------------
# document_id -> revision -> state for every citable section, or section -> state when
# sections of one revision fare differently.  Sections not listed are never cited by the
# background answers (shipping "Damaged items" is reserved for the tampered record).

STATES = ("verified", "moved", "stale", "ambiguous", "unavailable", "unchecked")

_SHIPPING_SECTIONS = (
    "Delivery times",
    "Shipping costs",
    "Tracking your order",
    "Lost parcels",
)

REVISION_STATES: dict[str, dict[str, str | dict[str, str]]] = {
    # deleted 2026-09-14: every revision is unavailable now
    "returns-policy": {
        "r1": "unavailable",
        "r2": "unavailable",
        "r3": "unavailable",
        "r4": "unavailable",
        "r5": "unavailable",
    },
    # never imported
    "returns-and-refunds": {"r1": "unchecked"},
    "carrier-sla-parcelnord": {"r3": "unchecked"},
    # thirty -> fourteen days in r2
    "returns-policy-uk": {
        "r1": {"Who this applies to": "verified", "Refund window": "stale"},
        "r2": "verified",
    },
    # r2 only inserts "About this policy" before the other sections
    "shipping-policy": {
        "r1": dict.fromkeys(_SHIPPING_SECTIONS, "moved"),
        "r2": dict.fromkeys(("About this policy", *_SHIPPING_SECTIONS), "verified"),
    },
    # r2 is a whitespace-only edit of r1
    "support-faq": {"r1": "verified", "r2": "verified"},
    # r2 states the coverage sentence twice, under two new headings
    "warranty-policy": {
        "r1": {
            "Coverage": "ambiguous",
            "How to make a claim": "moved",
            "Repairs and replacements": "moved",
        },
        "r2": "verified",
    },
    # later revisions only append a section
    "privacy-notice": {"r1": "verified", "r2": "verified"},
    "gift-cards": {"r1": "verified"},
    "runbook-restart-services": {"r1": "verified", "r2": "verified"},
    "oncall-handbook": {"r1": "verified", "r2": "verified"},
    "runbook-incident-response": {"r1": "verified"},
    "ops-log-triage-notes": {"r1": "verified"},
    # both revisions' content purged by retention (r1 while r2 was current, then r2)
    "travel-allowance": {"r1": "unavailable", "r2": "unavailable"},
    # r3 lowers the client-meal limit (same length, so other sections keep their offsets)
    "expenses-policy": {
        "r1": {
            "Scope": "verified",
            "Client meals": "stale",
            "Receipts": "verified",
            "Approvals": "verified",
        },
        "r2": {
            "Scope": "verified",
            "Client meals": "stale",
            "Receipts": "verified",
            "Approvals": "verified",
            "Travel": "verified",
        },
        "r3": "verified",
    },
    # restricted: unavailable to a viewer without the legal scope
    "legal-brightwater-draft": {"r1": "verified", "r2": "verified"},
    "legal-hold-procedure": {"r1": "verified"},
}

# -- the answers the story is about ------------------------------------------------------
# label -> answer_id (answer ids are "ans-" + sha256("northstar/answer/" + label)[:12]).

KEY_ANSWERS = {
    "faq-refund-timing": "ans-fc62f4dec0ed",
    "faq-whitespace-r1": "ans-f92510c40cbc",
    "shipping-moved": "ans-34f917ea3027",
    "uk-stale-thirty": "ans-0f914800ec7a",
    "expenses-stale-meals": "ans-9bf271ae8616",
    "warranty-ambiguous": "ans-b3acfea6b375",
    "returns-a-thirty": "ans-fdce7fb81c25",
    "returns-whitespace": "ans-aff407391bee",
    "returns-b-index-lag": "ans-8a2354ee59ce",
    "returns-c-fourteen": "ans-ed58b9fa5765",
    "returns-d-appendix": "ans-454617509a91",
    "travel-r1-allowance": "ans-929c791b08af",
    "travel-r2-hotel": "ans-5f239411d2ed",
    "legal-hold-question": "ans-b46f43641a36",
    "carrier-sla-claim": "ans-594bed15e609",
    "returns-new-page": "ans-ff1a4227778f",
    "restart-with-exception": "ans-79b7188e0f6a",
    "restart-dropped-exception": "ans-1b140d83c6e1",
    "memory-note": "ans-6ded63b68827",
    "note-citer-1": "ans-f1dcccc7f652",
    "note-citer-2": "ans-b3e27100b02b",
    "note-citer-3": "ans-b66cd47849bd",
    "hostile-customer-markup": "ans-321e7a7b7fc9",
    "hostile-terminal-paste": "ans-29b02993758e",
    "tampered-damaged-claim": "ans-f5f07070554a",
}

# Currency of the key answers for a viewer with every scope (ines).
KEY_STATES_ALL_SCOPES = {
    "verified": [
        "ans-fc62f4dec0ed",  # faq-refund-timing: cites the current FAQ revision r2
        "ans-f92510c40cbc",  # faq-whitespace-r1: cites FAQ r1; r2 changed whitespace only
        "ans-79b7188e0f6a",  # restart-with-exception
        "ans-1b140d83c6e1",  # restart-dropped-exception: the source is current; the ANSWER is wrong
        "ans-b46f43641a36",  # legal-hold-question (legal)
        "ans-6ded63b68827",  # memory-note (kind "note", legal)
        "ans-f1dcccc7f652",  # note-citer-1 (lineage: memory-note)
        "ans-b3e27100b02b",  # note-citer-2 (lineage: memory-note)
        "ans-b66cd47849bd",  # note-citer-3 (lineage: memory-note)
        "ans-321e7a7b7fc9",  # hostile-customer-markup
        "ans-29b02993758e",  # hostile-terminal-paste
        "ans-f5f07070554a",  # tampered-damaged-claim: currency verified, integrity is not
    ],
    "moved": ["ans-34f917ea3027"],  # shipping-moved: r2 inserted "About this policy"
    "stale": [
        "ans-0f914800ec7a",  # uk-stale-thirty: thirty days then, fourteen now
        "ans-9bf271ae8616",  # expenses-stale-meals: €60 then, €50 now
    ],
    "ambiguous": ["ans-b3acfea6b375"],  # warranty-ambiguous: the sentence is now in two sections
    "unavailable": [
        "ans-fdce7fb81c25",  # returns-a-thirty (returns policy deleted)
        "ans-aff407391bee",  # returns-whitespace
        "ans-8a2354ee59ce",  # returns-b-index-lag
        "ans-ed58b9fa5765",  # returns-c-fourteen
        "ans-454617509a91",  # returns-d-appendix
        "ans-929c791b08af",  # travel-r1-allowance (revision content purged: tombstone)
        "ans-5f239411d2ed",  # travel-r2-hotel (revision content purged: tombstone)
    ],
    "unchecked": [
        "ans-594bed15e609",  # carrier-sla-claim: SharePoint SLA never imported
        "ans-ff1a4227778f",  # returns-new-page: 'Returns and refunds' never imported
    ],
}

# Differences for a viewer without the legal scope (omar): these become unavailable.
KEY_UNAVAILABLE_WITHOUT_LEGAL = [
    "ans-b46f43641a36",  # legal-hold-question
    "ans-6ded63b68827",  # memory-note
    "ans-f1dcccc7f652",  # note-citer-1
    "ans-b3e27100b02b",  # note-citer-2
    "ans-b66cd47849bd",  # note-citer-3
]

# -- the memory note ---------------------------------------------------------------------

NOTE = {
    "answer_id": "ans-6ded63b68827",
    "collection": "legal",
    "derived_from_documents": ["support-faq", "legal-brightwater-draft"],
    # citing answers: (answer_id, the answer's own collection)
    "cited_by": [
        ("ans-f1dcccc7f652", "support"),
        ("ans-b3e27100b02b", "support"),
        ("ans-b66cd47849bd", "legal"),
    ],
}

# -- the dropped production exception ------------------------------------------------------

DROPPED_EXCEPTION = {
    "answer_id": "ans-1b140d83c6e1",
    "generated_at": "2026-08-14T01:32:07Z",
    "document_id": "runbook-restart-services",
    "revision": "r2",
    "retrieved_sentence": (
        "Do not restart the payments service in production during settlement "
        "(01:00–03:00 UTC) without approval from the on-call lead."
    ),
    "control_answer_id": "ans-79b7188e0f6a",  # same question in May, condition kept
}

# -- deletions and retention purges ---------------------------------------------------------

DELETED_DOCUMENTS = {"returns-policy": "2026-09-14T16:00:00Z"}
NEVER_IMPORTED = ["carrier-sla-parcelnord", "returns-and-refunds"]

# content_sha256 of the purged revisions (the tombstones' digests)
TOMBSTONES = [
    {
        "document_id": "travel-allowance",
        "revision": "r1",
        "digest": "ef4812b776e7270d1d7e430da0ab90f93c8fb10005105d95dca7f04a89fe53b5",
        "policy": "RET-6M-SUPERSEDED",
        "effective_at": "2026-07-20T09:00:00Z",
        "note": "purged while r2 was the current revision",
    },
    {
        "document_id": "travel-allowance",
        "revision": "r2",
        "digest": "98bf76a9daba0beaf0adcf370ce07ad3356f4c3ebcb3f4cdb999564812a6e531",
        "policy": "RET-90D-RETIRED",
        "effective_at": "2026-10-05T09:00:00Z",
        "note": "the latest revision: purged after the page was retired",
    },
]

# -- rendering safety ------------------------------------------------------------------------

HOSTILE_ANSWERS = {
    # question and answer carry Rich markup, a Textual action link, a bidi override
    # (U+202E) and a zero-width space (U+200B)
    "ans-321e7a7b7fc9": ["[bold]x[/bold]", "[@click=app.quit]", "\u202e", "\u200b"],
    # the retrieved passage (and the answer quoting it) carries ANSI CSI sequences
    # (clear screen "\x1b[2J", colours) and an OSC 52 clipboard write
    "ans-29b02993758e": ["\x1b[2J", "\x1b]52;c;SGVsbG8=\x07"],
}

# -- the one tampered record -------------------------------------------------------------------

TAMPERED = {
    "answer_id": "ans-f5f07070554a",
    "passage_id": "psg-b47db759e7",
    # retrieved_sha256 of that passage
    "digest": "290d7c12af192d25e9ededc03c552fb3c73d6b5a1d192195fc834e56d36e9026",
    "collection": "support",
    "original": "within 48 hours of delivery",
    "replacement": "within 14 days of delivery",
}
