package corpus

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// compressBytes applies the compression suffixes of name to data, the first
// suffix innermost (x.jsonl.gz.zst is zstd of gzip of JSON Lines).
func compressBytes(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	_, layers := peelCompression(name)
	for i := len(layers) - 1; i >= 0; i-- {
		var buf bytes.Buffer
		switch layers[i] {
		case compGzip:
			w := gzip.NewWriter(&buf)
			w.Write(data)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		case compZstd:
			w, err := zstd.NewWriter(&buf)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		data = buf.Bytes()
	}
	return data
}

// writeFile writes content to dir/name (creating parent directories),
// compressed as the name says, and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, compressBytes(t, name, []byte(content)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rec is a Record or Document flattened to comparable values.
type rec struct {
	File  string
	Line  int64
	Index int64
	ID    string
	Text  string
}

// readRecords reads all records of inputs, copying them out of the batches.
// It returns the records read before any error, and the error (nil at EOF).
func readRecords(t testing.TB, inputs []string, opts *Options) ([]Record, Stats, error) {
	t.Helper()
	recs, _, st, err := readSkipped(t, inputs, opts)
	return recs, st, err
}

// readSkipped is readRecords that also returns the batches' Skipped records.
func readSkipped(t testing.TB, inputs []string, opts *Options) ([]Record, []RecordError, Stats, error) {
	t.Helper()
	r, err := NewReader(inputs, opts)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	defer r.Close()
	var out []Record
	var skipped []RecordError
	var b Batch
	for {
		err := r.Next(&b)
		for _, x := range b.Records {
			x.Raw = bytes.Clone(x.Raw)
			out = append(out, x)
		}
		skipped = append(skipped, b.Skipped...)
		if err == io.EOF {
			if len(b.Skipped) > 0 {
				t.Errorf("Next returned %d skipped records with io.EOF", len(b.Skipped))
			}
			return out, skipped, r.Stats(), nil
		}
		if err != nil {
			if len(b.Records) > 0 || len(b.Skipped) > 0 {
				t.Errorf("Next returned %d records, %d skipped, with error %v", len(b.Records), len(b.Skipped), err)
			}
			return out, skipped, r.Stats(), err
		}
		if len(b.Records) == 0 && len(b.Skipped) == 0 {
			t.Fatalf("Next returned an empty batch without error")
		}
	}
}

// readDocs reads and parses every record of inputs.
func readDocs(t testing.TB, inputs []string, opts *Options) ([]rec, error) {
	t.Helper()
	recs, _, err := readRecords(t, inputs, opts)
	if err != nil {
		return nil, err
	}
	p, err := NewParser(opts)
	if err != nil {
		t.Fatal(err)
	}
	var docs []rec
	var d Document
	for i := range recs {
		if err := p.Parse(&recs[i], &d); err != nil {
			return docs, err
		}
		docs = append(docs, rec{recs[i].File, recs[i].Line, d.Index, string(d.ID), string(d.Text)})
	}
	return docs, nil
}

// wantErr checks that err wraps target and that its message holds every
// fragment.
func wantErr(t testing.TB, err, target error, fragments ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v; want one wrapping %v", err, target)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}
