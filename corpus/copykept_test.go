package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// copyKeptByRecord is the reference CopyKept (as it was): every kept record
// through Writer.Write, one at a time.
func copyKeptByRecord(t *testing.T, inputs []string, opts *Options, keep Selection) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b Batch
	for {
		err := r.Next(&b)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Records {
			if keep.Contains(b.Records[i].Index) {
				if err := w.Write(&b.Records[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// randomLines returns n JSON Lines records with, when messy, CRLF line
// ends, blank lines, a byte-order mark, records over limit bytes and no
// final newline mixed in.
func randomLines(rng *rand.Rand, n int, messy bool, limit int) string {
	var sb strings.Builder
	if messy && rng.IntN(2) == 0 {
		sb.WriteString("\ufeff")
	}
	for i := range n {
		if messy && rng.IntN(8) == 0 {
			sb.WriteString([]string{"\n", "  \n", "\r\n", "\t\r\n"}[rng.IntN(4)])
		}
		text := strings.Repeat("w ", rng.IntN(20))
		if messy && rng.IntN(30) == 0 {
			text = strings.Repeat("x", limit) // over the limit
		}
		fmt.Fprintf(&sb, `{"id":"%d","text":"%s"}`, i, text)
		if i == n-1 && messy && rng.IntN(2) == 0 {
			break // no final newline
		}
		if messy && rng.IntN(4) == 0 {
			sb.WriteString("\r\n")
		} else {
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// TestCopyKeptRuns checks CopyKept, which writes runs of adjacent kept
// records with one call and reads ahead, against the record-by-record
// reference on random inputs: plain and compressed, clean and messy (CRLF,
// blank lines, byte-order marks, skipped too-large records, no final
// newline), one file or several, batches small and large, and kept sets
// with removed records at the start, the end, adjacent, none, all but one,
// and random.
func TestCopyKeptRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	const limit = 200
	keeps := map[string]func(n int) Selection{
		"all": func(n int) Selection { return allIndices(n, func(int) bool { return true }) },
		"first and last removed": func(n int) Selection {
			return allIndices(n, func(i int) bool { return i != 0 && i != n-1 })
		},
		"adjacent removed": func(n int) Selection {
			return allIndices(n, func(i int) bool { return i%7 != 3 && i%7 != 4 })
		},
		"only first": func(n int) Selection { return Indices{0} },
		"only last":  func(n int) Selection { return Indices{int64(n - 1)} },
		"random": func(n int) Selection {
			return allIndices(n, func(int) bool { return rng.IntN(10) != 0 })
		},
		"sparse": func(n int) Selection {
			return allIndices(n, func(int) bool { return rng.IntN(10) == 0 })
		},
	}
	for _, messy := range []bool{false, true} {
		for _, name := range []string{"a.jsonl", "a.jsonl.gz"} {
			for files := 1; files <= 3; files++ {
				for _, batch := range []int{1, 300, 1 << 20} {
					for kname, keepFn := range keeps {
						t.Run(fmt.Sprintf("messy=%v/%s/files=%d/batch=%d/%s", messy, name, files, batch, kname), func(t *testing.T) {
							dir := t.TempDir()
							var inputs []string
							n := 0
							for f := range files {
								k := 1 + rng.IntN(60)
								inputs = append(inputs, writeFile(t, dir, fmt.Sprintf("%d%s", f, name), randomLines(rng, k, messy, limit)))
								n += k
							}
							opts := &Options{MaxRecordBytes: limit, BatchBytes: batch, SkipBad: true}
							keep := keepFn(n)
							want := copyKeptByRecord(t, inputs, opts, keep)
							var got bytes.Buffer
							c, err := CopyKept(context.Background(), &got, inputs, opts, keep)
							if err != nil {
								// Indices of skipped records are never written:
								// the count check fails when keep holds one.
								if !strings.Contains(err.Error(), "kept records") {
									t.Fatal(err)
								}
							} else if c != int64(bytes.Count(want, []byte{'\n'})) {
								t.Errorf("CopyKept wrote %d records, reference %d", c, bytes.Count(want, []byte{'\n'}))
							}
							if !bytes.Equal(got.Bytes(), want) {
								t.Fatalf("CopyKept output differs from record by record:\ngot  %q\nwant %q", got.Bytes(), want)
							}
						})
					}
				}
			}
		}
	}
}

func allIndices(n int, in func(int) bool) Indices {
	var s Indices
	for i := range n {
		if in(i) {
			s = append(s, int64(i))
		}
	}
	return s
}

// TestKeptRunExtend checks the run's adjacency rule on one buffer.
func TestKeptRunExtend(t *testing.T) {
	buf := []byte("ab\ncd\r\nef\n\ngh\nij")
	a, c, e, g, i := buf[0:2], buf[3:5], buf[7:9], buf[11:13], buf[14:16]
	var k keptRun
	for _, tc := range []struct {
		raw  []byte
		want bool
	}{{a, true}, {c, true}, {e, false}, {g, false}, {i, true}} {
		got := k.extend(tc.raw)
		if got != tc.want {
			t.Fatalf("extend(%q) = %v, want %v (run %q)", tc.raw, got, tc.want, k.b)
		}
		if !got {
			k = keptRun{}
			k.extend(tc.raw)
		}
	}
	if string(k.b) != "gh\nij" || k.n != 2 {
		t.Errorf("run %q of %d records, want \"gh\\nij\" of 2", k.b, k.n)
	}
	// One byte between that is not '\n' is not a record separator.
	other := []byte("ab\rcd")
	k = keptRun{}
	k.extend(other[0:2])
	if k.extend(other[3:5]) {
		t.Error("extend joined records separated by '\\r'")
	}
	// Equal bytes elsewhere in memory are not adjacent.
	k = keptRun{}
	k.extend(a)
	if k.extend([]byte("cd")) {
		t.Error("extend took a Raw from another buffer")
	}
}

// TestCopyKeptCancelled checks that a cancelled context stops the copy
// with its error and leaves no goroutine reading (the race detector and
// the test's end would see one).
func TestCopyKeptCancelled(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	in := writeFile(t, dir, "a.jsonl", randomLines(rng, 5000, false, 1000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := CopyKept(ctx, io.Discard, []string{in}, &Options{BatchBytes: 100}, allIndices(5000, func(int) bool { return true }))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CopyKept under a cancelled context: %v, want context.Canceled", err)
	}
}

// TestCopyKeptReadAheadStops checks that copying stops at keep.Last with the
// reader a batch ahead, and that a read error after it does not matter.
func TestCopyKeptReadAheadStops(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "a.jsonl", "{\"id\":\"1\"}\n{\"id\":\"2\"}\n"+strings.Repeat("{\"id\":\"3\"}\n", 1000)+"{not json but never parsed}\n")
	var out bytes.Buffer
	n, err := CopyKept(context.Background(), &out, []string{in}, &Options{BatchBytes: 8}, Indices{1})
	if err != nil || n != 1 || out.String() != "{\"id\":\"2\"}\n" {
		t.Fatalf("CopyKept = %d, %v, %q; want 1, nil, the second record", n, err, out.String())
	}
}
