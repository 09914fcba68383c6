"""verify-dataset never imports pandas, in the verifying process nor in the fork server
and its workers: pyarrow imports it on a process's first `pa.array` (to ask whether the
values are a pandas object), about 0.2 CPU-s each (issue 24).  Nor do the fork server
and its workers import DuckDB or the vault, which they never use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.dataset.conftest import Exported

ROOT = Path(__file__).resolve().parents[2]

#: run by every interpreter of the test's process tree (the fork server is one): says
#: so on the shared stderr whenever pandas is imported
TELL = """\
import sys


class Tell:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            print("pandas imported", file=sys.stderr, flush=True)
        # the fork server runs `python -c ...`: it and its workers check rows, they
        # never open a vault nor a DuckDB connection
        if name in ("duckdb", "store.vault") and sys.argv[:1] == ["-c"]:
            print(f"{name} imported by a worker", file=sys.stderr, flush=True)
        return None


sys.meta_path.insert(0, Tell())
"""

SCRIPT = """\
import sys

if __name__ == "__main__":
    from pathlib import Path
    from tracer.engine.dataset_pool import PoolChecks
    from tracer.engine.dataset_verify import verify_dataset

    # two workers on the small sample export (one process would check it unaided)
    with PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        report = verify_dataset(Path({dataset!r}), "duckdb", checks)
    print(len(report.findings))
"""


def test_no_pandas_in_the_verifying_process_nor_its_workers(exported: Exported, tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(TELL, encoding="utf-8")
    script = tmp_path / "no_pandas.py"
    script.write_text(SCRIPT.format(dataset=str(exported.dataset)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=600, env=env
    )
    assert out.returncode == 0, out.stderr
    assert "pandas imported" not in out.stderr
    assert "imported by a worker" not in out.stderr
    assert int(out.stdout.strip()) == len(exported.verify_json["findings"])
