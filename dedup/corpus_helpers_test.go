package dedup

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
)

// gzipped returns data compressed as a .gz input holds it.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeInput writes data to the file name in dir, gzip-compressed when gz
// is set (name should then end in .gz, for the reader to decompress it),
// and returns the file's path.
func writeInput(t testing.TB, dir, name string, data []byte, gz bool) string {
	t.Helper()
	if gz {
		data = gzipped(t, data)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lineForm says how joinLines lays out an input's lines, for tests that
// want the same records to read the same whatever the form. The zero
// lineForm ends every line with '\n' and adds nothing.
type lineForm struct {
	bom       bool   // begin with a UTF-8 byte-order mark
	crlfEvery int    // line i ends "\r\n" where i%crlfEvery == 0 (0: none does)
	blank     string // a blank line ("\n", " \t\r\n", …) put after line i where i%blankEvery == blankAt ("": none)
	// blankEvery and blankAt place the blank lines; blankEvery > 0 where blank is set.
	blankEvery, blankAt int
}

// joinLines returns lines, which hold no line ends, as one input in form f;
// every line, the last too, ends with a line end.
func joinLines(lines []string, f lineForm) string {
	var b strings.Builder
	if f.bom {
		b.WriteString("\ufeff")
	}
	for i, l := range lines {
		b.WriteString(l)
		if f.crlfEvery > 0 && i%f.crlfEvery == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
		if f.blank != "" && i%f.blankEvery == f.blankAt {
			b.WriteString(f.blank)
		}
	}
	return b.String()
}

// firstBatch returns the first batch of records of the JSON Lines file at
// path, read with the default options; the reader is closed, so only the
// records' places (not their bytes) may be used after.
func firstBatch(t testing.TB, path string) corpus.Batch {
	t.Helper()
	recs, err := corpus.NewReader([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	var batch corpus.Batch
	if err := recs.Next(&batch); err != nil {
		t.Fatal(err)
	}
	return batch
}

// plainAndGzipped writes docs as in.jsonl and in.jsonl.gz in a new
// directory, and returns their paths.
func plainAndGzipped(t *testing.T, docs []doc) (plain, zipped string) {
	t.Helper()
	dir := t.TempDir()
	plain = filepath.Join(dir, "in.jsonl")
	writeJSONL(t, plain, docs)
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	return plain, writeInput(t, dir, "in.jsonl.gz", data, true)
}
