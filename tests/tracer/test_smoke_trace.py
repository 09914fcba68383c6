from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.trace import Tracer

A = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"
C = A.replace("thirty", "fourteen")


def test_stale_shows_old_and_current_apart(case: Case) -> None:
    ra = revision("returns", "A", A, "2026-01-05T00:00:00Z")
    rc = revision("returns", "C", C, "2026-05-05T00:00:00Z")
    draft = manifest("ans-1", "Refunds are accepted for thirty days.", [passage(ra, "thirty days")])
    report = case.ingest(ra, rc, signed(case, draft))
    assert report.ok, report.to_json()
    s = case.session("ines")
    t = Tracer(s).trace("ans-1")
    p = t.passages[0]
    assert p.currency.state == "stale"
    assert p.retrieved.text is not None and "thirty" in p.retrieved.text
    assert p.currency.current_excerpt is not None and "fourteen" in p.currency.current_excerpt
    s.close()
