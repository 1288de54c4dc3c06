"""The base every layer stands on: units and workload names, the host, the bridge to Snakemake
(smk), the command-line frame of a job (cli), the guard of raw results (protect), stopping, progress,
the start-up check, and the machine's speed."""
