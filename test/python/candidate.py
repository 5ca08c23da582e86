"""One leader-election candidate using the official Python client's kubernetes.leaderelection.

Run by test/support/peer-fleet.ts next to nest-leader candidates on the same lock. Prints one
JSON line per event on stdout ({"event": "started-leading" | "stopped-leading", ...}); the
client's own log goes to stderr. Re-enters the election after losing it, like nest-leader's
default. Exits on SIGTERM/SIGKILL without releasing: the Python client has no release.

Usage: candidate.py --lock lease|configmap --name N --namespace NS --identity ID
                    --lease-duration S --renew-deadline S --retry-period S   (KUBECONFIG in env)
"""

import argparse
import json
import logging
import sys

from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lock", choices=["lease", "configmap"], required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--identity", required=True)
    parser.add_argument("--lease-duration", type=int, required=True)
    parser.add_argument("--renew-deadline", type=int, required=True)
    parser.add_argument("--retry-period", type=int, required=True)
    args = parser.parse_args()

    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(name)s %(message)s")

    def emit(event):
        print(json.dumps({"event": event, "identity": args.identity, "kind": "python"}),
              flush=True)

    config.load_kube_config()  # KUBECONFIG
    lock_class = LeaseLock if args.lock == "lease" else ConfigMapLock
    lock = lock_class(args.name, args.namespace, args.identity)
    emit("campaigning")
    while True:
        election = electionconfig.Config(
            lock,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
            onstarted_leading=lambda: emit("started-leading"),
            onstopped_leading=lambda: emit("stopped-leading"),
        )
        # Returns after this candidate failed to renew within renew_deadline.
        leaderelection.LeaderElection(election).run()


if __name__ == "__main__":
    main()
