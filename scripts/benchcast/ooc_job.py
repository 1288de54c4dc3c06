"""One out-of-core job of the workflow: ``python -m benchcast.ooc_job --job JSON``.

On the ensured device, one mode and one repeat: every program of the source at every working set
(:func:`benchcast.ooc.run_ooc`). Modes ``swap`` and ``mmap`` run inside a fresh memory cgroup at the
source's ``memory_limit``; ``swap`` also with a swap file on the device, on for the job only. Swap
this workflow did not make is refused (``existing_swap: refuse``, the default: the pages could go
there instead of to the device under test) or recorded as provenance (``warn``). Raw outputs and
records are written under temporary names and renamed when complete. A shell entry, so that editing
Python never re-measures.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import BenchcastError, protect


def run_job(job: dict) -> None:
    from . import devices, host, ooc, quality, records
    from .devices import swap
    from .units import parse_size

    src = job["source"]
    mode = job["mode"]
    for out in (job["raw"], job["records"]):
        protect.clear_partial(out)
    # the in-memory baseline runs without a limit
    limit = parse_size(src["memory_limit"], what="memory_limit") if mode != "memory" else None
    sizes = [parse_size(s, what="working_sets") for s in src["working_sets"]]
    swap_size = None
    if mode == "swap":
        swap_size = parse_size(src["swap_size"], what="swap_size") if src.get("swap_size") else 2 * max(sizes)
    state_now = devices.base.read_state(job["state"]) if Path(job["state"]).exists() else {}
    other = swap.others(own=[p for p in [(state_now.get("created") or {}).get("swapfile")] if p])
    if other and mode != "memory" and src["existing_swap"] == "refuse":
        names = ", ".join(s["filename"] for s in other)
        raise BenchcastError(f"swap not made by benchcast is active ({names}): pages could go there instead "
                             f"of to the device (swapoff it, or set existing_swap: warn)")
    raw_part = protect.atomic_path(job["raw"])
    with host.cpu_latency(src.get("cpu_latency_us")), \
            devices.on_device(job["device"], job["spec"], job["state"], enter_cgroup=True,
                              memory_limit=limit, swap_size=swap_size,
                              swap_priority=src["swap_priority"], enter_memory=False,
                              shield=quality.guard()["shield"]) as state, \
            quality.sample(job["records"], state["created"].get("cpucg"),
                           {"benchmark": "ooc", "device": job["device"], "mode": mode, "run": int(job["repeat"])}):
        recs = ooc.run_ooc(
            src["programs"], sizes, mode, binaries=job["binaries"], device_dir=devices.target(state),
            out_dir=raw_part.resolve(), reps=src["passes"], run=int(job["repeat"]), study=job["study"],
            device=job["device"], cgroup=state["created"].get("memcg"), timeout=src.get("timeout"),
            provenance={"memory_limit": limit or 0, "swap_size": swap_size or 0,
                        "other_swap": ",".join(s["filename"] for s in other)},
            kill_retries=ooc.KILL_RETRIES, kill_pause=ooc.KILL_PAUSE_S)
    records.write_job(recs, job, f"ooc:{job['source_name']}", devices.provenance(state))


def main(argv=None) -> int:
    from .cli import job_main

    return job_main("python -m benchcast.ooc_job", run_job,
                    lambda j: f"ooc: device {j['device']}, mode {j['mode']}, repeat {j['repeat']}", argv)


if __name__ == "__main__":
    sys.exit(main())
