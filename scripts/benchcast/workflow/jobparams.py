"""A measuring job's settings (rules/inputs.smk): what a fio run, a YCSB job and an out-of-core job
measure, handed to them as one JSON param each. Params are rerun triggers: a changed value plans the
measurement again, so each is a function of the job's wildcards alone and leaves out what only says
which runs exist (:data:`RUN_AXES`)."""

import json

from benchcast.sources import plan as bc_plan
from benchcast.workflow.inputs import Inputs, state_path

#: A measuring source's keys that say which runs exist, not how one is made (the repeat-until-stable
#: keys among them): a job's recorded settings leave them out, so a new size, device or repeat
#: re-plans no measured run.
RUN_AXES = ("devices", "repeats", "max_repeats", "stable_cv")

#: The YCSB bindings' jar, built once (rule build_ycsb).
YCSB_JAR = "results/ycsb/benchcast-ycsb.jar"


class JobParams(Inputs):
    """:class:`~benchcast.workflow.inputs.Inputs` and the measuring jobs' settings."""

    def run_of(self, wildcards) -> bc_plan.Run:
        """The planned run (benchcast.sources.plan.Run) a measuring job's wildcards name."""
        fields = {k: int(v) if k == "size" else v for k, v in dict(wildcards.items()).items()}
        fields["repeat"] = int(fields["repeat"])
        return bc_plan.Run(type=self.source(wildcards)["type"], **fields)

    def previous_runs(self, wildcards) -> list[str]:
        """Repeat until stable: a run beyond the source's ``repeats`` reads the earlier runs of its fio
        cell or YCSB job (and waits for them); the runs within ``repeats`` read nothing."""
        run = self.run_of(wildcards)
        if run.repeat < self.source(wildcards)["repeats"]:
            return []
        return [run.again(r).path() for r in range(run.repeat)]

    def stop_rule(self, wildcards) -> dict:
        """What a run beyond ``repeats`` needs to decide whether it is needed (nothing for the others,
        so that their recorded params stay as they were)."""
        previous = self.previous_runs(wildcards)
        if not previous:
            return {}
        src = self.source(wildcards)
        extra = int(wildcards.repeat) - bc_plan.planned_runs(src)
        if extra >= 0:
            return {"previous": previous, "spoil": {"thresholds": self.thresholds(), "extra": extra}}
        return {"previous": previous, "stable_cv": src["stable_cv"]}

    def fio_job(self, wildcards) -> str:
        """What a fio run measures (param ``cell``, JSON): the cell's options, the stop rule of a run
        beyond ``repeats``."""
        return json.dumps({**self.fio_cell(wildcards), **self.stop_rule(wildcards)})

    def _job(self, wildcards) -> dict:
        """What every YCSB and ooc job names first: study, device and its spec, state, source name."""
        return {
            "study": wildcards.study,
            "device": wildcards.device,
            "spec": self.device_spec(wildcards.study, wildcards.device),
            "state": state_path(wildcards.study, wildcards.device),
            "source_name": wildcards.source,
        }

    def ycsb_job(self, wildcards) -> str:
        """A YCSB job's settings (param ``job``, JSON): a function of the wildcards alone, so Snakemake
        records it and a changed YCSB setting is a change of the measurement."""
        run = self.run_of(wildcards)
        return json.dumps(
            {
                **self._job(wildcards),
                "source": self.ycsb_job_source(wildcards),
                "engine": run.engine,
                "size": run.size,
                "repeat": run.repeat,
                "jar": YCSB_JAR,
                "records": run.path(".csv"),
                "raw": run.path(""),
                **self.stop_rule(wildcards),
            }
        )

    def ooc_job(self, wildcards) -> str:
        """An out-of-core job's settings (param ``job``, JSON), recorded as :meth:`ycsb_job`'s."""
        run = self.run_of(wildcards)
        return json.dumps(
            {
                **self._job(wildcards),
                "source": self.ooc_job_source(wildcards),
                "mode": run.mode,
                "repeat": run.repeat,
                "binaries": self.ooc_binaries(wildcards),
                "records": run.path(".csv"),
                "raw": run.path(""),
            }
        )

    def ycsb_job_source(self, wildcards) -> dict:
        """The YCSB source's settings as one job sees them (recorded, so a change re-plans the job):
        its own engine and data size, without the keys that say which runs exist (:data:`RUN_AXES`).
        Adding or dropping a size, an engine, a device or a repeat leaves a measured run's settings
        as they were."""
        run = self.run_of(wildcards)
        return {**self._job_source(wildcards), "engines": [run.engine], "data_sizes": [f"{run.size}B"]}

    def ooc_job_source(self, wildcards) -> dict:
        """An out-of-core source's settings as one job sees them: its own mode, as :meth:`ycsb_job_source`."""
        return {**self._job_source(wildcards), "modes": [self.run_of(wildcards).mode]}

    def _job_source(self, wildcards) -> dict:
        return {k: v for k, v in self.source(wildcards).items() if k not in RUN_AXES}
