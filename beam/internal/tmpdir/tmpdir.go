// Package tmpdir gives a process a temporary directory of its own, so that
// what Beam leaves in the temporary directory goes away at exit.
//
// Beam's universal runner, which Prism runs through, creates an empty
// placeholder file named beamloopbackworker-* in os.TempDir for every
// pipeline it runs in loopback mode (Prism's default) and never removes it
// (sdks/go/pkg/beam/runners/universal/runnerlib/execute.go, v2.77.0; see
// apache/beam#27569). The Beam job runs at least two pipelines, and a test
// package dozens. The file's name is not returned, so it cannot be removed
// afterwards; pointing TMPDIR at a private directory can.
package tmpdir

import (
	"fmt"
	"os"
)

// Private creates a directory under os.TempDir, points TMPDIR at it (so
// os.TempDir, and Beam, use it) and returns a function that removes it with
// everything in it and restores TMPDIR. Call it at the start of main or
// TestMain, before any goroutine reads TMPDIR, and call the function before
// os.Exit. On Windows, whose os.TempDir reads TMP and TEMP, it only creates
// and removes the directory.
func Private(prefix string) (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("tmpdir: %w", err)
	}
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("tmpdir: %w", err)
	}
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}, nil
}
