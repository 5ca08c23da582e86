// Command control-plane runs a real kube-apiserver and an embedded etcd in one process, for
// integration tests: TLS on 127.0.0.1, static bearer tokens for an admin and named
// identities, RBAC, and an audit log of coordination.k8s.io requests. Everything it generates
// lives in --state-dir and is reused on the next start, so data, certificates and tokens
// survive restarts. When the server is ready it prints one line, KUBECONFIG=<path>, on stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

type options struct {
	StateDir        string
	Port            int
	Identities      []string
	Verbosity       int
	StartTimeout    time.Duration
	ShutdownTimeout time.Duration
	APIServerArgs   []string
	APIServerBinary string
	EtcdBinary      string
	AdvertiseAddr   string

	parsedIdentities []identity
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("control-plane", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: control-plane [flags] [-- extra kube-apiserver flags]\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.StateDir, "state-dir", "./.state", "directory for etcd data, certificates, tokens, kubeconfigs and logs; reused when it exists")
	fs.IntVar(&o.Port, "port", 0, "kube-apiserver port on 127.0.0.1 (0: a free port)")
	fs.Var((*stringList)(&o.Identities), "identity", "name=user, repeatable (default: alice, bob, carol, dave, nobody as system:serviceaccount:default:<name>)")
	fs.IntVar(&o.Verbosity, "v", 1, "kube-apiserver log verbosity (its log goes to <state-dir>/apiserver.log)")
	fs.DurationVar(&o.StartTimeout, "start-timeout", 2*time.Minute, "how long to wait for /readyz")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long to wait for kube-apiserver to stop before closing etcd anyway")
	fs.StringVar(&o.APIServerBinary, "kube-apiserver-binary", "", "run this kube-apiserver executable (e.g. $KUBEBUILDER_ASSETS/kube-apiserver) as a child process instead of the built-in one")
	fs.StringVar(&o.EtcdBinary, "etcd-binary", "", "run this etcd executable (e.g. $KUBEBUILDER_ASSETS/etcd) as a child process instead of the embedded one")
	fs.StringVar(&o.AdvertiseAddr, "advertise-address", loopback, "address kube-apiserver advertises as the kubernetes Service's endpoint; anything but 127.0.0.1 also makes it listen on every address of its network namespace (scripts/cluster.sh runs it inside the node's)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.APIServerArgs = fs.Args()
	if net.ParseIP(o.AdvertiseAddr).To4() == nil {
		return o, fmt.Errorf("--advertise-address %q is not an IPv4 address", o.AdvertiseAddr)
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("--port %d out of range", o.Port)
	}
	ids, err := parseIdentities(o.Identities)
	o.parsedIdentities = ids
	return o, err
}

func main() {
	runComponent(os.Args[1:])
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "control-plane:", err)
		os.Exit(2)
	}
	os.Exit(run(o))
}

// logger writes control-plane's own messages to the terminal's stderr and the log file.
type logger struct{ w io.Writer }

func (l logger) Printf(format string, args ...any) {
	fmt.Fprintf(l.w, "control-plane: "+format+"\n", args...)
}

func run(o options) int {
	started := time.Now()
	// stop is closed at the first SIGINT or SIGTERM. kube-apiserver installs its own handler
	// too: it starts a graceful shutdown at the first signal and exits 1 at the second.
	var stopping atomic.Bool
	stop := make(chan struct{})
	notified := make(chan os.Signal, 2)
	signal.Notify(notified, syscall.SIGINT, syscall.SIGTERM)
	log := logger{os.Stderr}

	stateDir, err := filepath.Abs(o.StateDir)
	if err == nil {
		err = os.MkdirAll(stateDir, 0o700)
	}
	if err != nil {
		log.Printf("state dir: %v", err)
		return 1
	}
	lock, err := lockStateDir(stateDir)
	if err != nil {
		log.Printf("%v", err)
		return 1
	}
	defer lock.Close()

	logPath := filepath.Join(stateDir, "apiserver.log")
	_ = os.Rename(logPath, filepath.Join(stateDir, "apiserver.previous.log"))
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Printf("log file: %v", err)
		return 1
	}
	stdout, stderr, err := redirectOutput(logFile)
	if err != nil {
		log.Printf("redirect output to %s: %v", logPath, err)
		return 1
	}
	log = logger{io.MultiWriter(stderr, logFile)}
	go func() {
		for sig := range notified {
			if !stopping.Swap(true) {
				log.Printf("%s: stopping", sig)
				close(stop)
			}
		}
	}()
	fail := func(format string, args ...any) int {
		log.Printf(format, args...)
		log.Printf("kube-apiserver and etcd logs: %s", logPath)
		return 1
	}

	// Stale until this run is ready; removed again on a clean stop.
	serverJSON := filepath.Join(stateDir, "server.json")
	_ = os.Remove(serverJSON)

	pki, err := ensurePKI(stateDir, o.AdvertiseAddr)
	if err != nil {
		return fail("%v", err)
	}
	ids := o.parsedIdentities
	tokens, err := ensureTokens(filepath.Join(stateDir, "tokens.json"), append([]identity{adminIdentity()}, ids...))
	if err != nil {
		return fail("tokens: %v", err)
	}
	tokenAuthFile := filepath.Join(stateDir, "token-auth.csv")
	if err := writeTokenAuthFile(tokenAuthFile, append([]identity{adminIdentity()}, ids...), tokens); err != nil {
		return fail("token auth file: %v", err)
	}
	port := o.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return fail("free port: %v", err)
		}
	}
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", port)
	kubeconfig, err := writeKubeconfigs(stateDir, serverURL, pki.CACert, ids, tokens)
	if err != nil {
		return fail("kubeconfig: %v", err)
	}

	stopEtcd, etcdURL, err := startEtcdFor(o, log, filepath.Join(stateDir, "etcd"), logFile)
	if err != nil {
		return fail("%v", err)
	}
	var closeOnce sync.Once
	closeEtcd := func() {
		closeOnce.Do(func() {
			t := time.Now()
			stopEtcd()
			log.Printf("etcd stopped in %s", time.Since(t).Round(time.Millisecond))
		})
	}
	log.Printf("etcd ready at %s after %s", etcdURL, time.Since(started).Round(time.Millisecond))
	// kube-apiserver calls klog.Fatal when a post-start hook fails, which is what a stop during
	// startup looks like to it. Close etcd first, and make a requested stop exit 0 anyway.
	var exitOnce sync.Once
	klog.OsExit = func(code int) {
		exitOnce.Do(func() { // a concurrent second caller blocks here until the exit
			log.Printf("kube-apiserver exited with status %d", code)
			closeEtcd()
			if stopping.Load() {
				code = 0
			}
			os.Exit(code)
		})
	}
	select {
	case <-stop:
		closeEtcd()
		return 0
	default:
	}

	auditLog := filepath.Join(stateDir, "audit.log")
	args, err := apiserverArgs(apiserverConfig{
		StateDir: stateDir, Port: port, EtcdURL: etcdURL, PKI: pki, TokenAuthFile: tokenAuthFile,
		AuditLog: auditLog, Verbosity: o.Verbosity, AdvertiseAddress: o.AdvertiseAddr, ExtraArgs: o.APIServerArgs,
	})
	if err != nil {
		closeEtcd()
		return fail("%v", err)
	}
	apiserver, err := startAPIServerFor(o, log, args, logFile, stop)
	if err != nil {
		closeEtcd()
		return fail("%v", err)
	}

	readyCtx, cancelReady := context.WithTimeoutCause(context.Background(), o.StartTimeout, fmt.Errorf("not ready after %s", o.StartTimeout))
	go func() {
		select {
		case <-stop:
			cancelReady()
		case <-readyCtx.Done():
		}
	}()
	err = waitReady(readyCtx, serverURL, pki.CACert, tokens[adminName], apiserver)
	stopped := readyCtx.Err() != nil && context.Cause(readyCtx) == context.Canceled
	cancelReady()
	if err != nil {
		if stopped {
			log.Printf("stopped during startup")
			waitExit(log, apiserver, o.ShutdownTimeout)
			closeEtcd()
			return 0
		}
		closeEtcd()
		return fail("%v", err)
	}

	if err := writeJSONAtomic(serverJSON, map[string]any{
		"url":        serverURL,
		"port":       port,
		"kubeconfig": kubeconfig,
		"auditLog":   auditLog,
		"pid":        os.Getpid(),
		"caFile":     pki.CACert,
		"tokensFile": filepath.Join(stateDir, "tokens.json"),
		"logFile":    logPath,
		"stateDir":   stateDir,
	}, 0o644); err != nil {
		closeEtcd()
		return fail("server.json: %v", err)
	}
	log.Printf("kube-apiserver ready at %s after %s", serverURL, time.Since(started).Round(time.Millisecond))
	fmt.Fprintf(stdout, "KUBECONFIG=%s\n", kubeconfig)

	select {
	case <-stop:
		t := time.Now()
		waitExit(log, apiserver, o.ShutdownTimeout)
		log.Printf("kube-apiserver stopped in %s", time.Since(t).Round(time.Millisecond))
		closeEtcd()
		_ = os.Remove(serverJSON)
		return 0
	case <-apiserver.done:
		closeEtcd()
		_ = os.Remove(serverJSON)
		return fail("kube-apiserver exited: %v", apiserver.err)
	}
}

func waitExit(log logger, apiserver *apiserverRun, timeout time.Duration) {
	select {
	case <-apiserver.done:
		if apiserver.err != nil {
			log.Printf("kube-apiserver: %v", apiserver.err)
		}
	case <-time.After(timeout):
		log.Printf("kube-apiserver did not stop within %s; closing etcd anyway", timeout)
	}
}
