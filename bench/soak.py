"""Soak: signed 100-event batches at half of the peak rate for a while (5 minutes by
default), counting every answer that is not a 200 and sampling the server's memory.

First a short burst at 16 connections finds the peak; then requests go out on a fixed
schedule at half of it (built and signed as they go, so the run needs no stored stream).
Every few seconds the resident set (VmRSS) and the anonymous memory (RssAnon) of each
process of the server's process group are read from /proc/<pid>/status and summed. Target:
0 errors, memory flat after warm-up (the first fifth of the run).

    .venv/bin/python bench/soak.py [--soak-seconds 300] [--database-url URL] [--api-workers N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    _LENGTH,
    add_target_arguments,
    api_workers,
    emit,
    fire_raw,
    prepared,
    questwall,
    served_process,
    target_label,
)
from bench.ingest import EVENTS_PER_BATCH, make_batches


def group_memory_kb(pgid: int) -> tuple[int, int]:
    """(VmRSS, RssAnon) in kB, summed over the live processes of the group `pgid`."""
    rss = anon = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != pgid:
                continue
            status = Path(f"/proc/{entry}/status").read_text()
        except (OSError, ProcessLookupError):
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss += int(line.split()[1])
            elif line.startswith("RssAnon:"):
                anon += int(line.split()[1])
    return rss, anon


async def paced(
    port: int, game: dict[str, str], rate: float, seconds: float, pgid: int
) -> tuple[int, dict[int, int], int, list[tuple[float, int, int]]]:
    """Requests at `rate` per second for `seconds`: (sent, statuses, errors, memory samples)."""
    statuses: dict[int, int] = {}
    errors = 0
    samples: list[tuple[float, int, int]] = []
    t0 = time.monotonic()
    total = int(rate * seconds)
    next_index = 0

    async def worker() -> None:
        nonlocal next_index, errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while next_index < total:
                k = next_index
                next_index += 1
                delay = t0 + k / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                writer.write(make_batches(game, 1)[0])
                head = await reader.readuntil(b"\r\n\r\n")
                length = _LENGTH.search(head)
                if length:
                    await reader.readexactly(int(length.group(1)))
                status = int(head[9:12])
                statuses[status] = statuses.get(status, 0) + 1
        except (OSError, asyncio.IncompleteReadError):
            errors += 1
        finally:
            writer.close()

    async def sampler() -> None:
        every = max(1.0, seconds / 30)
        while time.monotonic() - t0 < seconds:
            rss, anon = group_memory_kb(pgid)
            samples.append((time.monotonic() - t0, rss, anon))
            await asyncio.sleep(every)

    await asyncio.gather(sampler(), *(worker() for _ in range(8)))
    rss, anon = group_memory_kb(pgid)
    samples.append((time.monotonic() - t0, rss, anon))
    return total, statuses, errors, samples


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--soak-seconds", type=float, default=300)
    parser.add_argument("--peak-batches", type=int, default=400)
    add_target_arguments(parser)
    args = parser.parse_args()
    with prepared(args.database_url) as (data, env):
        game = json.loads(questwall(env, "game", "create", "Soak"))
        with served_process(env, data, api_workers(args)) as (port, server):
            burst = make_batches(game, 20 + args.peak_batches)
            fire_raw(port, burst[:20], 4)
            peak = fire_raw(port, burst[20:], 16)
            peak_rate = peak.requests / peak.seconds
            sent, statuses, errors, samples = asyncio.run(
                paced(port, game, peak_rate / 2, args.soak_seconds, server.pid)
            )
    errors += sum(n for status, n in statuses.items() if status != 200)
    warm = [s for s in samples if s[0] >= args.soak_seconds / 5] or samples
    rss_growth = (warm[-1][1] - warm[0][1]) / 1024
    anon_growth = (warm[-1][2] - warm[0][2]) / 1024
    print(f"server: {target_label(args)}")
    print(f"peak: {peak.statuses}, {peak_rate * EVENTS_PER_BATCH:,.0f} events/s")
    print(
        f"soak at half of peak ({peak_rate / 2:,.0f} batches/s) for {args.soak_seconds:.0f} s: "
        f"{sent} batches, statuses {statuses}, errors {errors}"
    )
    for at, rss, anon in samples:
        print(f"  {at:6.1f} s  RSS {rss / 1024:7.1f} MiB  anonymous {anon / 1024:7.1f} MiB")
    print(f"after warm-up: RSS {rss_growth:+.1f} MiB, anonymous {anon_growth:+.1f} MiB")
    emit(
        "soak",
        {
            "peak_rate": peak_rate * EVENTS_PER_BATCH,
            "sent": sent,
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "errors": errors,
            "rss_mib": [round(s[1] / 1024, 1) for s in samples],
            "anon_mib": [round(s[2] / 1024, 1) for s in samples],
            "rss_growth_mib": rss_growth,
            "anon_growth_mib": anon_growth,
        },
    )


if __name__ == "__main__":
    main()
