package corpus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
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

// setMapWindow makes CopyKept's mapped windows n bytes for the test.
func setMapWindow(t *testing.T, n int) {
	t.Helper()
	old := mapWindow
	mapWindow = n
	t.Cleanup(func() { mapWindow = old })
}

// longLines returns n JSON Lines records like randomLines's messy ones,
// among them lines longer than a page (within limit and over it), so that
// lines cross mapped windows of a page or two and some fill several.
func longLines(rng *rand.Rand, n, limit int) string {
	var sb strings.Builder
	if rng.IntN(2) == 0 {
		sb.WriteString("\ufeff")
	}
	for i := range n {
		if rng.IntN(8) == 0 {
			sb.WriteString([]string{"\n", "  \n", "\r\n", "\t\r\n"}[rng.IntN(4)])
		}
		text := strings.Repeat("w ", rng.IntN(60))
		switch rng.IntN(20) {
		case 0:
			text = strings.Repeat("y", limit/2+rng.IntN(limit/2-40)) // within the limit, longer than a page
		case 1:
			text = strings.Repeat("x", limit+rng.IntN(3*limit)) // over it
		}
		fmt.Fprintf(&sb, `{"id":"%d","text":"%s"}`, i, text)
		if i == n-1 && rng.IntN(2) == 0 {
			break // no final newline
		}
		if rng.IntN(4) == 0 {
			sb.WriteString("\r\n")
		} else {
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// copyKeptReference is copyKeptByRecord returning the Reader's error
// instead of failing the test.
func copyKeptReference(inputs []string, opts *Options, keep Selection) ([]byte, error) {
	var out bytes.Buffer
	w, err := NewWriter(&out, opts)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(inputs, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b Batch
	for {
		err := r.Next(&b)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range b.Records {
			if keep.Contains(b.Records[i].Index) {
				if err := w.Write(&b.Records[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	err = w.Flush()
	return out.Bytes(), err
}

// TestCopyKeptMapped checks CopyKept through mapped windows against the
// records the Reader reads, record by record: windows of one page, two and
// the default, lines crossing them, longer than them (within the limit and
// over it, with and without SkipBad), byte-order marks, CRLF, blank lines,
// no final newline, empty files, one to three files; into a writer that
// buffers itself (the runs go to it straight from the mapping) and one that
// does not.
func TestCopyKeptMapped(t *testing.T) {
	page := os.Getpagesize()
	limit := 2 * page
	rng := rand.New(rand.NewPCG(3, 4))
	for _, window := range []int{page, 2 * page, mapWindow} {
		for _, skipBad := range []bool{true, false} {
			for files := 1; files <= 3; files++ {
				for _, buffered := range []bool{false, true} {
					for _, kname := range []string{"all", "random", "sparse", "first"} {
						t.Run(fmt.Sprintf("window=%d/skipbad=%v/files=%d/buffered=%v/%s", window, skipBad, files, buffered, kname), func(t *testing.T) {
							setMapWindow(t, window)
							dir := t.TempDir()
							var inputs []string
							n := 0
							for f := range files {
								k := rng.IntN(120)
								content := longLines(rng, k, limit)
								if k == 0 {
									content = ""
								}
								inputs = append(inputs, writeFile(t, dir, fmt.Sprintf("%d.jsonl", f), content))
								n += k
							}
							opts := &Options{MaxRecordBytes: limit, SkipBad: skipBad}
							var keep Selection
							switch kname {
							case "all":
								keep = allIndices(n, func(int) bool { return true })
							case "random":
								keep = allIndices(n, func(int) bool { return rng.IntN(10) != 0 })
							case "sparse":
								keep = allIndices(n, func(int) bool { return rng.IntN(10) == 0 })
							case "first":
								keep = Indices{0}
							}
							r, err := NewReader(inputs, opts)
							if err != nil {
								t.Fatal(err)
							}
							if !r.mappable() {
								t.Fatal("plain JSON Lines files are not mappable")
							}
							r.Close()
							want, wantErr := copyKeptReference(inputs, opts, keep)
							var got bytes.Buffer
							dst := io.Writer(&got)
							var bw *bufio.Writer
							if buffered {
								bw = bufio.NewWriterSize(&got, 100)
								dst = bw
							}
							c, err := CopyKept(context.Background(), dst, inputs, opts, keep)
							if bw != nil {
								bw.Flush()
							}
							switch {
							case wantErr != nil:
								// Without SkipBad a line too large fails both,
								// unless it lies past the last kept record.
								if !errors.Is(wantErr, ErrTooLarge) {
									t.Fatal(wantErr)
								}
								if err != nil && !errors.Is(err, ErrTooLarge) {
									t.Fatalf("got %v; want ErrTooLarge or nil", err)
								}
								return
							case err != nil:
								// Indices of skipped records are never written:
								// the count check fails when keep holds one.
								if !strings.Contains(err.Error(), "kept records") {
									t.Fatal(err)
								}
							case c != int64(bytes.Count(want, []byte{'\n'})):
								t.Errorf("CopyKept wrote %d records; want %d", c, bytes.Count(want, []byte{'\n'}))
							}
							if !bytes.Equal(got.Bytes(), want) {
								t.Fatalf("got %d bytes, want %d:\ngot  %.300q\nwant %.300q", got.Len(), len(want), got.Bytes(), want)
							}
						})
					}
				}
			}
		}
	}
}

// TestCopyKeptMappable checks which inputs go through mapped windows.
func TestCopyKeptMappable(t *testing.T) {
	dir := t.TempDir()
	plain := writeFile(t, dir, "a.jsonl", "{}\n")
	gz := writeFile(t, dir, "b.jsonl.gz", "{}\n")
	txt := writeFile(t, dir, "c.txt", "a\n")
	spooled := writeFile(t, dir, "d"+SpoolSuffix, "{}\n")
	for _, tc := range []struct {
		inputs []string
		want   bool
	}{
		{[]string{plain}, canMap},
		{[]string{plain, plain}, canMap},
		{[]string{plain, gz}, false},
		{[]string{txt}, false},
		{[]string{spooled}, false},
	} {
		r, err := NewReader(tc.inputs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.mappable(); got != tc.want {
			t.Errorf("mappable(%q): got %v; want %v", tc.inputs, got, tc.want)
		}
		r.Close()
	}
}

// truncatingWriter cuts the file path to nothing at its first write.
type truncatingWriter struct {
	path string
	done bool
}

func (w *truncatingWriter) Write(p []byte) (int, error) {
	if !w.done {
		w.done = true
		if err := os.Truncate(w.path, 0); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *truncatingWriter) AvailableBuffer() []byte { return nil }

// TestCopyKeptMappedTruncated checks that an input cut short while mapped
// is an error, not a crash (SIGBUS).
func TestCopyKeptMappedTruncated(t *testing.T) {
	if !canMap {
		t.Skip("no mapped windows on this system")
	}
	setMapWindow(t, 4*os.Getpagesize())
	dir := t.TempDir()
	in := writeFile(t, dir, "a.jsonl", strings.Repeat(`{"id":"1","text":"some words"}`+"\n", 2000))
	w := &truncatingWriter{path: in}
	// Record 1 alone: its run is written (and the file cut) when record 2
	// is not kept; reading on faults in the same window.
	_, err := CopyKept(context.Background(), w, []string{in}, nil, Indices{1, 1999})
	if err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("got %v; want an error saying the input changed", err)
	}
}
