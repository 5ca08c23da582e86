package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"

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

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another process may take it
// before we bind it; that is unlikely enough for tests.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
