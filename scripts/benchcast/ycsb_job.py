"""``python -m benchcast.ycsb_job``: the command line rules/ycsb.smk runs, kept by this name while the code is
:mod:`benchcast.sources.run.ycsb_job`. Snakemake records a job's command line and plans a job whose line
changed again; a measuring job would then be refused as a re-measurement (docs/guide/reruns.md)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("benchcast.sources.run.ycsb_job", run_name="__main__", alter_sys=True)
