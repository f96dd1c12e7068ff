package dedup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestOutputsSync: sync flushes the named outputs ahead of the commit (an
// error names the file), leaves the others alone, and the commit still
// gives every file its final name.
func TestOutputsSync(t *testing.T) {
	dir := t.TempDir()
	var o outputs
	defer o.abort()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		w, err := o.create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.sync(a, filepath.Join(dir, "not an output")); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if err := o.sync(); err != nil {
		t.Fatalf("sync of nothing: %v", err)
	}
	if err := o.commit(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} {
		if got, err := os.ReadFile(p); err != nil || string(got) != p {
			t.Errorf("%s after the commit: %q, %v; want %q", p, got, err, p)
		}
	}
	// A file that cannot be synced (closed under the outputs) is an error
	// naming it.
	var bad outputs
	defer bad.abort()
	c := filepath.Join(dir, "c")
	if _, err := bad.create(c); err != nil {
		t.Fatal(err)
	}
	bad.files[0].File.Close()
	if err := bad.sync(c); err == nil || !strings.Contains(err.Error(), c) {
		t.Fatalf("sync of a closed file: %v; want an error naming %s", err, c)
	}
}

// TestRunFreesMemoryOnce: the write stage returns the run's memory to the
// system once, after pairs.tsv and clusters.jsonl are complete (so that the
// process's exit has not to tear it down), and a run that fails before the
// write stage does not.
func TestRunFreesMemoryOnce(t *testing.T) {
	var calls int
	var pairsDone bool
	out := t.TempDir()
	old := freeOSMemory
	freeOSMemory = func() {
		calls++
		// Written (under their temporary names) and synced by now.
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "."+PairsFile) {
				if fi, err := e.Info(); err == nil && fi.Size() > 0 {
					pairsDone = true
				}
			}
		}
	}
	defer func() { freeOSMemory = old }()
	if _, err := Run(context.Background(), []string{"../testdata/articles_1000.jsonl"}, out, &Options{Memory: 1 << 30, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !pairsDone {
		t.Fatalf("memory freed %d times (pairs.tsv written before: %v); want once, after it", calls, pairsDone)
	}
	calls = 0
	if _, err := Run(context.Background(), []string{filepath.Join(t.TempDir(), "missing.jsonl")}, t.TempDir(), &Options{Memory: 1 << 30, Workers: 1}); err == nil {
		t.Fatal("a missing input: no error")
	}
	if calls != 0 {
		t.Errorf("a failed run freed memory %d times; want 0", calls)
	}
}
