package job

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestWriteOutputFailureLeavesNothing: a local output whose writing fails
// (after more than a buffer's worth reached the file) leaves no file under
// its name and no temporary file (before, os.Create left the part written);
// one that succeeds appears whole.
func TestWriteOutputFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	errWrite := errors.New("injected")
	line := bytes.Repeat([]byte("x"), 1<<10)
	err := writeOutput(ctx, dir, "pairs.tsv", func(w *bufio.Writer) error {
		for range 3 << 10 { // 3 MiB: the 1 MiB buffer is flushed twice
			w.Write(line)
		}
		return errWrite
	})
	if !errors.Is(err, errWrite) {
		t.Fatalf("err = %v; want the injected error", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed write left %d files (%s)", len(ents), ents[0].Name())
	}
	if err := writeOutput(ctx, dir, "pairs.tsv", func(w *bufio.Writer) error {
		_, err := w.Write(line)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "pairs.tsv" {
		t.Fatalf("directory holds %v; want pairs.tsv only", ents)
	}
	if b, _ := os.ReadFile(dir + "/pairs.tsv"); !bytes.Equal(b, line) {
		t.Errorf("pairs.tsv holds %d bytes; want %d", len(b), len(line))
	}
}
