"""One YCSB job of the workflow: ``python -m benchcast.ycsb_job --job JSON``.

On the ensured device (inside a throttled device's cgroup, and a memory cgroup when the source sets
``memory_limit``), load once and run the workloads in
order (or reload per workload) for one engine, data size and repeat; write the records CSV. A shell
entry rather than a Snakemake script, so that editing Python code never makes Snakemake want to
re-measure (the rule's command line is all its code).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...core import protect


def run_job(job: dict) -> None:
    import pandas as pd

    from . import cpushare, quality, ycsb
    from ... import devices, records
    from ...config import settings
    from ...devices import presence

    s = settings.ycsb(job["source"], job["source_name"])  # the validated config's source
    # raw files and records go under temporary names, renamed when the run is complete: a killed
    # job leaves nothing that could pass as a result
    for out in (job["raw"], job["records"]):
        protect.clear_partial(out)
    why = stable_already(job)
    if why:  # a run beyond `repeats` that the earlier runs make unnecessary: a note, no records
        raw = protect.atomic_path(job["raw"])
        raw.mkdir(parents=True)
        (raw / "SKIPPED").write_text(why + "\n")
        records.write(pd.DataFrame(columns=records.COLUMNS), protect.atomic_path(job["records"]))
        protect.commit(job["raw"])
        protect.commit(job["records"])
        return
    raw_part = protect.atomic_path(job["raw"])
    with devices.on_device(job["device"], job["spec"], job["state"], enter_cgroup=True,
                           memory_limit=s.memory_limit, shield=quality.guard()["shield"]) as state, \
            quality.sample(job["records"], state["created"].get("cpucg"),
                           {"benchmark": "ycsb", "device": job["device"], "engine": job["engine"],
                            "data_size": int(job["size"]), "run": int(job["repeat"])}, state):
        s = _direct_io(s, job, state)
        at = ycsb.Place(device_dir=devices.target(state), jar=Path(job["jar"]).resolve(),
                        out_dir=raw_part.resolve(), study=job["study"], device=job["device"],
                        runs=(int(job["repeat"]),), io_counter=lambda: devices.io_counters(state))
        sampler = cpushare.sampled(state["created"].get("cpucg"))  # each workload's CPU share
        try:
            recs = ycsb.run_ycsb(job["engine"], int(job["size"]), s, at)
        finally:
            sampler.stop()
        presence.check(state)  # measured on the device it provisioned, not on what was left of it
        recs = cpushare.ycsb_shares(recs, sampler)
    if s.fast_load:  # a load without its syncs measures nothing of the device: raw files only
        recs = recs[recs["workload"] != "load"]
    # the memory cgroup the server and client ran in, where there was one (no column otherwise)
    limited = {"memory_limit": s.memory_limit} if s.memory_limit else {}
    records.write_job(recs, job, f"ycsb:{job['source_name']}", {**devices.provenance(state), **limited})


def _direct_io(s, job: dict, state: dict):
    """``rocksdb.directio`` where the device's O_DIRECT probe failed: on a tmpfs, whose page cache is
    the medium itself, the same reads without it (recorded as ``prop_rocksdb.directio`` false);
    elsewhere one line, as the cache the data would then also have is not the one configured."""
    if job["engine"] != "rocksdb" or not s.direct_reads or state.get("direct_ok") is not False:
        return s
    if job["spec"].get("kind") == "tmpfs":
        import dataclasses

        return dataclasses.replace(s, properties={**s.properties, "rocksdb.directio": "false"})
    from ... import BenchcastError

    raise BenchcastError(f"source {job['source_name']}: properties: rocksdb.directio: O_DIRECT does not "
                         f"work on {state.get('target')} (probed at provisioning)")


def stable_already(job: dict) -> str | None:
    """Repeat until stable: why this run is not needed (the earlier runs' records, ``previous``,
    vary by at most ``stable_cv`` percent), or None."""
    previous = job.get("previous")
    if not previous:
        return None
    if "spoil" in job:  # an extra run: needed when interference spoiled earlier runs
        from . import quality

        return quality.extra_run_not_needed(previous, job["spoil"]["thresholds"], job["spoil"]["extra"])
    from ...records import blockio
    from . import repeats
    from ... import records

    runs = []
    for path in previous:
        r = records.read(path)  # an empty one: that run was not needed
        runs.append(None if r.empty else r[(r["op"] != blockio.OP) & (r["workload"] != "load")])
    return repeats.not_needed(runs, job["stable_cv"])


def main(argv=None) -> int:
    from . import quality
    from ...core.cli import job_main

    quality.start_look()  # the job's start-up is its first look at the machine

    # the one line names the job's device, engine and size
    return job_main("python -m benchcast.ycsb_job", run_job,
                    lambda j: f"ycsb: device {j['device']}, {j['engine']}, data size {j['size']}, repeat {j['repeat']}",
                    argv)


if __name__ == "__main__":
    sys.exit(main())
