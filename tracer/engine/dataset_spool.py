"""The log's slices written once to a temporary Arrow IPC file that the workers map.

Handing a slice to a worker through the pool's pipe pickles its bytes in the verifying
process, copies them through the pipe and unpickles them in the worker: three copies of
the whole log, two of them in the process whose work decides when the run ends.  Here
each slice is written once, as an Arrow IPC stream of its own at an offset of one file,
and a task carries only the file's path and the offset: the worker maps the file and
reads its slice where it lies.  The file holds what the workers were sent before (log
rows: no text, no key), in a directory only this user may open, and goes when the pool
is done with it.

The workers trust the slice as they trusted the pipe: both are this user's, and whoever
can write either can as well write the process's memory or tracer's own code.  The file
is not an input of the export (someone who can write the export cannot write it), so
the leaves the verifying process hashed from its own read are not hashed again here.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pyarrow as pa

__all__ = ["Spool", "read_spooled"]


class Spool:
    """Slices of one verification's log, appended to a temporary file as they are handed out."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self._sink: pa.NativeFile | None = None

    @property
    def path(self) -> str:
        if self._dir is None:
            raise ValueError("nothing spooled yet")
        return os.path.join(self._dir, "log.arrows")

    def put(self, part: pa.Table) -> int:
        """`part` written as an Arrow IPC stream at the end of the file; its offset (the
        bytes are in the file, for another process to read, when this returns)."""
        if self._sink is None:
            self._dir = tempfile.mkdtemp(prefix="tracer-verify-dataset-")
            self._sink = pa.OSFile(self.path, "wb")
        start = int(self._sink.tell())
        with pa.ipc.new_stream(self._sink, part.schema) as writer:
            writer.write_table(part)
        return start

    def close(self) -> None:
        """The file removed: call once no worker reads it any more."""
        sink, where = self._sink, self._dir
        self._sink = self._dir = None
        if sink is not None:
            sink.close()
        if where is not None:
            shutil.rmtree(where, ignore_errors=True)


def read_spooled(path: str, offset: int) -> pa.Table:
    """The slice `Spool.put` wrote at `offset`, read in place from the mapped file (its
    buffers keep the mapping alive once the file is closed)."""
    with pa.memory_map(path) as source:
        source.seek(offset)
        return pa.ipc.open_stream(source).read_all()
