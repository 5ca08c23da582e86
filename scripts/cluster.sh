#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for the demo and the test tier that
# deploys it as a user would: the control plane (kube-apiserver + embedded etcd), the
# controller manager, the scheduler, a kubelet with containerd + runc (Debian's packages) and
# kube-proxy in iptables mode — all built from k8s.io/kubernetes into the one control-plane
# binary (scripts/control-plane.sh) — and the images scripts/images.sh builds locally.
#
#   scripts/cluster.sh build                    build the binary and the images (cached)
#   scripts/cluster.sh run [--state-dir DIR]    start; prints KUBECONFIG=<path> on a line of its
#                                               own once the node is Ready; SIGINT/SIGTERM stop
#                                               everything it started and remove the namespace;
#                                               `touch DIR/restart/NAME` restarts one component
#                                               (kubelet, containerd, …), DIR/pids/NAME is its pid
#
# The node lives in a network namespace of its own (nothing is routed to or from the machine's
# interfaces): the API server advertises a dummy address in it, pods reach it through the
# kubernetes Service's ClusterIP (kube-proxy's DNAT), and the host reaches it on loopback
# through `control-plane netns-forward`. Every process shares the host's mount namespace, so
# the kubelet's volume mounts are visible to containerd and are unmounted on exit.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo_root/test/control-plane/.bin/control-plane"
log() { echo "cluster.sh: $*" >&2; }

node_name=nest-leader-node
node_ip=10.251.0.2      # on the loopback device of the node's namespace
pod_cidr=10.244.0.0/24  # the CNI bridge cni0, inside the node's namespace

# shellcheck source=lib/debian-packages.sh
source "$repo_root/scripts/lib/debian-packages.sh"

# One build at a time per checkout, under an exclusive lock on .cache/cluster-build.lock: a run
# that finds a build under way (.ci/run starts one in the background while the other tiers run)
# waits for it, and then finds everything up to date. The lock is released when the build ends
# (the subshell's descriptor closes), never held by a running node.
cmd_build() {
  mkdir -p "$repo_root/.cache"
  (
    if ! flock -n 9; then
      log "waiting for the build under way (.cache/cluster-build.lock) to finish"
      local t=$SECONDS
      flock 9
      log "the build under way finished after $((SECONDS - t)) s"
    fi
    ensure_debian_packages containerd runc containernetworking-plugins iptables iproute2 util-linux
    "$repo_root/scripts/control-plane.sh" build
    "$repo_root/scripts/images.sh" build
  ) 9>"$repo_root/.cache/cluster-build.lock"
}

free_port() { "$repo_root/tools/node_modules/.bin/node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

write_configs() {
  mkdir -p "$state"/{cni/net.d,cni/ipam,containerd,kubelet,logs,pod-logs}
  cat >"$state/cni/net.d/10-bridge.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "nest-leader-pods",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$state/cni/ipam",
                "ranges": [[{ "subnet": "$pod_cidr" }]], "routes": [{ "dst": "0.0.0.0/0" }] }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
  cat >"$state/containerd/config.toml" <<TOML
version = 2
root = "$state/containerd/root"
state = "$state/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$state/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/nest-leader/pause:local"
  # The sandbox may not lower oom_score_adj (runc: "can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni/net.d"
TOML
  cat >"$state/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$state/containerd/containerd.sock
# cgroup v1 without systemd (1.35+ refuses v1 unless told), no swap accounting, no QoS
# cgroups or node allocatable enforcement, no local-storage accounting: what this machine allows.
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
# Reachable only inside the node's namespace (the API server's logs/exec/proxy calls).
address: $node_ip
readOnlyPort: 0
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
authorization: { mode: AlwaysAllow }
healthzBindAddress: 127.0.0.1
podLogsDir: $state/pod-logs
serializeImagePulls: false
# The images are imported, never pulled: never garbage-collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {}
YAML
  cat >"$state/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: { kubeconfig: "$kubeconfig" }
hostnameOverride: $node_name
clusterCIDR: $pod_cidr
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
iptables: { localhostNodePorts: false }
# Leave the conntrack sysctls as the namespace has them.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
YAML
}

pids=()
declare -A pid_index=() commands=()
netns=""
netns_before=""
in_node() { nsenter --net="/run/netns/$netns" -- "$@"; }
launch() { # launch NAME CMD…: run CMD in the node's namespace, output appended to logs/NAME.log
  local name="$1"; shift
  # nsenter execs CMD after joining the namespace, so $! is the component itself.
  nsenter --net="/run/netns/$netns" -- "$@" >>"$state/logs/$name.log" 2>&1 &
  echo "$!" >"$state/pids/$name"
}
start() { # start NAME CMD…: launch it and watch it (any watched process that dies stops the node)
  local name="$1"; shift
  : >"$state/logs/$name.log"
  launch "$name" "$@"
  pid_index[$name]=${#pids[@]}
  pids+=("$!")
  commands[$name]="$(printf '%q ' "$@")"
  log "$name started (pid $!, log $state/logs/$name.log)"
}
# A fault a test applies to the node: `touch $state/restart/NAME` makes the watch loop stop that
# component (SIGTERM, SIGKILL after 10 s) and start it again with the same command; the file
# goes once it runs again. Its pid is in $state/pids/NAME (e.g. to SIGSTOP the API server).
restart_requested() {
  local request name old i
  for request in "$state"/restart/*; do
    [ -e "$request" ] || continue
    name="${request##*/}"
    i="${pid_index[$name]:-}"
    if [ -z "$i" ]; then log "restart of unknown component $name ignored"; rm -f "$request"; continue; fi
    old="${pids[i]}"
    kill -TERM "$old" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$old" 2>/dev/null || true
    wait "$old" 2>/dev/null || true
    eval "launch $name ${commands[$name]}"
    pids[i]="$!"
    log "$name restarted (pid $!)"
    rm -f "$request"
  done
}

cleanup() {
  local code=$? i
  trap - EXIT INT TERM
  log "stopping"
  # Pods first, while the kubelet and containerd run, so that their SIGTERM and grace apply
  # and the CNI plugin removes their network namespaces.
  if [ ${#pids[@]} -gt 0 ] && [ -f "${kubeconfig:-}" ]; then
    timeout 60 "$bin" kubectl --kubeconfig "$kubeconfig" delete pods --all-namespaces --all --wait=true --timeout=50s >/dev/null 2>&1 || true
  fi
  # Whatever still runs in containerd (a pod the kubelet had not stopped), then the components.
  if [ -S "${state:-/nonexistent}/containerd/containerd.sock" ]; then
    for i in $(ctr --address "$state/containerd/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$state/containerd/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$i" >/dev/null 2>&1 || true
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for i in ${pids[@]+"${pids[@]}"}; do
    for _ in $(seq 1 100); do kill -0 "$i" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$i" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  if [ -n "${state:-}" ]; then
    # containerd's shims outlive it by design, and so would their containers.
    pkill -KILL -f -- "-address $state/containerd/" 2>/dev/null || true
    grep -F " $state/" /proc/self/mounts | cut -d' ' -f2 | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  fi
  # Pod sandboxes' namespaces the CNI plugin did not get to remove, then the node's own.
  for i in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do
    grep -qx "$i" <<<"$netns_before" || ip netns delete "$i" 2>/dev/null || true
  done
  [ -n "$netns" ] && ip netns delete "$netns" 2>/dev/null || true
  log "stopped"
  exit "$code"
}

wait_for() { # wait_for SECONDS WHAT CMD…
  local deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { log "$what: not within the time allowed"; return 1; }
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { log "$what: a node process exited; see $state/logs/"; return 1; }; done
    sleep 0.5
  done
}

cmd_run() {
  state="$repo_root/.cache/cluster"
  while [ $# -gt 0 ]; do
    case "$1" in
      --state-dir) state="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
      *) echo "usage: scripts/cluster.sh run [--state-dir DIR]" >&2; exit 2 ;;
    esac
  done
  [ "$(id -u)" = 0 ] || { log "the node needs root (network namespace, containerd, kubelet)"; exit 1; }
  local t0=$SECONDS
  cmd_build
  # A node's state does not survive a restart: containers, sandboxes and IPs are gone with the
  # namespace. The control plane's state (certificates, etcd) is kept; stale pods are replaced.
  rm -rf "$state/containerd" "$state/kubelet" "$state/cni" "$state/pod-logs"
  mkdir -p "$state/logs"
  rm -rf "$state/pids" "$state/restart"
  mkdir -p "$state/pids" "$state/restart"
  trap cleanup EXIT INT TERM
  netns="nest-leader-node-$$"
  netns_before="$(ip netns list 2>/dev/null | awk '{print $1}')"
  ip netns add "$netns"
  in_node ip link set lo up
  # The node's address sits on the namespace's loopback device: local to the node, routable
  # from the pods (their default route is the bridge), and no kernel module is needed.
  in_node ip addr add "$node_ip/32" dev lo
  in_node sysctl -qw net.ipv4.ip_forward=1
  log "network namespace $netns (node address $node_ip, pods $pod_cidr)"

  local port; port="$(free_port)"
  kubeconfig="$state/control-plane/kubeconfig"
  write_configs
  start containerd containerd --config "$state/containerd/config.toml"
  wait_for 30 "containerd" test -S "$state/containerd/containerd.sock"
  "$repo_root/scripts/images.sh" import "$state/containerd/containerd.sock"

  start control-plane "$bin" --state-dir "$state/control-plane" --port "$port" --advertise-address "$node_ip"
  "$bin" netns-forward --netns "/run/netns/$netns" --port "$port" >"$state/logs/netns-forward.log" 2>&1 &
  pids+=("$!")
  wait_for 120 "kube-apiserver" grep -q '^KUBECONFIG=' "$state/logs/control-plane.log"
  wait_for 30 "loopback forward" "$bin" kubectl --kubeconfig "$kubeconfig" get --raw /readyz
  log "kube-apiserver ready at https://127.0.0.1:$port (after $((SECONDS - t0)) s)"

  local pki="$state/control-plane/pki"
  start kube-controller-manager "$bin" kube-controller-manager --kubeconfig "$kubeconfig" \
    --leader-elect=false --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/sa.key" \
    --use-service-account-credentials=false --controllers '*'
  start kube-scheduler "$bin" kube-scheduler --kubeconfig "$kubeconfig" --leader-elect=false
  start kubelet "$bin" kubelet --config "$state/kubelet/config.yaml" --kubeconfig "$kubeconfig" \
    --root-dir "$state/kubelet" --cert-dir "$state/kubelet/pki" --hostname-override "$node_name" --node-ip "$node_ip"
  start kube-proxy "$bin" kube-proxy --config "$state/kube-proxy.yaml"
  wait_for 120 "node $node_name Ready" sh -c "'$bin' kubectl --kubeconfig '$kubeconfig' get node '$node_name' -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  log "node $node_name Ready after $((SECONDS - t0)) s"
  echo "KUBECONFIG=$kubeconfig"
  # Until a signal, or until any node process dies (then fail loudly).
  while :; do
    restart_requested
    for p in "${pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { log "a node process (pid $p) exited; logs in $state/logs/"; exit 1; }
    done
    sleep 1 & wait $! || true
  done
}

case "${1:-}" in
  build) cmd_build ;;
  run) shift; cmd_run "$@" ;;
  *) echo "usage: scripts/cluster.sh build | run [--state-dir DIR]" >&2; exit 2 ;;
esac
