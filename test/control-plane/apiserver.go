package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// auditPolicy records coordination.k8s.io requests (Leases) at Metadata level and nothing else,
// leaving out kube-apiserver's own loopback traffic (its identity Lease in kube-system).
// RequestReceived is omitted so each request yields one ResponseComplete event (watches also
// yield a ResponseStarted event).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:apiserver"]
- level: Metadata
  resources:
  - group: coordination.k8s.io
- level: None
`

type apiserverConfig struct {
	StateDir      string
	Port          int
	EtcdURL       string
	PKI           pki
	TokenAuthFile string
	AuditLog      string
	Verbosity     int
	// AdvertiseAddress is 127.0.0.1 for the tests that need no node. A node's pods reach the
	// API server through the kubernetes Service, whose endpoint must be an address they can
	// route to: scripts/cluster.sh gives an address inside the node's network namespace.
	AdvertiseAddress string
	ExtraArgs        []string
}

func apiserverArgs(c apiserverConfig) ([]string, error) {
	policy := filepath.Join(c.StateDir, "audit-policy.yaml")
	if err := writeFileAtomic(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	args := []string{
		"--etcd-servers=" + c.EtcdURL,
		"--bind-address=" + bindAddress(c.AdvertiseAddress),
		"--advertise-address=" + c.AdvertiseAddress,
		"--secure-port=" + strconv.Itoa(c.Port),
		"--cert-dir=" + filepath.Join(c.StateDir, "pki", "generated"),
		"--tls-cert-file=" + c.PKI.ServingCert,
		"--tls-private-key-file=" + c.PKI.ServingKey,
		"--client-ca-file=" + c.PKI.CACert,
		"--token-auth-file=" + c.TokenAuthFile,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.PKI.ServiceAccountPubKey,
		"--service-account-signing-key-file=" + c.PKI.ServiceAccountKey,
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + c.AuditLog,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--profiling=false",
		// Close open watches when shutting down (as k0s and OpenShift configure it): without
		// it a single watch holds the HTTP server's shutdown until its 30 s timeout, so every
		// restart of this control plane under watching clients took 30 s instead of 1–2 s.
		"--shutdown-watch-termination-grace-period=2s",
		"--v=" + strconv.Itoa(c.Verbosity),
	}
	if c.AdvertiseAddress == loopback {
		// No Endpoints for the "kubernetes" Service: a loopback advertise address is not a
		// valid endpoint, and without a node nothing routes Service traffic anyway.
		args = append(args, "--endpoint-reconciler-type=none")
	} else {
		// The node's name resolves nowhere (no DNS inside its namespace): reach the kubelet
		// (logs, exec, the pod proxy) at its InternalIP.
		args = append(args, "--kubelet-preferred-address-types=InternalIP")
	}
	return append(args, c.ExtraArgs...), nil
}

const loopback = "127.0.0.1"

// bindAddress listens on loopback only, unless a node's pods must reach the advertised address.
func bindAddress(advertise string) string {
	if advertise == loopback {
		return loopback
	}
	return "0.0.0.0"
}

// runAPIServer runs kube-apiserver's own cobra command in this process. It installs its own
// SIGINT/SIGTERM handler: the first signal starts a graceful shutdown and Execute returns
// when it is done; a second signal exits the process with status 1.
func runAPIServer(args []string, out io.Writer) *apiserverRun {
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	run := &apiserverRun{done: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.err = cmd.Execute()
	}()
	return run
}

// apiserverRun is a kube-apiserver command running in a goroutine: done is closed when it
// returns, and err is its result after that.
type apiserverRun struct {
	done chan struct{}
	err  error
}

// waitReady polls /readyz with the admin token until it answers 200, the server exits, or
// the context ends.
func waitReady(ctx context.Context, serverURL, caFile, token string, apiserver *apiserverRun) error {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	defer client.CloseIdleConnections()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL+"/readyz", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-apiserver.done:
			return fmt.Errorf("kube-apiserver exited before it was ready: %v", apiserver.err)
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready (%v); last /readyz: %s", context.Cause(ctx), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
