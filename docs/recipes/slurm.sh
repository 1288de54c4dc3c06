#!/usr/bin/env bash
# The default studies on a Slurm cluster, from the login node of a clone on a shared file system
# (docs/guide/slurm.md): the same run as ./benchcast.sh run, its jobs submitted through
# profiles/slurm, ending as a run does, with the report and one line per spec card.
set -euo pipefail
cd "$(dirname "$0")/../.."
./benchcast.sh slurm "$@"
