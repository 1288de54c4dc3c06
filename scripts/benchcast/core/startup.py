"""Before Snakemake starts (``./benchcast.sh run``): the workflow read as the run will read it, and a
refusal printed as one line, alone.

The checks are the workflow's own, not a copy: the config files, the schema, a run in progress or a
killed run's lock, the results folder, the run plan, each study's spec cards, feature names and
report focus against what its sources measure or import, every imported file read with its checks,
the final targets (``rules/common.smk``, ``rules/checks.smk``, ``rules/outputs.smk``). They run
here through Snakemake's own command line, profiles and config merge, without building the DAG
(``--list-rules``) and without a log file of its own. A refusal there stops the workflow with
:class:`SystemExit` carrying its one line (``refuse`` in ``rules/common.smk``), which a direct
``snakemake`` call prints too, after Snakemake's own opening lines; here it is the only line on
stderr. Snakemake's lines (the profile it uses, warnings) are left to the run itself, and so is
anything else that stops the reading (an option Snakemake does not know, an error of its own):
Snakemake says it in its own words.
"""

from __future__ import annotations

import os
import sys


def refusal(argv) -> str | None:
    """The one line with which the workflow, read with Snakemake's command line ``argv``, refuses
    to start; None where it reads (or stops for a reason of Snakemake's own)."""
    from . import smk

    saved_argv = sys.argv
    # what the workflow's checks read of the command line (a dry run, an option that takes no lock)
    sys.argv = ["snakemake", *argv]
    saved = _silence()
    smk.READING = True  # a killed run's lock is left to the run, which recovers and says so
    try:
        # --dry-run: Snakemake keeps no log file of it (the checks read sys.argv, the run's own)
        smk.read_command_line(["--list-rules", "--dry-run", *argv])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, str) else None
    except Exception:  # Snakemake's own error: the run reports it in its words
        return None
    finally:
        smk.READING = False
        _restore(saved)
        sys.argv = saved_argv
    return None


def _silence() -> tuple[int, int]:
    """Send this process's stdout and stderr (Snakemake's lines, the rule list) to /dev/null; returns
    the saved descriptors."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    return saved


def _restore(saved: tuple[int, int]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    for fd, old in zip((1, 2), saved):
        os.dup2(old, fd)
        os.close(old)


def main(argv=None) -> int:
    """``python -m benchcast.core.startup [snakemake arguments]``: exit 1 with the refusal as the only
    line on stderr, else 0 (and nothing printed)."""
    line = refusal(sys.argv[1:] if argv is None else list(argv))
    if line is None:
        return 0
    print(line, file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
