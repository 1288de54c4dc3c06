"""Glue for the thin rule scripts: logging to the rule's log file and one-line errors."""

from __future__ import annotations

import logging
import sys
import traceback

from . import BenchcastError


def run(main, snakemake) -> None:
    """Run ``main(snakemake)`` with logging into ``snakemake.log[0]``.

    A :class:`BenchcastError` ends the job with its one-line message (in the log and on stderr) and
    exit status 1; any other exception is logged with its traceback and re-raised.
    """
    log_path = snakemake.log[0] if len(snakemake.log) else None
    handlers = [logging.StreamHandler(sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", handlers=handlers, force=True)
    log = logging.getLogger("benchcast")
    try:
        main(snakemake)
    except BenchcastError as exc:
        log.error("benchcast: %s", exc)
        sys.exit(1)
    except Exception:
        log.error("%s", traceback.format_exc())
        raise
