"""One instant, one string: every writer of times spells them as reports echo them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from tracer.engine.times import spell_utc, utc
from tracer.importers.otlp import span_time
from tracer.producer.model import timestamp

MOMENT = datetime(2026, 2, 1, 10, 0, 0, 500000, tzinfo=UTC)


def test_the_producer_the_importer_and_reports_write_one_spelling() -> None:
    shifted = MOMENT.astimezone(timezone(timedelta(hours=2)))
    ns = int(MOMENT.timestamp()) * 1_000_000_000 + 500_000_000
    spellings = {
        spell_utc(shifted),
        timestamp(shifted, "generated_at"),
        span_time(ns),
        utc("2026-02-01T12:00:00.500000+02:00"),
    }
    assert spellings == {"2026-02-01T10:00:00.5Z"}
