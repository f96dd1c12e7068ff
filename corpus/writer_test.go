package corpus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCopyKept(t *testing.T) {
	dir := t.TempDir()
	jsonl := "{ \"id\" : \"a\", \"text\":\"one\" }\r\n\n{\"id\":\"b\",\"text\":\"two\",\"extra\":[1]}\n{\"text\":\"three\"}\n"
	a := writeFile(t, dir, "a.jsonl.gz", jsonl)
	b := writeFile(t, dir, "b.txt", "line \"one\"\nline\ttwo\xff\n")
	root := filepath.Join(dir, "docs")
	writeFile(t, root, "x/1.txt", "file one")
	writeFile(t, root, "2.txt", "file\ntwo")
	pq := writeParquet(t, dir, "c.parquet", samplePQRows(3), 2)
	inputs := []string{a, b, root, pq}
	// Indices: a: 0 1 2; b: 3 4; docs: 5 (2.txt) 6 (x/1.txt); parquet: 7 8 9.
	pqRecs, _, err := readRecords(t, []string{pq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		keep Selection
		want string
	}{
		{"none", Indices{}, ""},
		{"jsonl verbatim", Indices{0, 2}, "{ \"id\" : \"a\", \"text\":\"one\" }\n{\"text\":\"three\"}\n"},
		{"lines", Indices{3, 4}, `{"id":"1","text":"line \"one\""}` + "\n" + `{"id":"2","text":"line\ttwo\ufffd"}` + "\n"},
		{"dir", Indices{5, 6}, `{"id":"2.txt","text":"file\ntwo"}` + "\n" + `{"id":"x/1.txt","text":"file one"}` + "\n"},
		{"parquet", Indices{9}, string(pqRecs[2].Raw) + "\n"},
		{"bitset", func() Selection { var s Bitset; s.Set(1); s.Set(7); return s }(),
			"{\"id\":\"b\",\"text\":\"two\",\"extra\":[1]}\n" + string(pqRecs[0].Raw) + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			n, err := CopyKept(context.Background(), &out, inputs, nil, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want || n != tc.keep.Len() {
				t.Errorf("got %d records:\n%s\nwant %d:\n%s", n, out.String(), tc.keep.Len(), tc.want)
			}
		})
	}

	// Reading everything back gives the same ids and texts (text lines and
	// files, Parquet rows and JSON Lines records with real ids).
	all := Indices{0, 1, 3, 4, 5, 6, 7, 8, 9}
	var out bytes.Buffer
	if _, err := CopyKept(context.Background(), &out, inputs, nil, all); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.jsonl")
	if err := os.WriteFile(kept, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	orig, err := readDocs(t, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := readDocs(t, []string{kept}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, idx := range all {
		o := orig[idx]
		o.Text = jsonUTF8([]byte(o.Text)) // the writer emits valid UTF-8
		if back[i].ID != o.ID || back[i].Text != o.Text {
			t.Errorf("record %d: read back %q %q; want %q %q", idx, back[i].ID, back[i].Text, o.ID, o.Text)
		}
	}
}

func TestCopyKeptErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", sampleJSONL)
	ctx := context.Background()
	if _, err := CopyKept(ctx, io.Discard, []string{a}, nil, Indices{2, 1}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("unsorted indices: got %v; want ErrBadOptions", err)
	}
	n, err := CopyKept(ctx, io.Discard, []string{a}, nil, Indices{1, 3, 4, 10})
	if err == nil || n != 2 || !strings.Contains(err.Error(), "wrote 2 of 4") {
		t.Errorf("indices past the end: got %d, %v; want 2 and an error", n, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := CopyKept(cctx, io.Discard, []string{a}, nil, Indices{0}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v; want context.Canceled", err)
	}
	if _, err := CopyKept(ctx, errWriter{}, []string{a}, nil, Indices{0}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing writer: got %v; want the write error", err)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestCopyKeptStopsAfterLast checks that CopyKept does not read past the
// last kept index: a broken record after it does not matter.
func TestCopyKeptStopsAfterLast(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for range 20000 {
		sb.WriteString(`{"text":"fine"}` + "\n")
	}
	sb.WriteString(strings.Repeat("x", 200) + "\n")
	a := writeFile(t, dir, "a.jsonl", sb.String())
	opts := &Options{MaxRecordBytes: 100}
	if _, _, err := readRecords(t, []string{a}, opts); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v; want the last line too large", err)
	}
	var out bytes.Buffer
	if n, err := CopyKept(context.Background(), &out, []string{a}, opts, Indices{0, 5}); err != nil || n != 2 {
		t.Errorf("got %d, %v; want 2, nil", n, err)
	}
}

func TestSelections(t *testing.T) {
	var bs Bitset
	for _, i := range []int64{0, 63, 64, 1000} {
		bs.Set(i)
	}
	ix := Indices{0, 63, 64, 1000}
	for _, s := range []Selection{bs, ix} {
		for _, tc := range []struct {
			i    int64
			want bool
		}{{-1, false}, {0, true}, {1, false}, {63, true}, {64, true}, {65, false}, {999, false}, {1000, true}, {1001, false}, {1 << 40, false}} {
			if got := s.Contains(tc.i); got != tc.want {
				t.Errorf("%T.Contains(%d): got %v; want %v", s, tc.i, got, tc.want)
			}
		}
		if s.Last() != 1000 || s.Len() != 4 {
			t.Errorf("%T: got Last %d Len %d; want 1000 4", s, s.Last(), s.Len())
		}
	}
	for _, s := range []Selection{Bitset(nil), NewBitset(500), Indices(nil)} {
		if s.Last() != -1 || s.Len() != 0 || s.Contains(0) {
			t.Errorf("empty %T: got Last %d Len %d; want -1 0", s, s.Last(), s.Len())
		}
	}
	if got := len(NewBitset(129)); got != 3 {
		t.Errorf("len(NewBitset(129)): got %d; want 3", got)
	}
}

func TestSpool(t *testing.T) {
	dir := t.TempDir()
	data := compressBytes(t, "x.zst", []byte(sampleJSONL))
	p, cleanup, err := Spool(bytes.NewReader(data), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p, SpoolSuffix) || filepath.Dir(p) != dir {
		t.Errorf("got path %q; want one in %s ending in %s", p, dir, SpoolSuffix)
	}
	got, err := readDocs(t, []string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := readDocs(t, []string{"-"}, &Options{Stdin: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sampleDocs(StdinName)) || !reflect.DeepEqual(got, direct) {
		t.Errorf("spooled: got %+v; want %+v, as read from stdin", got, direct)
	}
	var out bytes.Buffer
	if _, err := CopyKept(context.Background(), &out, []string{p}, nil, Indices{1}); err != nil || out.String() != "{\"id\":\"b\",\"text\":\"gamma \\\"delta\\\"\\n\"}\n" {
		t.Errorf("CopyKept from the spool: got %q, %v", out.String(), err)
	}
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("after cleanup: stat %s: %v; want not exist", p, err)
	}
	if err := cleanup(); err != nil {
		t.Errorf("second cleanup: %v", err)
	}
	if _, _, err := Spool(iotestErrReader{}, dir); err == nil {
		t.Errorf("Spool of a failing reader: got nil error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %d files behind in %s", len(ents), dir)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.jsonl", "out.jsonl.gz", "out.jsonl.zst", "out.jsonl.gz.zst"} {
		p := filepath.Join(dir, name)
		w, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, sampleJSONL); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := readDocs(t, []string{p}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, sampleDocs(p)) {
			t.Errorf("%s: got %+v; want %+v", name, got, sampleDocs(p))
		}
		raw, _ := os.ReadFile(p)
		if compressed := !bytes.Equal(raw, []byte(sampleJSONL)); compressed != (name != "out.jsonl") {
			t.Errorf("%s: compressed = %v; want %v", name, compressed, name != "out.jsonl")
		}
	}
	if _, err := Create(filepath.Join(dir, "missing", "x.jsonl")); err == nil {
		t.Errorf("Create in a missing directory: got nil error")
	}
}

// TestCreateAppearsOnClose: the file Create writes appears under its name
// only when Close succeeds (before, at once, so that a writer that failed
// half-way left a file that read as a shorter corpus); Abort leaves the
// name as it was, and neither leaves a temporary file.
func TestCreateAppearsOnClose(t *testing.T) {
	for _, name := range []string{"out.jsonl", "out.jsonl.gz", "out.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			w, err := Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			io.WriteString(w, sampleJSONL)
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("before Close: stat %s: %v; want not exist", name, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := readDocs(t, []string{p}, nil); err != nil || !reflect.DeepEqual(got, sampleDocs(p)) {
				t.Errorf("after Close: got %+v, %v", got, err)
			}
			w.Abort() // after Close: nothing
			before, _ := os.ReadFile(p)

			w, err = Create(p)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, "{\"id\":\"x\",\"text\":\"half")
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
				t.Errorf("Abort changed %s", name)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d files in the directory; want %s alone", len(ents), name)
			}
		})
	}
}
