"""The jobs' input and param functions that every stage shares (rules/common.smk, rules/inputs.smk):
``Inputs`` holds the run's plain data (the config's studies and run keys, the plan of each selected
study, the analysis code's digest) and its methods take a job's wildcards, so the rule files bind
them as their ``get_*`` functions. A job's settings (its params, rerun triggers) are in
:mod:`benchcast.workflow.jobparams`."""

import json
from dataclasses import dataclass, field

from benchcast import BenchcastError
from benchcast.core import smk as bc_smk
from benchcast.sources.run import quality as bc_quality
from benchcast.workflow import targets as bc_targets

#: Device keys that do not shape a measurement: changing them must not rerun a benchmark (`sources` says
#: which sources measure the device; a source it no longer names plans nothing new, a new one its runs).
COSMETIC_DEVICE_KEYS = {"label", "node", "constraint", "sources"}

#: The file types each import source reads, by its ``type`` (its files listed before the DAG).
IMPORTED = ("fio_json", "pkb", "records", "ycsb_output")


def state_path(study, device):
    """The device's state record: what this workflow created (not a rule output, so Snakemake never
    deletes it; teardown-all reads it after a killed run)."""
    return f"results/{study}/devices/state/{device}.json"


def ooc_binary(program):
    """Where an out-of-core program is built."""
    return f"results/ooc/bin/{program}"


@dataclass(frozen=True, eq=False)  # hashed by identity: Snakemake may keep its methods in sets
class Inputs:
    """The input and param functions over a run's config and plan; each method with a ``wildcards``
    parameter is one rule's ``get_*`` function."""

    studies: dict  # config["studies"]
    run: dict = field(default_factory=dict)  # config["run"]
    plan: dict = field(default_factory=dict)  # study -> benchcast.sources.plan.StudyPlan
    digest: str = ""  # the analysis code's (benchcast.core.smk.package_digest)

    def source(self, wildcards) -> dict:
        """The config of the job's source."""
        try:
            return self.studies[wildcards.study]["sources"][wildcards.source]
        except KeyError:
            raise BenchcastError(f"config: studies.{wildcards.study}.sources: no source {wildcards.source!r}") from None

    def package_digest(self, wildcards) -> str:
        """The analysis code's digest, as a function of the wildcards: only those params are recorded
        for the params rerun trigger."""
        return self.digest

    def device_ids(self, wildcards):
        """The study's device ids (None if it names none: then an import accepts any)."""
        return list(self.studies[wildcards.study].get("devices", {})) or None

    def record_files(self, wildcards) -> list[str]:
        """Every source of a study writes one record table: results/{study}/records/{type}/{source}.csv."""
        return bc_targets.record_files(wildcards.study, self.studies[wildcards.study])

    def device_spec(self, study, device) -> dict:
        """A device's spec without the keys that shape no measurement (:data:`COSMETIC_DEVICE_KEYS`)."""
        spec = self.studies[study]["devices"][device]
        return {k: v for k, v in spec.items() if k not in COSMETIC_DEVICE_KEYS}

    def device_spec_json(self, wildcards) -> str:
        """The device's spec as a job gets it (JSON; without the keys that shape no measurement)."""
        return json.dumps(self.device_spec(wildcards.study, wildcards.device))

    def state_path(self, wildcards) -> str:
        return state_path(wildcards.study, wildcards.device)

    def slurm_extra(self, wildcards) -> str:
        """Slurm: a device's group job owns its node, and runs on the node that has the device."""
        node = self.studies[wildcards.study]["devices"][wildcards.device].get("node")
        return "--exclusive" + (f" --nodelist={node}" if node else "")

    def constraint(self, wildcards):
        """Slurm: a node feature the device needs (sbatch -C), if the config names one."""
        return self.studies[wildcards.study]["devices"][wildcards.device].get("constraint")

    def round(self, wildcards) -> int:
        """Measurements in rounds: a benchmark job's priority is minus its repeat, so the greedy
        scheduler runs repeat r of every provisioned device before repeat r + 1 of any. A slow stretch
        of the machine then falls on one repeat of several devices, which the trimmed mean drops or
        averages, and not on every repeat of one device (docs/archive/ablation-2026-11.md, session 19).
        Only the order changes: priority is no rerun trigger. On a cluster each round of a device is its
        own job(s)."""
        return -int(wildcards.repeat)

    def thresholds(self) -> dict:
        """The interference thresholds (run.interference), figure -> largest value a clean run shows."""
        return {
            k: v for k, v in self.run.get("interference", {}).items() if k in bc_quality.FIGURES and v is not None
        }

    def quality_params(self, wildcards) -> dict:
        """What a records rule needs to leave out the runs interference spoiled, and to state each
        record at the reference speed (run.speed)."""
        return {"thresholds": self.thresholds(), "repeats": self.source(wildcards)["repeats"], "speed": self.run["speed"]}

    def device_benchmarks(self, wildcards) -> list[str]:
        """Every benchmark output on one device: the device's teardown waits for all of them."""
        if wildcards.study not in self.plan:
            return []
        return self.plan[wildcards.study].outputs(device=wildcards.device)

    def fio_cell(self, wildcards) -> dict:
        """The options of the fio cell the job measures."""
        try:
            return self.plan[wildcards.study].cell(wildcards.source, wildcards.device, wildcards.cell)
        except KeyError:
            raise BenchcastError(
                f"fio: no cell {wildcards.cell} on device {wildcards.device} in "
                f"studies.{wildcards.study}.sources.{wildcards.source}"
            ) from None

    def run_records_inputs(self, wildcards) -> dict:
        """A measured source's runs, the study's runs (their speed probes), and its devices' teardown
        records; a fio source also their provisioning records (the devices' provenance)."""
        study, source = wildcards.study, wildcards.source
        devs = self.plan[study].devices(source)
        # every run of the study: the machine's speed around each run is the median of theirs nearby
        out = {"runs": self.plan[study].outputs(source=source), "study_runs": self.plan[study].outputs()}
        if self.source(wildcards)["type"] == "fio":
            out["provisioned"] = [f"results/{study}/devices/{d}/provisioned.json" for d in devs]
        out["torn_down"] = [f"results/{study}/devices/{d}/torn_down.json" for d in devs]
        return out

    def ooc_binaries(self, wildcards) -> dict:
        """Program -> its binary, of the job's out-of-core source."""
        return {p: ooc_binary(p) for p in self.source(wildcards)["programs"]}

    def import_files(self, wildcards) -> dict:
        """The paper's tables a soga2018 import reads."""
        src = self.source(wildcards)
        return {"fio": src["fio"], "app": src["app"]}

    def import_inputs(self, wildcards) -> list[str]:
        """The files an import source reads (folders and globs expanded): a changed, added or removed
        file reruns the import."""
        from benchcast.sources.parse import importers as bc_importers

        src, where = self.source(wildcards), f"config: studies.{wildcards.study}.sources.{wildcards.source}"
        if src["type"] == "ycsb_output":
            from benchcast.sources.run import ycsb as bc_ycsb

            try:
                outputs = [p for run in src["runs"] for p in bc_importers.ycsb_output_files(run["files"])]
            except BenchcastError as exc:
                raise BenchcastError(f"{where}.runs: {exc}") from None
            logs = [log for p in outputs for log in bc_ycsb.histogram_logs(p)]
            return sorted({str(p) for p in outputs + logs})
        entries = src["files"].values() if isinstance(src["files"], dict) else [src["files"]]
        try:
            return sorted(
                {str(p) for e in entries for p in bc_importers.input_files(e, bc_importers.FILE_PATTERNS[src["type"]])}
            )
        except BenchcastError as exc:
            raise BenchcastError(f"{where}.files: {exc}") from None

    def import_digest(self, wildcards) -> str:
        """The contents of the files an import reads (benchcast.core.smk.files_digest): a file changed with
        its old modification time kept reruns the import too."""
        if self.source(wildcards)["type"] == "soga2018":
            return bc_smk.files_digest(self.import_files(wildcards).values())
        return bc_smk.files_digest(self.import_inputs(wildcards))
