"""python -m benchcast.devices provision|ensure|teardown|teardown-all|describe ..."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import yaml

from .. import BenchcastError
from ..core.cli import run_logged
from . import benchmark_lock, describe, ensure, provision, teardown, teardown_all


def _spec(args) -> tuple[str, dict]:
    if args.spec:
        return args.id, yaml.safe_load(args.spec)
    with open(args.config) as fh:
        cfg = yaml.safe_load(fh)
    try:
        return args.id, cfg["studies"][args.study]["devices"][args.id]
    except (KeyError, TypeError):
        raise BenchcastError(f"{args.config}: no device {args.id!r} in study {args.study!r}") from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchcast.devices", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("provision", "ensure"):
        s = sub.add_parser(name, help=f"{name} one device, writing its state record")
        s.add_argument("--id", required=True, help="device id")
        g = s.add_mutually_exclusive_group(required=True)
        g.add_argument("--spec", help="device spec as YAML/JSON, e.g. '{kind: zram, disksize: 256M}'")
        g.add_argument("--config", help="config file to take the spec from (with --study)")
        s.add_argument("--study", help="study whose devices hold --id")
        s.add_argument("--state", required=True, help="state record path (JSON)")
        s.add_argument("--describe", metavar="FILE", help="then write the device's provenance JSON here")
    s = sub.add_parser("teardown", help="undo what one state record says was created")
    s.add_argument("state")
    s.add_argument("--copy-to", metavar="FILE", help="then copy the final state record here")
    s = sub.add_parser("teardown-all", help="undo what every state record in a directory lists")
    s.add_argument("state_dir")
    s = sub.add_parser("describe", help="print a provisioned device's provenance as JSON")
    s.add_argument("state")
    p.add_argument("--log", help="write all output here; a failure's one-line reason also goes to stderr")
    args = p.parse_args(argv)

    def locked():
        with benchmark_lock():
            _run(args)

    return run_logged(locked, args.log)


def _run(args) -> None:
    if args.cmd in ("provision", "ensure"):
        dev_id, spec = _spec(args)
        fn = provision if args.cmd == "provision" else ensure
        state = fn(dev_id, spec, args.state)
        print(json.dumps({"device": dev_id, "status": state["status"], "target": state.get("target"),
                          "reason": state.get("reason")}))
        if args.describe:  # written whole or not at all: a killed job leaves no half record
            part = Path(args.describe + ".partial")
            part.write_text(json.dumps(describe(args.state), indent=1) + "\n")
            part.replace(args.describe)
    elif args.cmd == "teardown":
        teardown(args.state)
        if args.copy_to:
            shutil.copyfile(args.state, args.copy_to + ".partial")
            Path(args.copy_to + ".partial").replace(args.copy_to)
    elif args.cmd == "teardown-all":
        for path, res in teardown_all(args.state_dir).items():
            print(f"{path}: {res}")
    elif args.cmd == "describe":
        print(json.dumps(describe(args.state), indent=1))


if __name__ == "__main__":
    sys.exit(main())
