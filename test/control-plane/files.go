package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// writeFileAtomic writes via a temporary file and rename, so readers never see half a file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeJSONAtomic(path string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), perm)
}

// lockStateDir takes an exclusive lock on <state-dir>/lock for the life of the process, so a
// second server on the same state dir fails at once instead of hanging on etcd's own locks.
func lockStateDir(stateDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(stateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("state dir %s is in use by another control-plane process: %w", stateDir, err)
	}
	return f, nil
}

// lowestPickedPort is the bottom of the range freePort picks from (above the well-known and
// registered ports most services listen on).
const lowestPickedPort = 10000

// freePort picks a free TCP port on 127.0.0.1 below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), so no outgoing connection can be handed it between this check
// and the bind, nor while a restart keeps it: a chaos run's restart met exactly that ("start etcd:
// listen tcp 127.0.0.1:38273: bind: address already in use") when ports came from the ephemeral
// range. Only another program picking in the same range at the same moment could still take it.
// Falls back to a kernel-chosen port when the ephemeral range leaves no room below it.
func freePort() (int, error) {
	if low := ephemeralRangeStart(); low > lowestPickedPort+100 {
		for attempt := 0; attempt < 100; attempt++ {
			port := lowestPickedPort + rand.IntN(low-lowestPickedPort)
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				continue
			}
			l.Close()
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralRangeStart reads the first port of the kernel's ephemeral range (32768 when unreadable).
func ephemeralRangeStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}

// redirectOutput points file descriptors 1 and 2 at the log file, so everything kube-apiserver,
// etcd, gRPC and the Go runtime print lands there, and returns the original stdout and stderr.
func redirectOutput(logFile *os.File) (stdout, stderr *os.File, err error) {
	outFD, err := unix.Dup(1)
	if err != nil {
		return nil, nil, err
	}
	errFD, err := unix.Dup(2)
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(outFD)
	unix.CloseOnExec(errFD)
	if err := unix.Dup2(int(logFile.Fd()), 1); err != nil {
		return nil, nil, err
	}
	if err := unix.Dup2(int(logFile.Fd()), 2); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(outFD), "/dev/stdout"), os.NewFile(uintptr(errFD), "/dev/stderr"), nil
}
