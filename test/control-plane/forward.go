package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// runForward is `control-plane netns-forward --netns /run/netns/<name> --port N`: it listens on
// 127.0.0.1:N in its own network namespace and joins each connection to 127.0.0.1:N inside the
// named one. scripts/cluster.sh runs the API server in the node's namespace and this on the
// host, so the host reaches it on loopback at the port its kubeconfig names, and test traffic
// never leaves loopback and the namespace the project created.
func runForward(args []string) int {
	fs := flag.NewFlagSet("netns-forward", flag.ContinueOnError)
	netns := fs.String("netns", "", "network namespace file, e.g. /run/netns/<name> (required)")
	port := fs.Int("port", 0, "port on 127.0.0.1, the same on both sides (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *netns == "" || *port <= 0 || *port > 65535 {
		fmt.Fprintln(os.Stderr, "netns-forward: --netns and --port are required")
		return 2
	}
	target := fmt.Sprintf("127.0.0.1:%d", *port)
	listener, err := net.Listen("tcp", target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns-forward:", err)
		return 1
	}
	for {
		client, err := listener.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "netns-forward:", err)
			return 1
		}
		go func() {
			defer client.Close()
			server, err := dialInNetns(*netns, target)
			if err != nil {
				fmt.Fprintln(os.Stderr, "netns-forward:", err)
				return
			}
			defer server.Close()
			splice(client, server)
		}()
	}
}

// dialInNetns connects from inside the network namespace at path: the socket belongs to the
// namespace its thread was in when it was created, so the dial runs on a thread locked and
// moved there; the thread is discarded afterwards (it exits with the goroutine).
func dialInNetns(path, address string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the Go runtime ends this thread with the goroutine
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("setns %s: %w", path, err)}
			return
		}
		conn, err := net.Dial("tcp", address)
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
	}
	wg.Add(2)
	go copyHalf(a, b)
	go copyHalf(b, a)
	wg.Wait()
}
