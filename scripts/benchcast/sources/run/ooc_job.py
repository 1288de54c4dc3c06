"""One out-of-core job of the workflow: ``python -m benchcast.ooc_job --job JSON``.

On the ensured device, one mode and one repeat: every program of the source at every working set
(:func:`benchcast.sources.run.ooc.run_ooc`). Modes ``swap`` and ``mmap`` run inside a fresh memory cgroup at the
source's ``memory_limit``; ``swap`` also with a swap file on the device, on for the job only; their
programs stop at the edges of each phase while the kernel's counters of paging and of the device
are read (:func:`counters`: faults, swap-ins and -outs, the device's requests per pass). Swap
this workflow did not make is refused (``existing_swap: refuse``, the default: the pages could go
there instead of to the device under test) or recorded as provenance (``warn``). Raw outputs and
records are written under temporary names and renamed when complete. A shell entry, so that editing
Python never re-measures.
"""

from __future__ import annotations

import sys

from ... import BenchcastError
from ...core import protect


def run_job(job: dict) -> None:
    from ... import devices, records
    from . import ooc, quality
    from ...config import settings
    from ...devices import presence, swap

    s = settings.ooc(job["source"], job["source_name"])  # the validated config's source
    mode = job["mode"]
    for out in (job["raw"], job["records"]):
        protect.clear_partial(out)
    # the in-memory baseline runs without a limit
    limit = s.memory_limit if mode != "memory" else None
    swap_size = None
    if mode == "swap":
        swap_size = s.swap_size or 2 * max(s.working_sets)
    raw_part = protect.atomic_path(job["raw"])
    with devices.on_device(job["device"], job["spec"], job["state"], enter_cgroup=True,
                           memory_limit=limit, swap_file=(swap_size, s.swap_priority) if swap_size else None,
                           enter_memory=False, shield=quality.guard()["shield"]) as state, \
            quality.sample(job["records"], state["created"].get("cpucg"),
                           {"benchmark": "ooc", "device": job["device"], "mode": mode, "run": int(job["repeat"])},
                           state):
        # looked at under the machine's benchmark lock: another run's job has turned its swap off by
        # now (a job waiting for the lock saw it on)
        other = swap.others(own=[p for p in [state["created"].get("swapfile")] if p])
        if other and mode != "memory" and s.existing_swap == "refuse":
            names = ", ".join(o["filename"] for o in other)
            raise BenchcastError(f"swap not made by benchcast is active ({names}): pages could go there instead "
                                 f"of to the device (swapoff it, or set existing_swap: warn)")
        cg = state["created"].get("memcg")
        at = ooc.Place(
            binaries=job["binaries"], device_dir=devices.target(state), out_dir=raw_part.resolve(),
            study=job["study"], device=job["device"], run=int(job["repeat"]), cgroup=cg,
            timeout=s.timeout, provenance={"memory_limit": limit or 0, "swap_size": swap_size or 0,
                                           "other_swap": ",".join(o["filename"] for o in other)},
            kill_retries=ooc.KILL_RETRIES, kill_pause=ooc.KILL_PAUSE_S,
            counters=(lambda: counters(state, cg)) if cg else None)
        recs = ooc.run_ooc(list(s.programs), list(s.working_sets), mode, s.passes, at)
        presence.check(state)  # measured on the device it provisioned, not on what was left of it
    records.write_job(recs, job, f"ooc:{job['source_name']}", devices.provenance(state))


def counters(state: dict, cgroup) -> dict:
    """What a paging run's marks read (:class:`benchcast.sources.run.ooc.Place`): the device's requests, the
    program's memory cgroup and the machine's paging counters (:mod:`benchcast.sources.run.paging`)."""
    from ... import devices
    from . import paging
    from ...devices import memlimit

    return {"device": devices.io_counters(state), "memcg": memlimit.stat(cgroup), "vmstat": paging.vmstat()}


def main(argv=None) -> int:
    from . import quality
    from ...core.cli import job_main

    quality.start_look()  # the job's start-up is its first look at the machine

    return job_main("python -m benchcast.ooc_job", run_job,
                    lambda j: f"ooc: device {j['device']}, mode {j['mode']}, repeat {j['repeat']}", argv)


if __name__ == "__main__":
    sys.exit(main())
