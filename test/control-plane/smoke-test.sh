#!/usr/bin/env bash
# Smoke test of the control plane: start, version, Lease create as admin, 403 for "nobody",
# RBAC for a ServiceAccount identity, audit lines, SIGTERM, restart on the same state dir and
# port, Lease still there. Needs curl and jq. Usage: test/control-plane/smoke-test.sh [state-dir]
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
state_dir="${1:-$(mktemp -d)}"
run_script="$repo_root/scripts/control-plane.sh"
"$run_script" build

pid=""
out="$(mktemp)"
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true; rm -f "$out"; }
trap cleanup EXIT

start() { # start [args…]: runs the binary in the background, waits for KUBECONFIG=
  local t0 t1
  : > "$out"
  t0=$(date +%s%N)
  "$repo_root/test/control-plane/.bin/control-plane" --state-dir "$state_dir" "$@" > "$out" &
  pid=$!
  until [[ -s "$out" ]]; do
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: control-plane exited before it was ready" >&2; exit 1; }
    sleep 0.02
  done
  t1=$(date +%s%N)
  echo "stdout: $(cat "$out")"
  echo "start → KUBECONFIG= in $(( (t1 - t0) / 1000000 )) ms"
}

stop() {
  local t0 t1 rc=0
  t0=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  t1=$(date +%s%N)
  pid=""
  echo "SIGTERM → exit $rc in $(( (t1 - t0) / 1000000 )) ms"
  [[ $rc -eq 0 ]] || { echo "FAIL: exit code $rc" >&2; exit 1; }
}

api() { # api <identity> <method> <path> [json body]: prints "HTTP <code>" then the body
  local token
  token="$(jq -r --arg n "$1" '.[$n]' "$state_dir/tokens.json")"
  curl -sS --cacert "$state_dir/pki/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -X "$2" ${4:+-d "$4"} \
    -w '\nHTTP %{http_code}\n' "$(jq -r .url "$state_dir/server.json")$3"
}

expect() { # expect <code> <api args…>
  local want="$1" got
  shift
  got="$(api "$@" | tail -1)"
  echo "$1 $2 $3 → $got"
  [[ "$got" == "HTTP $want" ]] || { echo "FAIL: want HTTP $want" >&2; exit 1; }
}

leases=/apis/coordination.k8s.io/v1/namespaces/default/leases
start
port="$(jq -r .port "$state_dir/server.json")"
api admin GET /version | jq -c '{gitVersion, platform}' 2>/dev/null || true
expect 201 admin POST "$leases" '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"smoke"},"spec":{"holderIdentity":"alice","leaseDurationSeconds":15}}'
expect 403 nobody GET "$leases"
expect 403 alice GET "$leases"
expect 201 admin POST /apis/rbac.authorization.k8s.io/v1/namespaces/default/roles '{"metadata":{"name":"smoke-leases"},"rules":[{"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","list","watch","create","update","patch","delete"]}]}'
expect 201 admin POST /apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings '{"metadata":{"name":"smoke-leases"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"smoke-leases"},"subjects":[{"kind":"ServiceAccount","name":"alice","namespace":"default"}]}'
expect 200 alice GET "$leases/smoke"
echo "audit.log (user verb code):"
jq -r 'select(.stage == "ResponseComplete") | "  \(.user.username) \(.verb) \(.requestURI) \(.responseStatus.code)"' "$state_dir/audit.log"
rss_kb="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")"
echo "RSS: $((rss_kb / 1024)) MiB"
stop
[[ ! -e "$state_dir/server.json" ]] || { echo "FAIL: server.json left behind" >&2; exit 1; }

start --port "$port"
[[ "$(jq -r .port "$state_dir/server.json")" == "$port" ]] || { echo "FAIL: port changed" >&2; exit 1; }
api admin GET "$leases/smoke" | sed '$d' | jq -c '{name: .metadata.name, holder: .spec.holderIdentity, created: .metadata.creationTimestamp}'
expect 200 alice GET "$leases/smoke"
stop
echo "smoke test passed (state dir: $state_dir)"
