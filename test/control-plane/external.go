package main

// External binaries (--etcd-binary, --kube-apiserver-binary), e.g. the kube-apiserver and etcd
// of an envtest asset directory ($KUBEBUILDER_ASSETS). Everything else stays the same: this
// process still generates the PKI, tokens, kubeconfigs and kube-apiserver's argument list, and
// the children write to the same log file.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// startEtcdFor starts etcd with its data in dataDir: the --etcd-binary executable as a child
// process if set, otherwise embedded in this process. stopEtcd stops it and waits.
func startEtcdFor(o options, log logger, dataDir string, logFile *os.File) (stopEtcd func(), clientURL string, err error) {
	if o.EtcdBinary == "" {
		e, u, err := startEtcd(dataDir, logFile.Name())
		if err != nil {
			return nil, "", err
		}
		return e.Close, u, nil
	}
	return startEtcdBinary(o.EtcdBinary, log, dataDir, logFile, o.ShutdownTimeout)
}

// startAPIServerFor runs kube-apiserver with args: the --kube-apiserver-binary executable as a
// child process if set (sent SIGTERM when stop closes), otherwise in this process.
func startAPIServerFor(o options, log logger, args []string, logFile *os.File, stop <-chan struct{}) (*apiserverRun, error) {
	if o.APIServerBinary == "" {
		return runAPIServer(args, logFile), nil
	}
	cmd := childCommand(o.APIServerBinary, args, logFile)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.APIServerBinary, err)
	}
	log.Printf("kube-apiserver: %s, pid %d", o.APIServerBinary, cmd.Process.Pid)
	run := &apiserverRun{done: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.err = cmd.Wait()
	}()
	go func() {
		select {
		case <-stop:
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case <-run.done:
		}
	}()
	return run, nil
}

// childCommand runs binary with its output in the log file, in its own process group (a
// Ctrl-C in a terminal reaches only this process, which forwards one SIGTERM), and killed if
// this process dies without stopping it.
func childCommand(binary string, args []string, logFile *os.File) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// startEtcdBinary runs the etcd executable with the embedded etcd's settings and waits until
// its /health answers 200.
func startEtcdBinary(binary string, log logger, dataDir string, logFile *os.File, stopTimeout time.Duration) (func(), string, error) {
	client, peer, err := prepareEtcd(dataDir)
	if err != nil {
		return nil, "", err
	}
	clientURL, peerURL := client.String(), peer.String()
	const name = "control-plane"
	cmd := childCommand(binary, []string{
		"--name=" + name,
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + name + "=" + peerURL,
		"--unsafe-no-fsync",       // see startEtcd
		"--heartbeat-interval=20", // TickMs
		"--election-timeout=200",  // ElectionMs
		"--log-level=warn",
	}, logFile)
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", binary, err)
	}
	log.Printf("etcd: %s, pid %d", binary, cmd.Process.Pid)
	done := make(chan struct{})
	var waitErr error
	var stopping atomic.Bool
	go func() {
		defer close(done)
		waitErr = cmd.Wait()
		if !stopping.Load() {
			log.Printf("etcd (%s) exited: %v", binary, waitErr)
		}
	}()
	stop := func() {
		stopping.Store(true)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(stopTimeout):
			log.Printf("etcd did not stop within %s; killing it", stopTimeout)
			_ = cmd.Process.Kill()
			<-done
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitHealthy(ctx, clientURL+"/health", done); err != nil {
		stop()
		return nil, "", fmt.Errorf("etcd (%s): %w", binary, err)
	}
	return stop, clientURL, nil
}

// waitHealthy polls url until it answers 200, the process exits (done) or ctx ends.
func waitHealthy(ctx context.Context, healthURL string, done <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	var last string
	for {
		resp, err := client.Get(healthURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
			if uerr, ok := err.(*url.Error); ok {
				last = uerr.Err.Error()
			}
		}
		select {
		case <-done:
			return fmt.Errorf("exited before it was healthy")
		case <-ctx.Done():
			return fmt.Errorf("not healthy after 60s; last %s: %s", healthURL, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
