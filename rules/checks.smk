# Before the DAG: what each study's sources bring, checked against its spec cards, feature
# names, report focus and imported devices; every import's files listed (rules/common.smk: the plan).
# The checks are benchcast.workflow.checks; a check that fails is a refusal, one line.
from benchcast.workflow import checks as bc_checks  # noqa: E402

#: The spec cards and feature names allowed unused, warned here and in the run's last lines (onsuccess).
UNUSED_CARDS = []

# the import sources' files are listed and read here once, by the run's own process (not by each
# job's), where the run builds results (not for teardown, compare, --unlock: benchcast.core.smk
# .builds_results)
if workflow.is_main_process and bc_smk.builds_results():
    try:
        bc_checks.check_import_files(JOBS, SELECTED)
        UNUSED_CARDS = [
            w for study in SELECTED for w in bc_checks.check_cards(JOBS, study)
        ]
    except BenchcastError as exc:
        refuse(str(exc))
for _warning in UNUSED_CARDS:
    logger.warning(_warning)
