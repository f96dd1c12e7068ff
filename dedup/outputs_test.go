package dedup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/corpus"
)

var errInjected = errors.New("injected write error")

// failAfter passes n bytes to w and fails every write after them.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// dirFiles returns the names in dir and their contents.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = data
	}
	return m
}

// TestWriteErrorLeavesNoOutput: a write error in any one output (after part
// of it reached the disk) fails the run and leaves none of the outputs and
// no temporary file: an empty directory stays empty, and the outputs of an
// earlier run stay as they were.
func TestWriteErrorLeavesNoOutput(t *testing.T) {
	in := []string{"../testdata/articles_1000.jsonl"}
	ctx := context.Background()
	// The list of bad records (only its header here) is an output too.
	opts := func(out string) *Options {
		return &Options{Corpus: corpus.Options{SkipBad: true}, BadOut: filepath.Join(out, "bad.tsv")}
	}
	earlier := t.TempDir()
	if _, err := Run(ctx, in, earlier, opts(earlier)); err != nil {
		t.Fatal(err)
	}
	want := dirFiles(t, earlier)
	names := []string{PairsFile, ClustersFile, KeptFile, ReportFile, HTMLFile, "bad.tsv"}
	for _, name := range names {
		if len(want[name]) < 20 {
			t.Fatalf("%s holds %d bytes; the test wants 20 or more", name, len(want[name]))
		}
	}
	for _, name := range names {
		for _, prior := range []bool{false, true} {
			out := t.TempDir()
			if prior {
				out = earlier
			}
			wrap := func(path string, w io.Writer) io.Writer {
				if filepath.Base(path) == name {
					return &failAfter{w: w, n: len(want[name]) / 2}
				}
				return w
			}
			_, err := runJob(ctx, in, out, opts(out), wrap)
			if !errors.Is(err, errInjected) {
				t.Fatalf("%s failing: err = %v; want the injected error", name, err)
			}
			got := dirFiles(t, out)
			if !prior && len(got) != 0 {
				t.Errorf("%s failing: the output directory holds %q; want nothing", name, keys(got))
			}
			if prior {
				if !slices.Equal(keys(got), keys(want)) {
					t.Errorf("%s failing over an earlier run: the directory holds %q; want %q", name, keys(got), keys(want))
				}
				for n, data := range want {
					if !bytes.Equal(got[n], data) {
						t.Errorf("%s failing over an earlier run: %s changed", name, n)
					}
				}
			}
		}
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}
