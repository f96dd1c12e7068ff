//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fsizeChild is the environment variable that makes this test binary run
// one neardup command under a file size limit (RLIMIT_FSIZE) instead of the
// tests: writes past the limit fail with EFBIG, as on a full disk.
const fsizeChild = "NEARDUP_TEST_FSIZE_CHILD"

func init() {
	limit := os.Getenv(fsizeChild)
	if limit == "" {
		return
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		panic(err)
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		panic(err)
	}
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		panic(err)
	}
	// Go ignores SIGXFSZ unless notified, so the write returns EFBIG.
	args := strings.Split(os.Getenv(fsizeChild+"_ARGS"), "\n")
	os.Exit(Main(context.Background(), args, IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}

// TestWriteErrorLeavesNoFile runs sign and eval truth with writes failing
// past a size limit: the command fails (exit 1) and leaves neither the output
// nor a temporary file.
func TestWriteErrorLeavesNoFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary as a child process")
	}
	dir := t.TempDir()
	in := writeJSONL(t, dir, 20000, nil) // 11 MB of signatures, 10,000 pairs
	for _, c := range []struct {
		name  string
		limit int
		args  []string
	}{
		{"sign", 1 << 20, []string{"sign", "-q", "--workers", "2"}},
		{"eval truth", 64 << 10, []string{"eval", "truth", "--threshold", "0.3", "--workers", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out")
			args := append(c.args, "-o", out, in)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fsizeChild+"="+strconv.Itoa(c.limit), fsizeChild+"_ARGS="+strings.Join(args, "\n"))
			stderr, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitFailure || !strings.Contains(string(stderr), "file too large") {
				t.Fatalf("got %v, output %q; want exit 1 with a \"file too large\" error", err, stderr)
			}
			onlyFiles(t, outDir)
		})
	}
}

// TestDedupFullDiskLeavesNoOutput runs dedup with writes failing past a
// size limit that pairs.tsv and clusters.jsonl stay under and kept.jsonl
// does not, as on a disk that fills while kept.jsonl is written: the run
// fails (exit 1) and leaves no output, neither the complete ones nor a
// truncated kept.jsonl, and no temporary file (before, a truncated
// kept.jsonl beside complete pairs.tsv and clusters.jsonl).
func TestDedupFullDiskLeavesNoOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary as a child process")
	}
	in := writeJSONL(t, t.TempDir(), 20000, nil) // kept.jsonl 960 KiB, clusters.jsonl 690 KiB, pairs.tsv 300 KiB
	outDir := t.TempDir()
	args := []string{"dedup", "-q", "--workers", "2", "--threshold", "0.5", "-o", outDir, in}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fsizeChild+"="+strconv.Itoa(800<<10), fsizeChild+"_ARGS="+strings.Join(args, "\n"))
	stderr, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitFailure || !strings.Contains(string(stderr), "kept.jsonl") || !strings.Contains(string(stderr), "file too large") {
		t.Fatalf("got %v, output %q; want exit 1 with a \"file too large\" error writing kept.jsonl", err, stderr)
	}
	onlyFiles(t, outDir)

	// The same run without the limit writes every output.
	if code, _, stderr := runCLI(t, "", args...); code != ExitOK {
		t.Fatalf("without the limit: exit %d: %s", code, stderr)
	}
	onlyFiles(t, outDir, "clusters.jsonl", "kept.jsonl", "pairs.tsv", "report.html", "report.json")
}
