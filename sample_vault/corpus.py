"""The Northstar source documents, their revision histories, and what people asked.

Plain content only: `build.py` turns it into `tracer.source_revision/v1` files and
trace manifests, `expected.py` says what an investigator should find.  Every text here
is fixed; nothing in this module is random.

Whitespace-only revisions are produced by `rewrap()` from the revision before them, so
their normalized text is provably identical (build.py asserts it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DOCUMENTS", "Document", "Purge", "Revision", "rewrap"]


def rewrap(text: str, width: int = 58) -> str:
    """A whitespace-only edit: re-wrapped lines, trailing spaces, doubled blank lines, CRLF.

    Headings stay on their own line; no wrapped line may begin with a markdown marker.
    """
    out: list[str] = []
    for block in text.split("\n\n"):
        if block.startswith("#"):
            out.append(block + "  ")
            continue
        words = block.split()
        lines: list[str] = []
        line = ""
        for w in words:
            if line and len(line) + 1 + len(w) > width:
                lines.append(line + " ")
                line = w
            else:
                line = f"{line} {w}" if line else w
        if line:
            lines.append(line)
        out.append("\r\n".join(lines))
    return "\r\n\r\n\r\n".join(out) + "\r\n"


@dataclass(frozen=True)
class Revision:
    revision: str  # the vault's revision id for this document
    source_revision: str  # the source system's own revision id
    committed_at: str  # when the source system recorded it (RFC 3339 UTC)
    content: str
    # When the assistants' retrieval index picked the revision up (None: the next day).
    # A late index is part of the story: answers kept citing the revision before.
    indexed_at: str | None = None
    author: str = ""
    comment: str = ""


@dataclass(frozen=True)
class Purge:
    revision: str
    policy: str
    reason: str
    authorizer: str
    effective_at: str


@dataclass(frozen=True)
class Document:
    document_id: str
    title: str
    collection: str
    source_system: str
    path: str
    uri: str
    backend: str
    producer: str  # "support" or "ops": which assistant retrieves from it
    revisions: tuple[Revision, ...]
    questions: dict[str, tuple[str, ...]]  # section heading -> questions people asked
    weight: int = 1  # how often it comes up in everyday questions
    imported: bool = True  # False: its revisions never reached the vault
    retired_at: str | None = None  # removed from the retrieval index at this time
    deleted_at: str | None = None  # a tracer.document_deletion/v1 is ingested
    deletion_reason: str = ""
    purges: tuple[Purge, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------------------
# support collection (public knowledge base, northstar-confluence space SUP)
# --------------------------------------------------------------------------------------

_RETURNS_A = """# Returns policy

## Refund window

Customers may request a refund within thirty days of delivery.

Refunds are issued to the original payment method. Bank processing can take up to five
business days after we approve the refund.

## Condition of returned items

Items must be unused and returned in their original packaging with all accessories,
manuals and cables.

Opened software, gift cards and personalised items cannot be returned unless they
arrived faulty.

## How to start a return

Start a return from the Orders page in your Northstar account, or ask a support agent
to open one for you.

We email a prepaid return label within one business day. Drop the parcel at any
partner carrier location; keep the receipt until the refund arrives.

## Exchanges

If you would rather have a different size or colour, choose "Exchange" instead of
"Refund" when you start the return. We ship the replacement as soon as the carrier
scans your parcel.
"""

_RETURNS_INTRO = """# Returns policy

## Introduction

This policy explains how customers of Northstar Home & Outdoor can return items bought
on northstar.example or in our stores, and how refunds are paid. It applies to orders
delivered in the European Union and the United States; customers in the United Kingdom
should read the UK returns policy.

## Refund window
"""

_RETURNS_B = _RETURNS_A.replace("# Returns policy\n\n## Refund window\n", _RETURNS_INTRO)
_RETURNS_C = _RETURNS_B.replace("within thirty days of delivery", "within fourteen days of delivery")
_RETURNS_D = (
    _RETURNS_C
    + """
## Appendix

Customers may request a refund within fourteen days of delivery.

Agents: the refund window is counted from the delivery scan, not from the order date.
"""
)

RETURNS_POLICY = Document(
    document_id="returns-policy",
    title="Returns policy",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/48213/Returns+policy",
    uri="https://wiki.northstar.example/spaces/SUP/pages/48213",
    backend="confluence-export-s3",
    producer="support",
    weight=6,
    revisions=(
        Revision(
            "r1",
            "48213.v7",
            "2025-11-03T09:12:00Z",
            _RETURNS_A,
            author="l.meyer",
            comment="Annual review, no change to the refund window",
        ),
        Revision(
            "r2",
            "48213.v8",
            "2026-01-20T14:03:00Z",
            rewrap(_RETURNS_A),
            author="confluence-migration-bot",
            comment="Editor migration: line breaks and spacing only",
        ),
        Revision(
            "r3",
            "48213.v9",
            "2026-03-02T10:40:00Z",
            _RETURNS_B,
            author="l.meyer",
            comment="Add introduction and scope",
        ),
        Revision(
            "r4",
            "48213.v10",
            "2026-05-04T07:55:00Z",
            _RETURNS_C,
            # The support assistant's index was not refreshed for five weeks (a failed
            # nightly job); answers kept quoting thirty days until 8 June.
            indexed_at="2026-06-08T02:00:00Z",
            author="p.haddad",
            comment="Refund window shortened to fourteen days (pricing decision PD-2026-07)",
        ),
        Revision(
            "r5",
            "48213.v11",
            "2026-07-06T12:20:00Z",
            _RETURNS_D,
            author="p.haddad",
            comment="Add appendix for agents",
        ),
    ),
    deleted_at="2026-09-14T16:00:00Z",
    deletion_reason=(
        "Page archived in Confluence and replaced by 'Returns and refunds' (SUP/51877), "
        "which covers the EU, US and UK in one page"
    ),
    questions={
        "Refund window": (
            "How long do I have to return something for a refund?",
            "Customer says the kayak arrived 19 days ago and wants a refund. Are we still in the window?",
            "What is the refund deadline after delivery?",
            "Can I still get my money back? I received the order about three weeks ago.",
        ),
        "Condition of returned items": (
            "Can I return a tent I already set up once in the garden?",
            "Customer opened the software licence box. Can they return it?",
            "Do I need the original packaging to send something back?",
        ),
        "How to start a return": (
            "How do I start a return?",
            "Where do I get a return label?",
        ),
        "Exchanges": (
            "Can I exchange my jacket for a bigger size instead of a refund?",
            "How does an exchange work?",
        ),
        "Introduction": ("Does the returns policy apply to orders from the UK?",),
        "Appendix": ("Is the refund window counted from the order date or delivery?",),
    },
)

_RETURNS_NEW = """# Returns and refunds

## Refund window

You can ask for a refund within fourteen days of delivery, in the EU, the US and the UK.

Faulty items can be returned for a full refund within thirty days of delivery, wherever
you live.

## How refunds are paid

Refunds go back to the original payment method within five business days of our approval.

## Starting a return

Start a return from the Orders page, print the prepaid label and drop the parcel at any
partner carrier location.
"""

RETURNS_AND_REFUNDS = Document(
    document_id="returns-and-refunds",
    title="Returns and refunds",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/51877/Returns+and+refunds",
    uri="https://wiki.northstar.example/spaces/SUP/pages/51877",
    backend="confluence-export-s3",
    producer="support",
    weight=6,
    imported=False,  # the new page was never added to the vault's import job
    revisions=(
        Revision(
            "r1",
            "51877.v2",
            "2026-09-14T15:30:00Z",
            _RETURNS_NEW,
            indexed_at="2026-09-15T02:00:00Z",
            author="p.haddad",
        ),
    ),
    questions={
        "Refund window": (
            "How long do I have to return something for a refund?",
            "What is the refund deadline after delivery?",
            "My blender is faulty, it arrived 20 days ago. Can I still return it?",
        ),
        "How refunds are paid": ("When will I get my refund?", "Where does the refund go?"),
        "Starting a return": ("How do I start a return?",),
    },
)

_UK_V1 = """# Returns policy (United Kingdom)

## Who this applies to

This policy applies to orders delivered to addresses in England, Scotland, Wales and
Northern Ireland.

## Refund window

Customers in the United Kingdom may request a refund within thirty days of delivery.

## Your statutory rights

Your rights under the Consumer Rights Act 2015 are not affected: a faulty item can be
rejected for a full refund within thirty days.

## Return postage

Return postage is free for faulty items. For change-of-mind returns we deduct £4.95 from
the refund to cover the prepaid label.
"""

RETURNS_UK = Document(
    document_id="returns-policy-uk",
    title="Returns policy (United Kingdom)",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/48977/Returns+policy+(United+Kingdom)",
    uri="https://wiki.northstar.example/spaces/SUP/pages/48977",
    backend="confluence-export-s3",
    producer="support",
    weight=3,
    revisions=(
        Revision("r1", "48977.v4", "2025-10-06T08:30:00Z", _UK_V1, author="l.meyer"),
        Revision(
            "r2",
            "48977.v5",
            "2026-04-01T09:00:00Z",
            _UK_V1.replace(
                "refund within thirty days of delivery.", "refund within fourteen days of delivery."
            ),
            # The same failed index job: the UK change reached the assistant on 11 May.
            indexed_at="2026-05-11T02:00:00Z",
            author="p.haddad",
            comment="UK refund window aligned to fourteen days",
        ),
    ),
    questions={
        "Who this applies to": (
            "I live in Belfast. Which returns policy applies to me?",
            "Does the UK returns policy cover Scotland?",
        ),
        "Refund window": (
            "I'm in Manchester, how long do I have to return my order?",
            "UK customer asking for a refund 20 days after delivery. Allowed?",
            "What's the refund window for UK orders?",
        ),
        "Your statutory rights": ("My kettle broke after a week. What are my rights in the UK?",),
        "Return postage": ("Do I have to pay for return postage in the UK?",),
    },
)

_SHIPPING_V1 = """# Shipping and delivery

## Delivery times

Standard delivery takes three to five business days within the EU and the US. Express
delivery arrives the next business day when the order is placed before 14:00 local time.

Large items such as furniture, kayaks and tents over 20 kg are delivered by a two-person
crew on a date you book.

## Shipping costs

Standard delivery is free for orders over €50 or $50. Below that threshold it costs €4.95
or $4.95. Express delivery costs €12.95 or $12.95 regardless of the order value.

## Tracking your order

You receive a tracking link by email when the parcel leaves our warehouse. Tracking can
take up to 24 hours to show the first scan.

## Damaged items

Report items damaged in transit within 48 hours of delivery, with photos of the item and
the packaging. We arrange a replacement or a refund once the carrier confirms the claim.

## Lost parcels

If tracking has not changed for seven business days, contact support. We open an
investigation with the carrier and send a replacement if the parcel is confirmed lost.
"""

_SHIPPING_V2 = _SHIPPING_V1.replace(
    "# Shipping and delivery\n\n",
    """# Shipping and delivery

## About this policy

This page describes how Northstar ships orders placed online and by phone. Collection
from a store is described on the Click & Collect page.

""",
)

SHIPPING = Document(
    document_id="shipping-policy",
    title="Shipping and delivery",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/47102/Shipping+and+delivery",
    uri="https://wiki.northstar.example/spaces/SUP/pages/47102",
    backend="confluence-export-s3",
    producer="support",
    weight=5,
    revisions=(
        Revision("r1", "47102.v12", "2025-12-01T10:00:00Z", _SHIPPING_V1, author="s.brandt"),
        Revision(
            "r2",
            "47102.v13",
            "2026-04-15T13:45:00Z",
            _SHIPPING_V2,
            author="s.brandt",
            comment="Add 'About this policy'",
        ),
    ),
    questions={
        "Delivery times": (
            "How long does standard delivery take?",
            "If I order express before lunch, when does it arrive?",
            "How are large items like a sofa delivered?",
        ),
        "Shipping costs": (
            "Is shipping free?",
            "How much is express delivery?",
            "Customer's order is €42. Do they pay for shipping?",
        ),
        "Tracking your order": (
            "Where is my tracking link?",
            "My tracking link shows nothing yet, is that normal?",
        ),
        "Damaged items": ("My parcel arrived damaged, what do I do?",),
        "Lost parcels": (
            "My tracking hasn't moved for a week, what now?",
            "How do we handle a lost parcel?",
        ),
        "About this policy": ("Does the shipping policy cover Click & Collect?",),
    },
)

_FAQ_V1 = """# Customer FAQ

## Where is my order?

Every order has a tracking link in the confirmation email and on the Orders page. If
the link shows no movement for seven business days, contact us and we will open an
investigation with the carrier.

## Can I change or cancel my order?

You can change or cancel an order free of charge until it is packed, usually within two
hours of ordering. After that, wait for delivery and start a return.

## How do refunds work?

Approved refunds are paid to the original payment method within five business days. You
receive an email as soon as we approve the refund.

## Do you ship internationally?

We ship to the EU, the United Kingdom, Norway, Switzerland and the United States. Import
duties for Norway and Switzerland are paid by the customer on delivery.

## Do you price match?

We match the price of an identical item sold by a national retailer in the same country,
within fourteen days of your purchase. Marketplace sellers are excluded.

## How do I contact support?

Chat with us on northstar.example from 08:00 to 20:00 CET, seven days a week, or call
+49 30 5557 0100 on weekdays.
"""

SUPPORT_FAQ = Document(
    document_id="support-faq",
    title="Customer FAQ",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/45000/Customer+FAQ",
    uri="https://wiki.northstar.example/spaces/SUP/pages/45000",
    backend="confluence-export-s3",
    producer="support",
    weight=6,
    revisions=(
        Revision("r1", "45000.v31", "2025-12-10T11:00:00Z", _FAQ_V1, author="m.costa"),
        Revision(
            "r2",
            "45000.v32",
            "2026-06-20T06:10:00Z",
            rewrap(_FAQ_V1, width=64),
            author="confluence-migration-bot",
            comment="Editor migration: line breaks and spacing only",
        ),
    ),
    questions={
        "Where is my order?": ("Where is my order?", "How do I find my tracking link?"),
        "Can I change or cancel my order?": (
            "Can I cancel my order? I placed it 30 minutes ago.",
            "I want to change the delivery address on my order.",
        ),
        "How do refunds work?": (
            "When will I see my refund?",
            "How long do refunds take to reach my card?",
        ),
        "Do you ship internationally?": (
            "Do you ship to Switzerland?",
            "Do I pay import duties in Norway?",
        ),
        "Do you price match?": ("Do you price match Amazon?", "Can you match a lower price?"),
        "How do I contact support?": ("What are your opening hours?", "Can I call you?"),
    },
)

_WARRANTY_V1 = """# Warranty

## Coverage

Northstar repairs or replaces any product that fails under normal use within two years of
delivery.

The warranty does not cover wear and tear, accidental damage, or damage caused by repairs
made outside Northstar's service partners.

## How to make a claim

Open a warranty claim from the Orders page and attach a photo or a short video of the
fault. A technician replies within three business days.

## Repairs and replacements

We first try to repair the product. If a repair is not possible, or would take longer
than 30 days, we replace it with the same or an equivalent model.
"""

_WARRANTY_V2 = """# Warranty

## Electronics and appliances

Northstar repairs or replaces any product that fails under normal use within two years of
delivery.

Batteries are covered for one year or 500 charge cycles, whichever comes first.

## Outdoor gear and furniture

Northstar repairs or replaces any product that fails under normal use within two years of
delivery.

Fading of fabrics and UV damage count as wear and tear.

## Exclusions

The warranty does not cover wear and tear, accidental damage, or damage caused by repairs
made outside Northstar's service partners.

## How to make a claim

Open a warranty claim from the Orders page and attach a photo or a short video of the
fault. A technician replies within three business days.

## Repairs and replacements

We first try to repair the product. If a repair is not possible, or would take longer
than 30 days, we replace it with the same or an equivalent model.
"""

WARRANTY = Document(
    document_id="warranty-policy",
    title="Warranty",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/46120/Warranty",
    uri="https://wiki.northstar.example/spaces/SUP/pages/46120",
    backend="confluence-export-s3",
    producer="support",
    weight=3,
    revisions=(
        Revision("r1", "46120.v5", "2025-11-20T15:00:00Z", _WARRANTY_V1, author="j.nowak"),
        Revision(
            "r2",
            "46120.v6",
            "2026-07-01T09:30:00Z",
            _WARRANTY_V2,
            author="j.nowak",
            comment="Split coverage by product family; battery terms",
        ),
    ),
    questions={
        "Coverage": (
            "How long is the warranty on a camping stove?",
            "My lantern stopped working after 14 months. Is it still under warranty?",
            "Is accidental damage covered by the warranty?",
        ),
        "How to make a claim": ("How do I make a warranty claim?",),
        "Repairs and replacements": (
            "Will you replace my broken heater or repair it?",
            "How long can a warranty repair take?",
        ),
        "Electronics and appliances": ("Is the battery of my e-bike covered by the warranty?",),
        "Outdoor gear and furniture": ("Is a faded parasol covered by the warranty?",),
        "Exclusions": ("What does the warranty not cover?",),
    },
)

_PRIVACY_V1 = """# Privacy notice

## What we collect

We collect your name, contact details, delivery addresses, order history and the
messages you send to customer support, including chats with our support assistant.

## Why we use it

We use your data to deliver orders, handle returns and warranty claims, prevent fraud and,
if you agreed, to send you offers.

## How long we keep it

Order records are kept for ten years to meet tax law. Support chats are kept for two
years after the conversation ends.

## Your rights

You can ask for a copy of your data, its correction or its deletion by writing to
privacy@northstar.example. We reply within one month.
"""

PRIVACY = Document(
    document_id="privacy-notice",
    title="Privacy notice",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/44001/Privacy+notice",
    uri="https://wiki.northstar.example/spaces/SUP/pages/44001",
    backend="confluence-export-s3",
    producer="support",
    weight=2,
    revisions=(
        Revision("r1", "44001.v9", "2025-09-15T08:00:00Z", _PRIVACY_V1, author="dpo.office"),
        Revision(
            "r2",
            "44001.v10",
            "2026-03-20T08:00:00Z",
            _PRIVACY_V1
            + """
## Changes to this notice

We announce material changes to this notice by email at least thirty days in advance.
""",
            author="dpo.office",
            comment="Add 'Changes to this notice'",
        ),
    ),
    questions={
        "What we collect": ("What personal data do you store about me?",),
        "Why we use it": ("Why do you need my phone number?",),
        "How long we keep it": (
            "How long do you keep my chat history?",
            "How long are order records kept?",
        ),
        "Your rights": ("How do I get my data deleted?", "Can I get a copy of my data?"),
        "Changes to this notice": ("Will you tell me if the privacy notice changes?",),
    },
)

_GIFT_V1 = """# Gift cards

## Buying gift cards

Gift cards are sold online and in stores in amounts from €10 to €500. Digital gift cards
are emailed within ten minutes.

## Validity

Gift cards are valid for three years from the date of purchase. The remaining balance is
shown on the Gift cards page of your account.

## Using a gift card

You can combine up to three gift cards with one other payment method in a single order.

## Lost gift cards

We can block and replace a lost gift card if you still have the order confirmation or
the receipt.
"""

GIFT_CARDS = Document(
    document_id="gift-cards",
    title="Gift cards",
    collection="support",
    source_system="northstar-confluence",
    path="SUP/46733/Gift+cards",
    uri="https://wiki.northstar.example/spaces/SUP/pages/46733",
    backend="confluence-export-s3",
    producer="support",
    weight=2,
    revisions=(Revision("r1", "46733.v3", "2025-10-28T10:00:00Z", _GIFT_V1, author="m.costa"),),
    questions={
        "Buying gift cards": ("How fast does an e-gift card arrive?", "What amounts can I buy?"),
        "Validity": ("Do gift cards expire?", "How long is my gift card valid?"),
        "Using a gift card": ("Can I pay with two gift cards and my credit card?",),
        "Lost gift cards": ("I lost my gift card, can you replace it?",),
    },
)

_CARRIER_V3 = """# ParcelNord service level agreement 2026

## Delivery commitments

ParcelNord commits to delivering 96% of standard parcels within three business days of
collection from the Northstar warehouse.

## Lost and damaged parcels

Claims for lost parcels must be filed with ParcelNord within 30 days of the expected
delivery date. ParcelNord compensates the invoice value up to €1,000 per parcel.

## Service credits

When the monthly on-time rate falls below 94%, ParcelNord credits 5% of that month's
invoice.
"""

CARRIER_SLA = Document(
    document_id="carrier-sla-parcelnord",
    title="ParcelNord service level agreement 2026",
    collection="support",
    source_system="northstar-sharepoint",
    path="Logistics/Carrier SLAs/ParcelNord SLA 2026.docx",
    uri="https://northstar.sharepoint.example/sites/logistics/Carrier%20SLAs/ParcelNord%20SLA%202026.docx",
    backend="sharepoint-graph",
    producer="support",
    weight=2,
    imported=False,  # SharePoint was never connected to the vault's import job
    revisions=(
        Revision(
            "r3",
            "01HZP7Q2:3.0",
            "2026-01-08T12:00:00Z",
            _CARRIER_V3,
            # The support index started crawling the logistics site in June.
            indexed_at="2026-06-01T02:00:00Z",
        ),
    ),
    questions={
        "Delivery commitments": ("How reliable is ParcelNord delivery?",),
        "Lost and damaged parcels": (
            "How long do we have to file a lost-parcel claim with the carrier?",
            "How much does ParcelNord pay for a lost parcel?",
        ),
        "Service credits": ("What happens if ParcelNord is late too often?",),
    },
)

# --------------------------------------------------------------------------------------
# ops collection (runbooks in northstar-gitlab, handbook in Confluence space OPS)
# --------------------------------------------------------------------------------------

_RESTART_V1 = """# Restarting services

## Before you start

Check the service dashboard in Grafana and note the current error rate. Announce the
restart in #ops-changes with the change ticket number.

## Restarting a service

Restart a service with `systemctl restart <service>` on each node, one node at a time.
Wait until the health check is green before moving to the next node.

```sh
sudo systemctl restart payments-api
# wait for the health check before the next node
curl -fsS http://localhost:8080/healthz
```

## Payments service

Do not restart the payments service in production during settlement (01:00–03:00 UTC)
without approval from the on-call lead.

Outside the settlement window, restart the payments service like any other service.
Restarting it in staging is always allowed.

## After the restart

Confirm that the error rate is back to the baseline you noted, then close the change
ticket.
"""

RESTART_RUNBOOK = Document(
    document_id="runbook-restart-services",
    title="Restarting services",
    collection="ops",
    source_system="northstar-gitlab",
    path="ops/runbooks/restart-services.md",
    uri="https://git.northstar.example/ops/runbooks/-/blob/main/restart-services.md",
    backend="gitlab-mirror",
    producer="ops",
    weight=4,
    revisions=(
        Revision(
            "r1",
            "9c41e07a2b6f83d15e0c4a7b92f1d3c8e65a0b17",
            "2026-01-12T16:20:00Z",
            _RESTART_V1,
            author="d.kowalski",
        ),
        Revision(
            "r2",
            "e2a7c5f09134b8d6a0f3c91e7d2b45a8c06f1e93",
            "2026-03-09T11:05:00Z",
            _RESTART_V1
            + """
## Change log

2026-03-09: link to the payments settlement calendar added to the on-call handbook.
""",
            author="d.kowalski",
        ),
    ),
    questions={
        "Before you start": ("What do I check before restarting a service?",),
        "Restarting a service": (
            "How do I restart a service safely?",
            "Can I restart all nodes of search-api at once?",
        ),
        "Payments service": (
            "Can I restart payments-api in prod right now?",
            "Are there restrictions on restarting the payments service?",
            "Is it OK to restart payments in staging?",
        ),
        "After the restart": ("What do I do after a restart?",),
        "Change log": ("What changed in the restart runbook?",),
    },
)

_ONCALL_V1 = """# On-call handbook

## Rotation

Each on-call engineer covers one week, Monday 09:00 to Monday 09:00 CET. Swaps must be
recorded in PagerDuty before the shift starts.

## Paging and response times

Acknowledge a page within 5 minutes for SEV1 and within 15 minutes for SEV2. If you cannot
acknowledge, the page escalates to the secondary after 10 minutes.

## Escalation

Escalate to the on-call lead for anything touching payments, customer data or more than
one region. The on-call lead can approve emergency changes outside change windows.

## On-call allowance

Engineers receive €250 per week on call, plus time off in lieu for pages handled between
22:00 and 07:00.
"""

ONCALL_HANDBOOK = Document(
    document_id="oncall-handbook",
    title="On-call handbook",
    collection="ops",
    source_system="northstar-confluence",
    path="OPS/30110/On-call+handbook",
    uri="https://wiki.northstar.example/spaces/OPS/pages/30110",
    backend="confluence-export-s3",
    producer="ops",
    weight=3,
    revisions=(
        Revision("r1", "30110.v18", "2025-10-20T09:00:00Z", _ONCALL_V1, author="a.lindgren"),
        Revision(
            "r2",
            "30110.v19",
            "2026-02-16T10:15:00Z",
            _ONCALL_V1
            + """
## Handover

At the end of a shift, write a handover note in #ops-oncall listing open incidents,
silenced alerts and pending changes.
""",
            author="a.lindgren",
            comment="Add handover section",
        ),
    ),
    questions={
        "Rotation": ("How do I swap an on-call shift?", "When does the on-call week start?"),
        "Paging and response times": (
            "How fast do I need to ack a SEV2 page?",
            "What happens if I miss a page?",
        ),
        "Escalation": (
            "Who can approve an emergency change at night?",
            "When should I escalate to the on-call lead?",
        ),
        "On-call allowance": ("How much is the on-call allowance?",),
        "Handover": ("What goes into an on-call handover?",),
    },
)

_INCIDENT_V1 = """# Incident response

## Severity levels

SEV1: customers cannot order or pay, or customer data is exposed. SEV2: a major feature is
degraded for many customers. SEV3: everything else that needs a fix this week.

## Declaring an incident

Anyone can declare an incident with /incident in Slack. The person who declares it is the
incident commander until they hand over.

## Communication

For SEV1 and SEV2, post an update in #incidents every 30 minutes and update the status
page within 15 minutes of declaring.

## Post-incident review

Every SEV1 and SEV2 gets a blameless review within five business days, with action items
tracked in the OPS project.
"""

INCIDENT_RESPONSE = Document(
    document_id="runbook-incident-response",
    title="Incident response",
    collection="ops",
    source_system="northstar-gitlab",
    path="ops/runbooks/incident-response.md",
    uri="https://git.northstar.example/ops/runbooks/-/blob/main/incident-response.md",
    backend="gitlab-mirror",
    producer="ops",
    weight=2,
    revisions=(
        Revision(
            "r1",
            "41b0d9e3c7a2f5186e4d0b9a3c2e7f1d8a5b6c04",
            "2025-11-04T14:30:00Z",
            _INCIDENT_V1,
            author="a.lindgren",
        ),
    ),
    questions={
        "Severity levels": ("Is a broken checkout a SEV1?", "What counts as a SEV2?"),
        "Declaring an incident": ("How do I declare an incident?",),
        "Communication": ("How often do I post incident updates?",),
        "Post-incident review": ("When is the post-incident review due?",),
    },
)

# Pasted terminal output, exactly as an engineer saved it: ANSI colour codes, a
# clear-screen sequence and an OSC 52 clipboard write.  Rendering must neutralise them.
_SHELL_NOTES_V1 = """# Log triage notes

## Reading payments-api logs

Use `kubectl logs deploy/payments-api -n payments --since=1h | grep -i settlement` to see
settlement activity.

## Example output

Pasted from a terminal during the 2026-02-11 drill:
\x1b[2J\x1b[31mERROR\x1b[0m settlement batch already open
\x1b]52;c;SGVsbG8=\x07 retrying in 30s

## When to page

Page the on-call lead if the same settlement error repeats for more than ten minutes.
"""

SHELL_NOTES = Document(
    document_id="ops-log-triage-notes",
    title="Log triage notes",
    collection="ops",
    source_system="northstar-gitlab",
    path="ops/notes/log-triage.md",
    uri="https://git.northstar.example/ops/notes/-/blob/main/log-triage.md",
    backend="gitlab-mirror",
    producer="ops",
    weight=0,  # cited only by the hostile-text answer
    revisions=(
        Revision(
            "r1",
            "7d3f1a0c5e9b2486f0a1c3e5d7b9f2a4c6e8d0b1",
            "2026-02-11T03:10:00Z",
            _SHELL_NOTES_V1,
            author="d.kowalski",
        ),
    ),
    questions={"Example output": ("What does 'settlement batch already open' mean?",)},
)

# --------------------------------------------------------------------------------------
# hr collection
# --------------------------------------------------------------------------------------

_TRAVEL_V1 = """# Travel allowance

## Daily allowance

Employees travelling for work receive a daily allowance of €40 for meals and incidentals.
Travel days count as full days when the journey starts before 12:00.

## Accommodation

Book hotels through the Northstar travel portal. The nightly limit is €140 in most cities
and €190 in London, Paris and Amsterdam.

## Claiming

Submit receipts in the expenses tool within 30 days of returning. Claims submitted later
need approval from your manager's manager.
"""

_TRAVEL_V2 = _TRAVEL_V1.replace("daily allowance of €40", "daily allowance of €45").replace(
    "€140 in most cities", "€150 in most cities"
)

TRAVEL = Document(
    document_id="travel-allowance",
    title="Travel allowance",
    collection="hr",
    source_system="northstar-confluence",
    path="HR/22010/Travel+allowance",
    uri="https://wiki.northstar.example/spaces/HR/pages/22010",
    backend="confluence-export-s3",
    producer="ops",
    weight=3,
    revisions=(
        Revision("r1", "22010.v6", "2025-06-02T08:00:00Z", _TRAVEL_V1, author="hr.policy"),
        Revision(
            "r2",
            "22010.v7",
            "2026-01-15T08:00:00Z",
            _TRAVEL_V2,
            author="hr.policy",
            comment="2026 rates",
        ),
    ),
    # The page was retired when travel rules moved into the expenses policy.
    retired_at="2026-07-01T00:00:00Z",
    purges=(
        Purge(
            "r1",
            "RET-6M-SUPERSEDED",
            "Superseded HR policy text: retained six months after the superseding revision",
            "HR records management (m.lindqvist)",
            "2026-07-20T09:00:00Z",
        ),
        Purge(
            "r2",
            "RET-90D-RETIRED",
            "Retired HR policy page: text retained 90 days after retirement on 2026-07-01",
            "HR records management (m.lindqvist)",
            "2026-10-05T09:00:00Z",
        ),
    ),
    questions={
        "Daily allowance": (
            "What's the daily allowance for a work trip?",
            "Do I get the full per diem on a travel day if I leave at 10:00?",
        ),
        "Accommodation": (
            "What's the hotel limit in Paris?",
            "How much can I spend on a hotel in Hamburg?",
        ),
        "Claiming": ("How long do I have to submit travel receipts?",),
    },
)

_EXPENSES_V1 = """# Expenses policy

## Scope

This policy covers expenses employees pay personally on Northstar business. Travel is
covered by the travel allowance policy.

## Client meals

Client meals are reimbursed up to €60 per person, including drinks and tip. Name the
guests and the business purpose on the claim.

## Receipts

Every claim needs an itemised receipt. Card slips alone are not accepted.

## Approvals

Claims up to €500 are approved by your manager. Larger claims also need approval from
Finance.
"""

_EXPENSES_V2 = (
    _EXPENSES_V1
    + """
## Travel

Since 1 July 2026 travel is part of this policy. The daily allowance is €45 for meals and
incidentals; book hotels through the Northstar travel portal within the nightly limit
shown there.
"""
)

_EXPENSES_V3 = _EXPENSES_V2.replace("up to €60 per person", "up to €50 per person")

EXPENSES = Document(
    document_id="expenses-policy",
    title="Expenses policy",
    collection="hr",
    source_system="northstar-confluence",
    path="HR/22040/Expenses+policy",
    uri="https://wiki.northstar.example/spaces/HR/pages/22040",
    backend="confluence-export-s3",
    producer="ops",
    weight=3,
    revisions=(
        Revision("r1", "22040.v11", "2025-09-01T08:00:00Z", _EXPENSES_V1, author="hr.policy"),
        Revision(
            "r2",
            "22040.v12",
            "2026-07-01T08:00:00Z",
            _EXPENSES_V2,
            author="hr.policy",
            comment="Travel moved into the expenses policy",
        ),
        Revision(
            "r3",
            "22040.v13",
            "2026-09-15T08:00:00Z",
            _EXPENSES_V3,
            author="hr.policy",
            comment="Client meal limit lowered to €50",
        ),
    ),
    questions={
        "Scope": ("Does the expenses policy cover travel?",),
        "Client meals": (
            "What's the limit for a client dinner?",
            "Can I expense a client lunch for €58 per person?",
        ),
        "Receipts": ("Is a card slip enough as a receipt?",),
        "Approvals": ("Who approves a €700 expense claim?",),
        "Travel": ("What's the daily allowance for a work trip?", "How do I book a hotel?"),
    },
)

# --------------------------------------------------------------------------------------
# legal collection (restricted: northstar-sharepoint, Legal site)
# --------------------------------------------------------------------------------------

_BRIGHTWATER_V1 = """# Brightwater complaint: settlement position (DRAFT, privileged)

## Background

The consumer association Brightwater filed a complaint with the regulator on 22 April
2026, alleging that the fourteen-day refund window was introduced without adequate notice
to customers with open orders.

## Proposed position

Pending the regulator's review, Northstar will honour refund requests received within
thirty days of delivery for orders placed before 4 May 2026.

Agents must not mention the complaint or this position to customers. Approve such requests
and tag the ticket BW-2026.

## Next steps

Outside counsel (Hale & Ferris LLP) to confirm the position by 5 June 2026.
"""

BRIGHTWATER = Document(
    document_id="legal-brightwater-draft",
    title="Brightwater complaint: settlement position (DRAFT)",
    collection="legal",
    source_system="northstar-sharepoint",
    path="Legal/Matters/2026-014 Brightwater/Settlement position DRAFT.docx",
    uri="https://northstar.sharepoint.example/sites/legal/Matters/2026-014/Settlement%20position%20DRAFT.docx",
    backend="sharepoint-graph",
    producer="ops",
    weight=1,
    revisions=(
        Revision("r1", "01J0BW14:1.0", "2026-05-11T17:40:00Z", _BRIGHTWATER_V1, author="a.okafor"),
        Revision(
            "r2",
            "01J0BW14:2.0",
            "2026-05-25T10:00:00Z",
            _BRIGHTWATER_V1
            + """
## Open questions

Whether orders delivered to the United Kingdom are in scope is still open.
""",
            author="a.okafor",
        ),
    ),
    questions={
        "Background": ("What is the Brightwater complaint about?",),
        "Proposed position": ("What's our interim position on Brightwater refunds?",),
        "Next steps": ("When does outside counsel confirm the Brightwater position?",),
        "Open questions": ("Are UK orders in scope for the Brightwater position?",),
    },
)

_LEGAL_HOLD_V1 = """# Legal hold procedure

## When a hold applies

A legal hold applies from the moment Legal notifies you in writing that a matter is
reasonably anticipated. It overrides every retention schedule, including automated purges.

## What to preserve

Preserve email, chat messages, tickets, assistant transcripts and trace records that
mention the matter or the people named in the notice.

## Releasing a hold

Only the General Counsel can release a hold. Retention schedules resume from the release
date, not from the original creation date.
"""

LEGAL_HOLD = Document(
    document_id="legal-hold-procedure",
    title="Legal hold procedure",
    collection="legal",
    source_system="northstar-sharepoint",
    path="Legal/Procedures/Legal hold procedure.docx",
    uri="https://northstar.sharepoint.example/sites/legal/Procedures/Legal%20hold%20procedure.docx",
    backend="sharepoint-graph",
    producer="ops",
    weight=1,
    revisions=(Revision("r1", "01HX7LH0:4.0", "2025-08-18T09:00:00Z", _LEGAL_HOLD_V1, author="a.okafor"),),
    questions={
        "When a hold applies": ("Does a legal hold stop the automatic purge of chat logs?",),
        "What to preserve": ("Do assistant transcripts fall under the Brightwater hold?",),
        "Releasing a hold": ("Who can lift a legal hold?",),
    },
)

DOCUMENTS: tuple[Document, ...] = (
    RETURNS_POLICY,
    RETURNS_AND_REFUNDS,
    RETURNS_UK,
    SHIPPING,
    SUPPORT_FAQ,
    WARRANTY,
    PRIVACY,
    GIFT_CARDS,
    CARRIER_SLA,
    RESTART_RUNBOOK,
    ONCALL_HANDBOOK,
    INCIDENT_RESPONSE,
    SHELL_NOTES,
    TRAVEL,
    EXPENSES,
    BRIGHTWATER,
    LEGAL_HOLD,
)
