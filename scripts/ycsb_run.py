"""Rule script: one YCSB job - on the ensured device, load once and run the workloads in order
(or reload per workload) for one engine, data size and repeat; write its records."""
from pathlib import Path

from benchcast import devices, records, smk, ycsb


def main(sm):
    src = sm.params.source
    dev = sm.wildcards.device
    maria = src.get("mariadb", {})
    with devices.on_device(dev, sm.params.spec, sm.params.state, enter_cgroup=True) as state:
        recs = ycsb.run_ycsb(
            sm.wildcards.engine,
            devices.target(state),
            src["workloads"],
            int(sm.wildcards.size),
            src["threads"],
            jar=Path(sm.input.jar).resolve(),
            out_dir=Path(sm.output.raw).resolve(),
            study=sm.wildcards.study,
            device=dev,
            operationcount=src.get("operationcount"),
            maxexecutiontime=src.get("maxexecutiontime"),
            repeats=[int(sm.wildcards.repeat)],
            reload_per_workload=src["reload_per_workload"],
            fieldcount=src["fieldcount"],
            fieldlength=src["fieldlength"],
            properties={k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in src.get("properties", {}).items()},
            mariadb_options={
                "buffer_pool_size": maria.get("buffer_pool_size", "16M"),
                "log_file_size": maria.get("log_file_size", "8M"),
                "options": maria.get("options"),
            },
        )
    recs["source"] = f"ycsb:{sm.wildcards.source}"
    for key, val in devices.provenance(state).items():
        recs[key] = val
    records.write(recs, sm.output.records)


smk.run(main, snakemake)  # noqa: F821
