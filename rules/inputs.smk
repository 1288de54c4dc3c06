# The measuring jobs' and the imports' input and param functions (rules/common.smk: the plan), bound
# to the names the rules use: their logic is benchcast.workflow.inputs and .jobparams (JOBS).

get_previous_runs = JOBS.previous_runs
get_fio_job = JOBS.fio_job
get_ycsb_job = JOBS.ycsb_job
get_ooc_job = JOBS.ooc_job
get_device_benchmarks = JOBS.device_benchmarks
get_run_records_inputs = JOBS.run_records_inputs
get_ooc_binaries = JOBS.ooc_binaries
get_import_files = JOBS.import_files
get_import_inputs = JOBS.import_inputs
get_import_digest = JOBS.import_digest

YCSB_SOURCES = sorted(str(p) for p in Path(BASE, "ycsb", "src").rglob("*.java"))
YCSB_JAR = bc_jobparams.YCSB_JAR
OOC_DIR = str(Path(BASE, "ooc"))
ooc_binary = bc_inputs.ooc_binary
