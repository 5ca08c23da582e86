"""One leader-election candidate using the official Python client's kubernetes.leaderelection.

A program of the candidate harness (test/support/candidate-process.ts), run next to nest-leader
candidates on one lock: it takes the harness's flags and prints its JSON event lines (one per
event on stdout, stamped with CLOCK_MONOTONIC like every other candidate program):

  {"event": "ready" | "started" | "stopped", "identity": ..., "monotonicMs": ..., "time": ...}

The client's own log goes to stderr. Re-enters the election after losing it, like nest-leader's
default. Exits on SIGTERM/SIGKILL without releasing: the Python client has no release, so
--release-on-cancel must be false.

Usage: candidate.py --kubeconfig K --lease-name N --namespace NS --identity ID [--lock lease|configmap]
                    [--candidates 1] --lease-duration 4s --renew-deadline 3s --retry-period 1s
                    --release-on-cancel=false
"""

import argparse
import datetime
import json
import logging
import re
import sys
import time

from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock


def seconds(value):
    """`4s`, `1.5s`, `500ms` -> seconds; whole seconds as an int (the Lease field is one)."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)", value)
    if not match:
        raise argparse.ArgumentTypeError(f"must look like 15s or 500ms, got {value!r}")
    result = float(match.group(1)) / (1000 if match.group(2) == "ms" else 1)
    return int(result) if result.is_integer() else result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--lock", choices=["lease", "configmap"], default="lease")
    parser.add_argument("--lease-name", required=True)
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--identity", required=True)
    parser.add_argument("--candidates", choices=["1"], default="1")
    parser.add_argument("--lease-duration", type=seconds, default=15)
    parser.add_argument("--renew-deadline", type=seconds, default=10)
    parser.add_argument("--retry-period", type=seconds, default=2)
    parser.add_argument("--release-on-cancel", choices=["false"], required=True,
                        help="must be false: the Python client has no release")
    args = parser.parse_args()

    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(name)s %(message)s")

    def emit(event):
        line = {
            "event": event,
            "identity": args.identity,
            "monotonicMs": time.clock_gettime(time.CLOCK_MONOTONIC) * 1000,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }
        print(json.dumps(line), flush=True)

    config.load_kube_config(config_file=args.kubeconfig)
    lock_class = LeaseLock if args.lock == "lease" else ConfigMapLock
    lock = lock_class(args.lease_name, args.namespace, args.identity)
    emit("ready")
    while True:
        election = electionconfig.Config(
            lock,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
            onstarted_leading=lambda: emit("started"),
            onstopped_leading=lambda: emit("stopped"),
        )
        # Returns after this candidate failed to renew within renew_deadline.
        leaderelection.LeaderElection(election).run()


if __name__ == "__main__":
    main()
