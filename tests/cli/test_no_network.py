"""Air-gapped: every CLI command works with socket creation made to fail.

The commands run in child processes with a `sitecustomize` on PYTHONPATH that replaces
`socket.socket`, `socket.create_connection`, `socket.getaddrinfo` and `socket.socketpair`
with functions that raise, before any tracer code is imported.  The first runs as the
real `tracer` console script; the rest run one after another in one guarded child (the
console script's own entry point, `tracer.cli.main:main`, fed over a pipe), so the
guard holds for every command without paying an interpreter and the engine's imports
for each.  Processes those commands start (verify's workers) inherit the guard.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import PASSPHRASE, Result, World, draft, revision_input

GUARD = """
import socket

class NetworkDisabled(OSError):
    pass

def _refuse(*args, **kwargs):
    raise NetworkDisabled("network disabled by tests/cli/test_no_network.py")

class _NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        _refuse()

socket.socket = _NoSocket
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
socket.socketpair = _refuse
socket.create_server = _refuse
"""


#: the guarded child: reads one command (a JSON list of arguments) a line, runs it through
#: the console script's entry point, answers one JSON line {code, out, err}
RUNNER = """
import io, json, os, socket, sys, traceback

answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
answers.write(json.dumps({"socket": socket.socket.__name__}) + "\\n")  # the guard is in place
answers.flush()
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        from tracer.cli.main import main

        code = main(json.loads(line))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:
        traceback.print_exc()
        code = -1
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    answers.write(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue()}) + "\\n")
    answers.flush()
"""


class Guarded:
    """One child process under the guard that runs `tracer` commands in turn."""

    def __init__(self, world: World, env: dict[str, str]) -> None:
        self._p = subprocess.Popen(
            [sys.executable, "-c", RUNNER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **world.env, **env},
            cwd=world.root,
        )
        assert self._p.stdout is not None
        hello = self._p.stdout.readline()
        assert hello and json.loads(hello) == {"socket": "_NoSocket"}, (hello, self.close())

    def run(self, *args: str | Path) -> Result:
        assert self._p.stdin is not None and self._p.stdout is not None
        self._p.stdin.write(json.dumps([str(a) for a in args]) + "\n")
        self._p.stdin.flush()
        line = self._p.stdout.readline()
        assert line, (args, "the guarded runner ended", self.close())
        answer = json.loads(line)
        return Result(answer["code"], answer["out"], answer["err"])

    def close(self) -> str:
        _, err = self._p.communicate(timeout=60)
        return err


@pytest.fixture
def guard(tmp_path: Path) -> dict[str, str]:
    d = tmp_path / "no-network"
    d.mkdir()
    (d / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    return {"PYTHONPATH": str(d)}


def test_the_guard_really_blocks_sockets(world: World, guard: dict[str, str]) -> None:
    for code in (
        "import socket; socket.create_connection(('127.0.0.1', 9))",
        "import socket; socket.socket()",
        "import socket; socket.getaddrinfo('localhost', 80)",
        "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9/')",
    ):
        p = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**world.env, **guard},
            timeout=30,
        )
        assert p.returncode != 0 and "network disabled by tests" in p.stderr, (code, p.stderr)


@pytest.fixture
def guarded(world: World, guard: dict[str, str]) -> Iterator[Guarded]:
    g = Guarded(world, {**guard, "TRACER_KEY": str(world.root / "k" / "ines.key")})
    yield g
    err = g.close()
    assert "network disabled" not in err and "Traceback" not in err, err


def test_every_command_works_without_network(world: World, guard: dict[str, str], guarded: Guarded) -> None:
    w = world
    w.keys.rename(w.root / "template-keys")  # keygen runs for real, under the guard
    keys = w.root / "k"
    ran: list[str] = []

    def tracer(*args: str | Path, code: int = 0, spawn: bool = False) -> str:
        env = {**guard, "TRACER_KEY": str(keys / "ines.key")}
        r = w.spawn(*args, env=env) if spawn else guarded.run(*args)
        assert r.code == code, (args, r)
        assert "Traceback" not in r.err and "network disabled" not in r.err, r.err
        name = str(args[0]) if args[0] not in ("keys", "investigators") else f"{args[0]} {args[1]}"
        ran.append(name)
        return r.out

    for name in ("custodian", "producer", "ines"):  # the first as the console script itself
        assert tracer("keygen", name, "--out", keys, spawn=name == "custodian").startswith("key id ")
    cust: list[str | Path] = ["--custodian-key", keys / "custodian.key"]
    vault = w.root / "vault"
    tracer("init", vault, *cust)
    tracer("keys", "add", vault, keys / "producer.pub", "--role", "producer", *cust)
    assert "producer" in tracer("keys", "list", vault)
    tracer("investigators", "grant", vault, keys / "ines.pub", "--scope", "*", *cust)
    assert "ines" in tracer("investigators", "list", vault)

    d = w.write("draft.json", draft())
    packed = w.root / "inputs" / "ans-1.json"
    tracer("pack", d, "--key", keys / "producer.key", "--out", packed)
    signed_out = json.loads(tracer("sign", d, "--key", keys / "producer.key"))
    assert base64.b64decode(signed_out["payload"]) == d.read_bytes()
    rev = w.write("rev-A.json", revision_input())
    assert "appended 2 file(s)" in tracer("ingest", vault, rev, packed, *cust)

    size = int(tracer("checkpoint", vault).splitlines()[1])
    assert len(json.loads(tracer("log", vault, "--json"))["entries"]) == size
    json.loads(tracer("proof", vault, "1", "--json"))
    json.loads(tracer("proof", vault, "--consistency", "1", str(size), "--json"))

    report = json.loads(tracer("verify", vault, "--json"))
    assert report["ok"] is True, report
    assert "ans-1" in tracer("trace", vault, "ans-1")
    tracer("revalidate", vault, "--json")
    tracer("impact", vault, "--document", "returns", "--json")
    tracer("finding", vault, "ans-1", "checked offline")
    actions = [a["action"] for a in json.loads(tracer("access", vault, "--json"))["access"]]
    assert {"unlock", "verify", "revalidate", "impact"} <= set(actions)

    answer_digest = json.loads(base64.b64decode(json.loads(packed.read_text())["envelope"]["payload"]))[
        "answer_sha256"
    ]
    tracer("purge", vault, answer_digest, "--policy", "retention", "--reason", "expired", *cust)
    producer_id = json.loads((keys / "producer.pub").read_text())["key_id"]
    tracer("keys", "revoke", vault, producer_id, *cust)
    assert json.loads(tracer("verify", vault, "--json"))["ok"] is True

    required = {
        "keygen",
        "init",
        "keys add",
        "keys list",
        "keys revoke",
        "pack",
        "sign",
        "ingest",
        "purge",
        "checkpoint",
        "log",
        "proof",
        "verify",
        "trace",
        "revalidate",
        "impact",
        "investigators grant",
        "investigators list",
        "access",
        "finding",
    }
    assert required <= set(ran)
    assert PASSPHRASE  # the passphrase came from TRACER_PASSPHRASE, never a prompt
