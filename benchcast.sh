#!/usr/bin/env bash
# benchcast: set up and run on a fresh Debian/Ubuntu machine.
#
#   ./benchcast.sh run        set up, run the default studies (config/config.yaml), write the report
#   ./benchcast.sh slurm      the same through Slurm (profiles/slurm, from a login node; docs/guide/slurm.md)
#   ./benchcast.sh test       set up, run the tests (what CI runs)
#   ./benchcast.sh setup      only set up: Debian packages (as root), Python venv .venv with the pins
#   ./benchcast.sh teardown   clean up devices and servers an interrupted run left behind
#   ./benchcast.sh --help     this
#
# Extra arguments after `run` or `slurm` go to snakemake (e.g. ./benchcast.sh run --config run='{studies: [paper]}').
set -euo pipefail
# A script that starts `./benchcast.sh run &` (no job control) starts this shell with SIGINT ignored,
# and bash cannot trap a signal ignored on entry: a SIGINT would be dropped and the run go on. Start
# again with SIGINT's default action (env --default-signal, coreutils 8.31; else Python), so that
# SIGINT stops a run however it was started.
if [ -n "$(trap -p INT)" ] && [ -z "${BENCHCAST_SIGINT_RESET:-}" ]; then
    export BENCHCAST_SIGINT_RESET=1
    if env --default-signal=INT true 2>/dev/null; then
        exec env --default-signal=INT "$BASH" "$0" "$@"
    elif command -v python3 >/dev/null; then
        exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
            "$BASH" "$0" "$@"
    fi
fi
unset BENCHCAST_SIGINT_RESET
cd "$(dirname "$0")"
VENV=${BENCHCAST_VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac  # absolute: the rules find it from any directory

# Debian packages: fio, ndctl, mkfs tools and losetup for the devices; Java 17 and Maven for the YCSB
# bindings; the MariaDB server for the MariaDB engine; FUSE 3 and a C compiler for delayed devices. Only installed when missing, only as root.
APT_PACKAGES=(fio ndctl e2fsprogs util-linux openjdk-17-jdk-headless maven mariadb-server python3-venv
              fuse3 libfuse3-dev pkg-config gcc)
# For the tests only: headless Chromium and its WebDriver (the report's interactive charts in a browser).
TEST_APT_PACKAGES=(chromium chromium-driver)

setup_system() {  # the packages to install when missing (default: APT_PACKAGES)
    local missing=() wanted=("$@")
    [ ${#wanted[@]} -gt 0 ] || wanted=("${APT_PACKAGES[@]}")
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "benchcast: not root; please install: ${missing[*]}" >&2
        return
    fi
    echo "benchcast: installing ${missing[*]}" >&2
    apt-get update -qq
    # Package scripts must not start a system MariaDB server: benchmarks start their own.
    # policy-rc.d answering 101 tells invoke-rc.d not to start services during the install.
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made_policy=yes
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || {
        [ -n "$made_policy" ] && rm -f "$policy"
        exit 1
    }
    [ -n "$made_policy" ] && rm -f "$policy"
    return 0
}

# uv installs requirements.txt into the venv in about 20 s (pip: 41 s on two cores); the same pins,
# the same resolved versions. pip is the fallback when uv cannot be had. --compile-bytecode: every
# job is a new Python process, and where PYTHONDONTWRITEBYTECODE is set none would ever write its
# bytecode (pandas imports in 0.35 s with it, 1.4 s without).
UV_VERSION=0.13.9

setup_python() {
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV"
    fi
    if ! cmp -s requirements.txt "$VENV/.requirements"; then
        if "$VENV/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION"; then
            "$VENV/bin/uv" pip install -q --compile-bytecode --python "$VENV/bin/python" -r requirements.txt
        else
            "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
        fi
        cp requirements.txt "$VENV/.requirements"
    fi
}

setup() {
    setup_system
    setup_python
}

# `run` stops on SIGTERM, SIGINT and SIGHUP wherever the signal lands. Outside forward_signals the
# traps only remember it (bash runs a trap once the foreground command has returned, and a signal
# sent to this shell alone does not reach that command) and stop_if_signalled stops the run at the
# next step; inside, it goes on to Snakemake at once.
STOPPED=""
remember_signals() {
    trap 'STOPPED=TERM' TERM
    trap 'STOPPED=INT' INT
    trap 'STOPPED=HUP' HUP
}

stop_if_signalled() {  # after a remembered signal: exit as a stopped run, with one line
    [ -n "$STOPPED" ] || return 0
    echo "benchcast: run stopped by SIG$STOPPED before $1" >&2
    case "$STOPPED" in
        TERM) exit 143 ;;
        INT) exit 130 ;;
        *) exit 129 ;;
    esac
}

# Run a command as a child and pass SIGTERM, SIGINT and SIGHUP on to it (bash would otherwise die of
# them and leave Snakemake running, or wait for it with the signal pending); return its exit code.
forward_signals() {
    "$@" &
    local pid=$! rc=0
    # SIGINT goes on as SIGTERM: a background child of a script starts with SIGINT ignored
    trap 'STOPPED=TERM; kill -TERM $pid 2>/dev/null || true' TERM
    trap 'STOPPED=INT; kill -TERM $pid 2>/dev/null || true' INT
    trap 'STOPPED=HUP; kill -HUP $pid 2>/dev/null || true' HUP
    # a signal that came after the last check but before these traps: pass it on now
    case "$STOPPED" in
        TERM | INT) kill -TERM "$pid" 2>/dev/null || true ;;
        HUP) kill -HUP "$pid" 2>/dev/null || true ;;
    esac
    while :; do
        wait "$pid" && rc=0 || rc=$?
        kill -0 "$pid" 2>/dev/null || break  # a trap interrupted the wait: wait again
    done
    remember_signals
    return "$rc"
}

names_tests() {  # whether pytest's arguments choose the tests: a path, -k, -m or a node id
    local arg
    for arg in "$@"; do
        case "$arg" in
            -k* | -m*) return 0 ;;
            -*) ;;
            *) return 0 ;;
        esac
    done
    return 1
}

# The whole suite in two lanes at once, each named to pytest by BENCHCAST_TEST_LANE (which tests a
# lane holds: tests/conftest.py in_lane): the workflow on imported results alone (marker `imported`)
# and the fast tier, neither touching a device, benchmark or server (they fail if they start one)
# nor timing anything (marker `timing`), at nice 19, in the CPU time the other lane leaves idle while
# it waits on benchmarks, deadlines and Slurm (its measured runs count niced work apart, as they do a
# user's nice-19 batch job), and the rest. `-m ""`: every tier, the lane chooses.
# The second lane's report follows the first's; the exit code is the first failing lane's.
test_in_two_lanes() {
    local lane pid rc=0 rc_lane=0
    lane=$(mktemp -d)
    BENCHCAST_TEST_LANE=imported nice -n 19 "$VENV/bin/python" -m pytest -m "" \
        -p no:cacheprovider --basetemp "$lane/tmp" "$@" >"$lane/log" 2>&1 &
    pid=$!
    trap 'kill -TERM "$pid" 2>/dev/null || true' INT TERM HUP
    BENCHCAST_TEST_LANE=rest "$VENV/bin/python" -m pytest -m "" "$@" || rc=$?
    wait "$pid" || rc_lane=$?
    trap - INT TERM HUP
    echo "=== the second lane: imported (tests/conftest.py in_lane), at nice 19, beside the above ==="
    cat "$lane/log"
    rm -rf "$lane"
    [ "$rc" -ne 0 ] && return "$rc"
    return "$rc_lane"
}

# Rules run `python`, `fio`, `java`: the venv's Python first (with --sdm conda, each rule's env).
export PATH="$VENV/bin:$PATH"

cmd=${1:-}
shift || true
case "$cmd" in
    setup)
        setup
        ;;
    run | slurm)
        # on a cluster: the jobs submitted through profiles/slurm, not the workstation's default profile
        profile=()
        [ "$cmd" = slurm ] && profile=(--profile profiles/slurm --workflow-profile none)
        remember_signals
        setup
        stop_if_signalled "Snakemake started"
        # what Snakemake reads before the workflow can check it: --configfile files, --config items
        PYTHONPATH="$PWD/scripts" "$VENV/bin/python" -m benchcast.config.configfiles "${profile[@]}" "$@"
        stop_if_signalled "Snakemake started"
        # the workflow read as Snakemake will read it, without its DAG: a refusal (a config key, an
        # imported file) is the one line on stderr, with none of Snakemake's framing around it
        PYTHONPATH="$PWD/scripts" "$VENV/bin/python" -m benchcast.core.startup "${profile[@]}" "$@"
        stop_if_signalled "Snakemake started"
        # a stopped run (SIGTERM/SIGINT) exits non-zero: no report then
        forward_signals "$VENV/bin/snakemake" "${profile[@]}" "$@"
        stop_if_signalled "the report"
        # a dry run (-n, -np, --dry-run) changes nothing: no report (it rewrote results/report.html)
        for arg in "$@"; do
            case "$arg" in
                --dry-run | --dryrun | -n* | -[!-]*n*) exit 0 ;;
            esac
        done
        forward_signals "$VENV/bin/snakemake" "${profile[@]}" --report results/report.html "$@"
        echo "benchcast: report in results/report.html, tables in results/<study>/tables/"
        # the measurement's quality: the noise floor against the tolerance, runs spoiled by interference
        cat results/*/quality/summary.txt 2>/dev/null | sed 's/^/benchcast: /' || true
        # the answer: one line per spec card (its series answered, the held-out error, the figure worth
        # asking for); every series' answer is on the report's answer page and in answers.csv
        for answers in results/*/validation/answers.txt; do
            [ -f "$answers" ] || continue
            study=${answers#results/}
            sed "s/^/benchcast: ${study%%/*}: /" "$answers"
        done
        echo "benchcast: every series' answer: the report's answer page, results/<study>/validation/answers.csv"
        ;;
    test)
        setup
        setup_system "${TEST_APT_PACKAGES[@]}"
        if [ "$(id -u)" -eq 0 ]; then
            bash .ci/install-slurm.sh
        fi
        # every tier: plain pytest is the fast one (pyproject.toml), this the whole suite; a -m given wins
        if names_tests "$@"; then
            "$VENV/bin/python" -m pytest -m "" "$@"
        else
            test_in_two_lanes "$@"
        fi
        ;;
    teardown)
        # after a killed run: release the locks it left (refused while a run is in progress), then
        # stop its servers and undo its devices
        setup_python
        "$VENV/bin/snakemake" --unlock
        "$VENV/bin/snakemake" teardown
        ;;
    -h | --help | help)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
        ;;
    *)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
        echo "benchcast: unknown command ${cmd:-(none)}: one of run, slurm, test, setup, teardown" >&2
        exit 2
        ;;
esac
