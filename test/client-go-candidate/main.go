// client-go-candidate: one or more candidates of client-go's own leader election
// (k8s.io/client-go/tools/leaderelection with resourcelock.LeaseLock) on one Lease, so tests and
// benchmarks can run nest-leader side by side with the reference implementation.
//
// Every leadership event goes to stdout as one JSON line, stamped with CLOCK_MONOTONIC (the
// clock Node's process.hrtime reads, so events of different processes on one host compare):
//
//	{"event":"ready","identity":"go-1","monotonicMs":1234.5,"time":"…"}
//	{"event":"new-leader","identity":"go-1","leader":"ts-3",…}
//	{"event":"started","identity":"go-1",…}        OnStartedLeading: leader-only work may start
//	{"event":"stopping","identity":"go-1",…}       SIGTERM/SIGINT while leading: leader-only work ends now
//	{"event":"stopped","identity":"go-1",…}        OnStoppedLeading after a term (after the release)
//	{"event":"exit","identity":"go-1","reason":"signal"|"lost",…}
//
// SIGTERM or SIGINT cancels the election's context: with --release-on-cancel (default) the
// leader clears holderIdentity before Run returns, as client-go's ReleaseOnCancel. A candidate
// whose Run returns without a signal lost its Lease; like kube-controller-manager it exits (1).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

type options struct {
	kubeconfig      string
	leaseName       string
	namespace       string
	identity        string
	candidates      int
	leaseDuration   time.Duration
	renewDeadline   time.Duration
	retryPeriod     time.Duration
	releaseOnCancel bool
	qps             float64
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("client-go-candidate", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the identity to authenticate as (default $KUBECONFIG)")
	fs.StringVar(&o.leaseName, "lease-name", "", "name of the Lease (required)")
	fs.StringVar(&o.namespace, "namespace", "default", "namespace of the Lease")
	fs.StringVar(&o.identity, "identity", "", "holderIdentity of this candidate (required); with --candidates N > 1, candidates are <identity>-1 … <identity>-N")
	fs.IntVar(&o.candidates, "candidates", 1, "how many independent candidates this process runs (each with its own client and LeaderElector)")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 15*time.Second, "LeaderElectionConfig.LeaseDuration")
	fs.DurationVar(&o.renewDeadline, "renew-deadline", 10*time.Second, "LeaderElectionConfig.RenewDeadline")
	fs.DurationVar(&o.retryPeriod, "retry-period", 2*time.Second, "LeaderElectionConfig.RetryPeriod")
	fs.BoolVar(&o.releaseOnCancel, "release-on-cancel", true, "LeaderElectionConfig.ReleaseOnCancel: clear the holder on SIGTERM/SIGINT")
	fs.Float64Var(&o.qps, "qps", 50, "client-side rate limit per candidate (requests/s; client-go's default of 5 would throttle nothing here, but many candidates share a process)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.leaseName == "":
		return o, fmt.Errorf("--lease-name is required")
	case o.identity == "":
		return o, fmt.Errorf("--identity is required")
	case o.kubeconfig == "":
		return o, fmt.Errorf("--kubeconfig (or $KUBECONFIG) is required")
	case o.candidates < 1:
		return o, fmt.Errorf("--candidates must be at least 1, got %d", o.candidates)
	}
	return o, nil
}

// event is one JSON line on stdout.
type event struct {
	Event       string  `json:"event"`
	Identity    string  `json:"identity"`
	Leader      string  `json:"leader,omitempty"`
	Reason      string  `json:"reason,omitempty"`
	MonotonicMs float64 `json:"monotonicMs"`
	Time        string  `json:"time"`
}

var stdout = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(e event) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err == nil {
		e.MonotonicMs = float64(ts.Nano()) / 1e6
	}
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	stdout.Lock()
	defer stdout.Unlock()
	_ = stdout.enc.Encode(e)
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "client-go-candidate:", err)
		os.Exit(2)
	}
	os.Exit(run(o))
}

func run(o options) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client-go-candidate: kubeconfig:", err)
		return 2
	}
	config.QPS = float32(o.qps)
	config.Burst = int(2 * o.qps)

	var wg sync.WaitGroup
	lost := make(chan struct{}, o.candidates)
	candidates := make([]*candidate, 0, o.candidates)
	for i := 1; i <= o.candidates; i++ {
		identity := o.identity
		if o.candidates > 1 {
			identity = fmt.Sprintf("%s-%d", o.identity, i)
		}
		c, err := newCandidate(o, config, identity)
		if err != nil {
			fmt.Fprintln(os.Stderr, "client-go-candidate:", err)
			return 2
		}
		candidates = append(candidates, c)
	}
	for _, c := range candidates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emit(event{Event: "ready", Identity: c.identity})
			c.elector.Run(ctx)
			if ctx.Err() == nil {
				lost <- struct{}{}
			}
		}()
	}

	reason := "signal"
	select {
	case <-signals:
		// The leader-only work of this program ends here, before the context (and so the
		// release) is cancelled: as ReleaseOnCancel requires.
		for _, c := range candidates {
			if c.isLeading() {
				emit(event{Event: "stopping", Identity: c.identity})
			}
		}
	case <-lost:
		reason = "lost"
	}
	cancel()
	wg.Wait()
	for _, c := range candidates {
		emit(event{Event: "exit", Identity: c.identity, Reason: reason})
	}
	if reason == "lost" {
		return 1
	}
	return 0
}

type candidate struct {
	identity string
	elector  *leaderelection.LeaderElector
	mu       sync.Mutex
	leading  bool
}

func (c *candidate) isLeading() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading
}

func newCandidate(o options, config *rest.Config, identity string) (*candidate, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", identity, err)
	}
	c := &candidate{identity: identity}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: o.leaseName, Namespace: o.namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	c.elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.leaseDuration,
		RenewDeadline:   o.renewDeadline,
		RetryPeriod:     o.retryPeriod,
		ReleaseOnCancel: o.releaseOnCancel,
		Name:            o.leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				c.setLeading(true)
				emit(event{Event: "started", Identity: identity})
			},
			OnStoppedLeading: func() {
				// Also called when Run returns without ever leading: report terms only.
				if c.setLeading(false) {
					emit(event{Event: "stopped", Identity: identity})
				}
			},
			OnNewLeader: func(leader string) {
				emit(event{Event: "new-leader", Identity: identity, Leader: leader})
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", identity, err)
	}
	return c, nil
}

// setLeading records the state and reports whether it was leading before.
func (c *candidate) setLeading(leading bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.leading
	c.leading = leading
	return was
}
