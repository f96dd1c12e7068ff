package corpuspipe_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
)

// writeCorpus writes files JSON Lines files of n records each, ids "f<file>-<line>",
// and returns their paths. bad, if not nil, says which (file, line) to
// write as a record that does not parse.
func writeCorpus(t *testing.T, files, n int, bad func(file, line int) bool) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for f := range files {
		var b strings.Builder
		for l := 1; l <= n; l++ {
			if bad != nil && bad(f, l) {
				b.WriteString("{not json\n")
				continue
			}
			fmt.Fprintf(&b, "{\"id\":\"f%d-%d\",\"text\":\"document %d of file %d\"}\n", f, l, l, f)
		}
		p := filepath.Join(dir, "part"+strconv.Itoa(f)+".jsonl")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// openReader opens paths with opts and closes the Reader when t ends.
func openReader(t *testing.T, paths []string, opts *corpus.Options) *corpus.Reader {
	t.Helper()
	r, err := corpus.NewReader(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// ids is a result: the ids of a batch's documents and the lines skipped.
type ids struct {
	ids     []string
	skipped []int64
}

// collectIDs runs the pipeline over paths and returns every id in the
// order consume saw them, the skipped lines, and Run's stats and error. Each
// worker sleeps a random few microseconds a document so that batches finish
// out of order.
func collectIDs(t *testing.T, paths []string, opts *corpus.Options, workers int) ([]string, []int64, corpus.Stats, error) {
	t.Helper()
	r := openReader(t, paths, opts)
	var seed atomic.Uint64
	var got []string
	var skipped []int64
	st, err := corpuspipe.Run(context.Background(), r, opts, workers,
		func() (corpuspipe.Worker[ids], error) {
			rng := rand.New(rand.NewPCG(seed.Add(1), 0))
			return corpuspipe.Worker[ids]{
				Begin: func(res *ids, _ *corpus.Batch) {
					res.ids, res.skipped = res.ids[:0], res.skipped[:0]
				},
				Document: func(res *ids, _ *corpus.Record, doc *corpus.Document) error {
					time.Sleep(time.Duration(rng.IntN(20)) * time.Microsecond)
					res.ids = append(res.ids, string(doc.ID))
					return nil
				},
				Skip: func(res *ids, rec *corpus.Record, _ error) {
					res.skipped = append(res.skipped, rec.Line)
				},
			}, nil
		},
		func(b *corpuspipe.Batch[ids]) error {
			var raw int64
			for _, rec := range b.Records {
				raw += int64(len(rec.Raw))
			}
			if b.RawBytes != raw {
				t.Errorf("RawBytes: got %d; want %d", b.RawBytes, raw)
			}
			got = append(got, b.Result.ids...)
			skipped = append(skipped, b.Result.skipped...)
			return nil
		})
	return got, skipped, st, err
}

func TestRunOrder(t *testing.T) {
	paths := writeCorpus(t, 3, 400, nil)
	var want []string
	for f := range 3 {
		for l := 1; l <= 400; l++ {
			want = append(want, fmt.Sprintf("f%d-%d", f, l))
		}
	}
	for _, workers := range []int{1, 2, 3, 8, 0} {
		for _, batch := range []int{1, 100, 4096, 0} {
			t.Run(fmt.Sprintf("workers=%d/batch=%d", workers, batch), func(t *testing.T) {
				got, skipped, st, err := collectIDs(t, paths, &corpus.Options{BatchBytes: batch}, workers)
				if err != nil {
					t.Fatal(err)
				}
				if len(skipped) != 0 || st.Bad != 0 {
					t.Errorf("got %d skipped, Bad %d; want none", len(skipped), st.Bad)
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("got %d ids in another order; want %d in input order (first got %.60q)", len(got), len(want), got)
				}
			})
		}
	}
}

// TestRunZeroResult checks that without Begin each batch starts from R's
// zero value, although results are reused.
func TestRunZeroResult(t *testing.T) {
	paths := writeCorpus(t, 1, 300, nil)
	opts := &corpus.Options{BatchBytes: 200}
	r := openReader(t, paths, opts)
	var docs, batches int
	_, err := corpuspipe.Run(context.Background(), r, opts, 2,
		func() (corpuspipe.Worker[[]string], error) {
			return corpuspipe.Worker[[]string]{Document: func(res *[]string, _ *corpus.Record, doc *corpus.Document) error {
				*res = append(*res, string(doc.ID))
				return nil
			}}, nil
		},
		func(b *corpuspipe.Batch[[]string]) error {
			if len(b.Result) != len(b.Records) {
				t.Errorf("batch %d: got %d results for %d records; want one each", batches, len(b.Result), len(b.Records))
			}
			docs += len(b.Result)
			batches++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if docs != 300 || batches < 2*(2*2+2) {
		t.Errorf("got %d documents in %d batches; want 300 in more batches than are in flight", docs, batches)
	}
}

func TestRunParseError(t *testing.T) {
	bad := func(f, l int) bool { return f == 1 && (l == 57 || l == 200) }
	paths := writeCorpus(t, 2, 300, bad)
	for _, workers := range []int{1, 4} {
		_, _, _, err := collectIDs(t, paths, &corpus.Options{BatchBytes: 512}, workers)
		var re *corpus.RecordError
		if !errors.As(err, &re) {
			t.Fatalf("workers=%d: got error %v; want a *corpus.RecordError", workers, err)
		}
		if re.File != paths[1] || re.Line != 57 || !errors.Is(err, corpus.ErrNotJSON) {
			t.Errorf("workers=%d: got %v; want %s:57 wrapping ErrNotJSON", workers, err, paths[1])
		}
	}

	// With SkipBad the bad records go to Skip and are counted.
	got, skipped, st, err := collectIDs(t, paths, &corpus.Options{BatchBytes: 512, SkipBad: true}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 598 || fmt.Sprint(skipped) != "[57 200]" || st.Bad != 2 {
		t.Errorf("got %d documents, skipped lines %v, Bad %d; want 598, [57 200], 2", len(got), skipped, st.Bad)
	}
}

var errTest = errors.New("test error")

// TestRunErrors checks that the error of a Worker, of consume and of
// newWorker is what Run returns (not the cancellation it causes), and that
// Run returns although the reader is waiting for a batch consume will never
// release.
func TestRunErrors(t *testing.T) {
	paths := writeCorpus(t, 2, 500, nil)
	opts := &corpus.Options{BatchBytes: 64}
	run := func(t *testing.T, newWorker func() (corpuspipe.Worker[int], error), consume func(*corpuspipe.Batch[int]) error) error {
		t.Helper()
		r := openReader(t, paths, opts)
		done := make(chan error, 1)
		go func() {
			_, err := corpuspipe.Run(context.Background(), r, opts, 3, newWorker, consume)
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
	count := func() (corpuspipe.Worker[int], error) {
		return corpuspipe.Worker[int]{Document: func(res *int, _ *corpus.Record, _ *corpus.Document) error {
			*res++
			return nil
		}}, nil
	}
	consumeAll := func(*corpuspipe.Batch[int]) error { return nil }

	for range 20 {
		t.Run("worker", func(t *testing.T) {
			err := run(t, func() (corpuspipe.Worker[int], error) {
				return corpuspipe.Worker[int]{Document: func(_ *int, rec *corpus.Record, _ *corpus.Document) error {
					if rec.Index == 321 {
						return fmt.Errorf("%s:%d: %w", rec.File, rec.Line, errTest)
					}
					return nil
				}}, nil
			}, consumeAll)
			if want := paths[0] + ":322: test error"; err == nil || err.Error() != want {
				t.Errorf("got %v; want %s", err, want)
			}
		})
		t.Run("consume", func(t *testing.T) {
			n := 0
			err := run(t, count, func(*corpuspipe.Batch[int]) error {
				if n++; n == 3 {
					// Let the reader fill every free batch and wait.
					time.Sleep(10 * time.Millisecond)
					return errTest
				}
				return nil
			})
			if !errors.Is(err, errTest) {
				t.Errorf("got %v; want %v", err, errTest)
			}
		})
	}
	t.Run("newWorker", func(t *testing.T) {
		n := 0
		err := run(t, func() (corpuspipe.Worker[int], error) {
			if n++; n == 2 {
				return corpuspipe.Worker[int]{}, errTest
			}
			return count()
		}, consumeAll)
		if !errors.Is(err, errTest) {
			t.Errorf("got %v; want %v", err, errTest)
		}
	})
}

func TestRunCancel(t *testing.T) {
	paths := writeCorpus(t, 2, 500, nil)
	opts := &corpus.Options{BatchBytes: 64}
	r := openReader(t, paths, opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	_, err := corpuspipe.Run(ctx, r, opts, 3,
		func() (corpuspipe.Worker[int], error) {
			return corpuspipe.Worker[int]{Document: func(*int, *corpus.Record, *corpus.Document) error { return nil }}, nil
		},
		func(*corpuspipe.Batch[int]) error {
			if batches++; batches == 5 {
				cancel()
				time.Sleep(10 * time.Millisecond) // let the reader block on a free batch
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v; want %v", err, context.Canceled)
	}
	if batches > 5+2*3+2 {
		t.Errorf("consume got %d batches; want at most those in flight after the 5th", batches)
	}
}

func TestRunDocumentRequired(t *testing.T) {
	paths := writeCorpus(t, 1, 1, nil)
	r := openReader(t, paths, nil)
	defer func() {
		if p := recover(); p == nil || !strings.HasPrefix(fmt.Sprint(p), "corpuspipe: ") {
			t.Errorf("got panic %v; want one prefixed corpuspipe:", p)
		}
	}()
	corpuspipe.Run(context.Background(), r, nil, 1,
		func() (corpuspipe.Worker[int], error) { return corpuspipe.Worker[int]{}, nil },
		func(*corpuspipe.Batch[int]) error { return nil })
}

// TestRunFirstErrorInInputOrder: when many records are bad, the error Run
// returns is the first bad record in input order, whichever worker failed
// first in time, and whether a parse, a Worker or the Reader (a record over
// MaxRecordBytes) found it.
func TestRunFirstErrorInInputOrder(t *testing.T) {
	const lines = 2000
	allBad := writeCorpus(t, 1, lines, func(int, int) bool { return true })
	// Line 40 does not parse; line 41 is over MaxRecordBytes, which the
	// Reader, running ahead of the workers, finds first in time.
	mixed := writeCorpus(t, 1, lines, func(_, l int) bool { return l == 40 })
	data, err := os.ReadFile(mixed[0])
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(string(data), "\n")
	ls[40] = `{"id":"big","text":"` + strings.Repeat("x", 300) + "\"}\n"
	if err := os.WriteFile(mixed[0], []byte(strings.Join(ls, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	good := writeCorpus(t, 1, lines, nil)
	failAll := func() (corpuspipe.Worker[int], error) {
		return corpuspipe.Worker[int]{Document: func(_ *int, rec *corpus.Record, _ *corpus.Document) error {
			return fmt.Errorf("%s:%d: %w", rec.File, rec.Line, errTest)
		}}, nil
	}
	count := func() (corpuspipe.Worker[int], error) {
		return corpuspipe.Worker[int]{Document: func(res *int, _ *corpus.Record, _ *corpus.Document) error {
			*res++
			return nil
		}}, nil
	}
	for _, c := range []struct {
		name      string
		path      string
		newWorker func() (corpuspipe.Worker[int], error)
		opts      corpus.Options
		want      string
	}{
		{"parse", allBad[0], count, corpus.Options{BatchBytes: 64}, allBad[0] + ":1: corpus: not valid JSON"},
		{"worker", good[0], failAll, corpus.Options{BatchBytes: 64}, good[0] + ":1: test error"},
		{"reader", mixed[0], count, corpus.Options{BatchBytes: 64, MaxRecordBytes: 200}, mixed[0] + ":40: corpus: not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for run := range 30 {
				r := openReader(t, []string{c.path}, &c.opts)
				_, err := corpuspipe.Run(context.Background(), r, &c.opts, 8, c.newWorker,
					func(*corpuspipe.Batch[int]) error { return nil })
				if err == nil || !strings.HasPrefix(err.Error(), c.want) {
					t.Fatalf("run %d: got %v; want the error of the first bad line, %s", run, err, c.want)
				}
			}
		})
	}
}

// TestRunBad: under SkipBad, each batch's Bad lists the records the reader
// skipped (too large) and those that did not parse, merged in input order,
// whatever the number of workers and the batch size; and Run's stats count
// the keep values parsed.
func TestRunBad(t *testing.T) {
	var b strings.Builder
	var want []string
	for l := 1; l <= 600; l++ {
		switch {
		case l%37 == 0:
			b.WriteString("{not json\n")
			want = append(want, fmt.Sprintf("%d/%d/not valid JSON", l, l-1))
		case l%53 == 0:
			fmt.Fprintf(&b, "{\"id\":\"%d\",\"text\":\"%s\"}\n", l, strings.Repeat("y", 200))
			want = append(want, fmt.Sprintf("%d/%d/record too large", l, l-1))
		case l%3 == 0:
			fmt.Fprintf(&b, "{\"id\":\"%d\",\"text\":\"doc %d\",\"q\":%d}\n", l, l, l)
		default:
			fmt.Fprintf(&b, "{\"id\":\"%d\",\"text\":\"doc %d\"}\n", l, l)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 4} {
		for _, batch := range []int{64, 1 << 20} {
			opts := &corpus.Options{SkipBad: true, MaxRecordBytes: 150, BatchBytes: batch, KeepField: "q"}
			r := openReader(t, []string{path}, opts)
			var got []string
			st, err := corpuspipe.Run(context.Background(), r, opts, workers,
				func() (corpuspipe.Worker[int], error) {
					return corpuspipe.Worker[int]{Document: func(*int, *corpus.Record, *corpus.Document) error { return nil }}, nil
				},
				func(b *corpuspipe.Batch[int]) error {
					for _, e := range b.Bad {
						if e.File != path {
							t.Errorf("bad record in %q; want %q", e.File, path)
						}
						reason, _, _ := strings.Cut(strings.TrimPrefix(e.Err.Error(), "corpus: "), ":")
						got = append(got, fmt.Sprintf("%d/%d/%s", e.Line, e.Index, reason))
					}
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("workers=%d batch=%d: got bad records\n%q\nwant\n%q", workers, batch, got, want)
			}
			// Lines 3, 6, …, 600 carry q, but not the bad ones (111, 222,
			// …, 555 do not parse; 159, 318, 477 are too large).
			if wantKeep := int64(200 - 5 - 3); st.Keep != wantKeep {
				t.Errorf("workers=%d batch=%d: got Stats.Keep %d; want %d", workers, batch, st.Keep, wantKeep)
			}
		}
	}
}
