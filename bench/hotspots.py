"""Summarize a py-spy collapsed-stack profile: inclusive and self shares per function.

    py-spy record --format raw -o prof.txt -- .venv/bin/python bench/verify.py --child ...
    .venv/bin/python bench/hotspots.py prof.txt [--top 25] [--under FUNC]

`--under FUNC` restricts the shares to samples whose stack contains FUNC (e.g. `verify`),
so set-up and the floor measurement in the same process do not dilute the figures.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>[^ ]+) \((?P<file>[^:]+)(?::\d+)?\)$")


def _name(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    file = m.group("file")
    for marker in ("/main/", "site-packages/", "/lib/python3.11/"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{m.group('func')} ({file})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile", type=Path)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--under", default="")
    args = ap.parse_args()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in args.profile.read_text().splitlines():
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = [_name(f) for f in stack.split(";")]
        if args.under and not any(f.startswith(args.under + " ") for f in frames):
            continue
        total += n
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    print(f"samples: {total}")
    print("\ninclusive (share of samples whose stack contains the function):")
    for f, n in inclusive.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {f}")
    print("\nself (share of samples where the function is on top):")
    for f, n in own.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {f}")


if __name__ == "__main__":
    main()
