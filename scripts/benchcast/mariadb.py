"""``python -m benchcast.mariadb``: the command line rules/devices.smk runs, kept by this name while the code is
:mod:`benchcast.sources.run.mariadb`. Snakemake records a job's command line and plans a job whose line
changed again; a measuring job would then be refused as a re-measurement (docs/guide/reruns.md)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("benchcast.sources.run.mariadb", run_name="__main__", alter_sys=True)
