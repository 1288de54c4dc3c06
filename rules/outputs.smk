# The final targets and the report's outputs: their logic is benchcast.workflow.targets (rule all's
# inputs: FINAL_OUTPUTS in the Snakefile).
from benchcast.workflow import targets as bc_targets  # noqa: E402

#: reported(path, subcategory, caption=None): a study's output results/{study}/<path> shown in the
#: report under the study and ``subcategory``, with the caption report/<caption>.rst (default: the
#: file's own name): Snakemake's report() with its arguments.
reported = bc_targets.reporter(report)

#: The report rules' input and param functions, bound to the names the rules use.
REPORT_PARAMS = bc_targets.ReportParams(STUDIES)
get_focus = REPORT_PARAMS.focus
get_device_labels = REPORT_PARAMS.device_labels
get_memory_limits = REPORT_PARAMS.memory_limits
get_quality_inputs = REPORT_PARAMS.quality_inputs
