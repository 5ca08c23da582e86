// Command pause is the sandbox ("pause") container of the test node: it holds a pod's
// namespaces open, reaps the zombies it inherits as PID 1, and exits 0 on SIGINT or SIGTERM.
// Built static (CGO_ENABLED=0) into an image of one file by scripts/images.sh, because no
// image registry is reachable to pull the usual one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
