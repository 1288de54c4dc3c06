"""The workflow's glue (the top layer): what the rule files (rules/*.smk) compute, over plain data
(the config's studies and run keys, the run plan, a job's wildcards) so that it is tested without
Snakemake: the run's studies and plans (``studies``), the jobs' inputs and params (``inputs``,
``jobparams``), the checks before the DAG (``checks``) and the final targets (``targets``). The rule
files keep the rules and bind these functions to their names (``get_*``)."""
