"""The case pack's HTML cover page in a real headless browser (Debian's chromium), when
one is installed: it renders (a real screenshot, not a blank or error page), and the
page the browser built says what a lawyer reads first."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.case.packs import export_case, work_case
from tests.case.world import World

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)"
)
def test_case_cover_page_renders_in_headless_chromium(world: World, tmp_path: Path) -> None:
    work_case(world)
    pack = export_case(world, tmp_path / "pack")
    html = tmp_path / "report.html"
    shutil.copyfile(pack / "report.html", html)
    png = tmp_path / "cover.png"
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    subprocess.run(
        [CHROMIUM, *FLAGS, profile, f"--screenshot={png}", "--window-size=1280,1000", html.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 1000)
    assert len(data) > 40_000  # a blank or error page compresses to a few kilobytes
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, profile, "--dump-dom", html.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
        text=True,
    ).stdout
    cover = dom.split("</header>", 1)[0]
    assert "Case INC-7: Payments restart" in cover
    assert "&lt;script&gt;" in cover and "<script>" not in dom
    assert "ines" in cover and "Exported and signed by" in cover and "what the review relies on" in cover
    assert "Vault-wide verification at export" in cover
