#!/bin/sh
# Install a single-node Slurm (slurmctld + slurmd + client tools) and munge from Debian packages.
# Idempotent: does nothing when the binaries are already there. Starts nothing: the test
# fixture (tests/slurm_util.py) writes its own slurm.conf and starts/stops the daemons itself.
set -eu

need=""
for bin in slurmctld slurmd sbatch squeue sinfo scancel munged; do
    command -v "$bin" >/dev/null 2>&1 || need=yes
done
if [ -z "$need" ]; then
    echo "install-slurm: slurm and munge already installed"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-slurm: must run as root (apt-get install slurm-wlm munge)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Debian's postinst scripts try to start the services; policy-rc.d 101 stops that, so no
# daemon is left running by the install itself (the fixture owns the daemons).
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    created_policy=yes
fi
cleanup() { if [ -n "$created_policy" ]; then rm -f "$policy"; fi; }
trap cleanup EXIT
apt-get install -y -q --no-install-recommends slurm-wlm munge
echo "install-slurm: installed $(slurmctld -V)"
