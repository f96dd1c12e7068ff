package dedup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptAcrossInputForms: kept.jsonl is the same, byte for byte, whether
// the records come from a plain file (copied through mapped windows,
// corpus.CopyKept), a gzip file (through the reader's batches), with CRLF
// line ends, a byte-order mark and blank lines (neither copied), or cut
// into two files, with one worker or two, under the largest budget and the smallest: the same
// records kept, each once with a '\n'.
func TestKeptAcrossInputForms(t *testing.T) {
	src, err := os.ReadFile("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(src), "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	dir := t.TempDir()
	write := func(name, content string, gz bool) string { return writeInput(t, dir, name, []byte(content), gz) }
	plain := joinLines(lines, lineForm{})
	messy := joinLines(lines, lineForm{bom: true, crlfEvery: 3, blank: " \t\r\n", blankEvery: 97, blankAt: 5})
	forms := map[string][]string{
		"plain":     {write("plain.jsonl", plain, false)},
		"gzip":      {write("plain.jsonl.gz", plain, true)},
		"messy":     {write("messy.jsonl", messy, false)},
		"messy gz":  {write("messy.jsonl.gz", messy, true)},
		"two files": {write("a.jsonl", joinLines(lines[:400], lineForm{}), false), write("b.jsonl", strings.Join(lines[400:], "\n"), false)},
	}
	var want []byte
	for _, name := range []string{"plain", "gzip", "messy", "messy gz", "two files"} {
		for _, workers := range []int{1, 2} {
			for _, mem := range []int64{1 << 30, 16 << 20} {
				t.Run(fmt.Sprintf("%s/workers=%d/mem=%d", name, workers, mem), func(t *testing.T) {
					out := t.TempDir()
					rep, err := Run(context.Background(), forms[name], out, &Options{Memory: mem, Workers: workers})
					if err != nil {
						t.Fatal(err)
					}
					got, err := os.ReadFile(filepath.Join(out, KeptFile))
					if err != nil {
						t.Fatal(err)
					}
					if n := int64(bytes.Count(got, []byte{'\n'})); n != rep.Counts.Kept || n == 0 || n == int64(len(lines)) {
						t.Fatalf("kept.jsonl holds %d lines; report says %d kept of %d", n, rep.Counts.Kept, len(lines))
					}
					if want == nil {
						want = got
					} else if !bytes.Equal(got, want) {
						t.Fatalf("kept.jsonl (%d bytes) differs from the plain file's (%d bytes)", len(got), len(want))
					}
				})
			}
		}
	}
}
