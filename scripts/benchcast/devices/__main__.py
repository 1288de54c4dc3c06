"""python -m benchcast.devices provision|ensure|teardown|teardown-all|describe ..."""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from .. import BenchcastError
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
    s = sub.add_parser("teardown", help="undo what one state record says was created")
    s.add_argument("state")
    s = sub.add_parser("teardown-all", help="undo what every state record in a directory lists")
    s.add_argument("state_dir")
    s = sub.add_parser("describe", help="print a provisioned device's provenance as JSON")
    s.add_argument("state")
    args = p.parse_args(argv)
    try:
        with benchmark_lock():
            return _run(args)
    except BenchcastError as exc:
        print(f"benchcast: {exc}", file=sys.stderr)
        return 1


def _run(args) -> int:
    try:
        if args.cmd in ("provision", "ensure"):
            dev_id, spec = _spec(args)
            fn = provision if args.cmd == "provision" else ensure
            state = fn(dev_id, spec, args.state)
            print(json.dumps({"device": dev_id, "status": state["status"], "target": state.get("target"),
                              "reason": state.get("reason")}))
        elif args.cmd == "teardown":
            teardown(args.state)
        elif args.cmd == "teardown-all":
            for path, res in teardown_all(args.state_dir).items():
                print(f"{path}: {res}")
        elif args.cmd == "describe":
            print(json.dumps(describe(args.state), indent=1))
    except BenchcastError as exc:
        print(f"benchcast: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
