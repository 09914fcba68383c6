"""report.html in a real headless browser (Debian's chromium), when one is installed."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)"
)
def test_html_report_renders_in_headless_chromium(shared_pack: Path, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    shutil.copyfile(shared_pack / "report.html", html)
    png = tmp_path / "report.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={png}",
            "--window-size=1280,2000",
            html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2000)
    assert len(data) > 50_000  # a blank or error page compresses to a few kilobytes
