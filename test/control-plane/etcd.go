package main

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// prepareEtcd creates dataDir and picks free 127.0.0.1 ports for etcd's client and peer URLs
// (shared by the embedded etcd and an etcd binary).
func prepareEtcd(dataDir string) (clientURL, peerURL url.URL, err error) {
	if err = os.MkdirAll(dataDir, 0o700); err != nil {
		return
	}
	clientPort, err := freePort()
	if err != nil {
		return
	}
	peerPort, err := freePort()
	if err != nil {
		return
	}
	clientURL = url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(clientPort)}
	peerURL = url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(peerPort)}
	return
}

// startEtcd runs a single-member etcd in this process, with its data in dataDir and its client
// and peer listeners on free 127.0.0.1 ports. It returns the running server and its client URL.
func startEtcd(dataDir, logFile string) (*embed.Etcd, string, error) {
	clientURL, peerURL, err := prepareEtcd(dataDir)
	if err != nil {
		return nil, "", err
	}

	cfg := embed.NewConfig()
	cfg.Name = "control-plane"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Writes still reach the kernel before etcd acknowledges them, so they survive the process
	// exiting or being killed; only a machine crash could lose them. Skipping fsync keeps Lease
	// updates fast on slow disks.
	cfg.UnsafeNoFsync = true
	// A lone member on loopback can elect itself quickly: after a restart it waits for an
	// election timeout before it serves, 1s with the defaults.
	cfg.TickMs = 20
	cfg.ElectionMs = 200
	// Left at zero, etcd logs every request as expensive.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logFile}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("etcd did not become ready in 60s")
	}
	return e, clientURL.String(), nil
}
