//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fsizeChild makes this test binary run gencorpus under a 256 KiB file size
// limit (RLIMIT_FSIZE), writing to the file the variable names: writes past
// the limit fail with EFBIG, as on a full disk.
const fsizeChild = "GENCORPUS_TEST_FSIZE_CHILD"

func init() {
	out := os.Getenv(fsizeChild)
	if out == "" {
		return
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		panic(err)
	}
	rl.Cur = 256 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		panic(err)
	}
	os.Args = []string{"gencorpus", "-source", "../../../testdata/articles_1000.jsonl", "-docs", "5000", "-o", out}
	main() // exits 1 on error
	os.Exit(0)
}

// TestWriteErrorLeavesNoFile: gencorpus -o F failing to write part way
// leaves neither F (before: a 256 KiB F of whole-looking lines) nor a
// temporary file.
func TestWriteErrorLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fsizeChild+"="+filepath.Join(dir, "c.jsonl"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "file too large") {
		t.Fatalf("got %v, output %q; want exit 1 with a \"file too large\" error", err, out)
	}
	onlyFiles(t, dir)
}
