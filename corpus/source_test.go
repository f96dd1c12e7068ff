package corpus

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// checkSources reads every record back from its Source at SourceOffset and
// compares it with Raw; it returns how many records had a Source.
func checkSources(t *testing.T, recs []Record) int {
	t.Helper()
	n := 0
	for _, r := range recs {
		if r.Source == "" {
			if r.SourceOffset != 0 {
				t.Errorf("record %d: SourceOffset %d without a Source", r.Index, r.SourceOffset)
			}
			continue
		}
		n++
		f, err := os.Open(r.Source)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(r.Raw))
		_, err = f.ReadAt(got, r.SourceOffset)
		f.Close()
		if err != nil || !bytes.Equal(got, r.Raw) {
			t.Errorf("record %d (line %d): %q at %d in %s, %v; want %q", r.Index, r.Line, got, r.SourceOffset, r.Source, err, r.Raw)
		}
	}
	return n
}

// TestRecordSource checks that a record's Source and SourceOffset locate its
// Raw in the file, whatever the batch size (lines cut by a batch's end and
// carried over, buffers compacted and grown), past a byte-order mark, CRLF
// line ends, blank lines and too-large lines skipped, and that compressed
// inputs and standard input have none.
func TestRecordSource(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("\xef\xbb\xbf")
	for i := range 200 {
		switch {
		case i%17 == 3:
			sb.WriteString("   \r\n\n")
		case i%29 == 5:
			fmt.Fprintf(&sb, "{\"text\":%q}\n", strings.Repeat("long ", 40)) // over MaxRecordBytes below
		}
		fmt.Fprintf(&sb, "{\"id\":\"d%d\",\"text\":%q}", i, strings.Repeat("w ", i%13))
		if i%2 == 0 {
			sb.WriteString("\r")
		}
		sb.WriteString("\n")
	}
	sb.WriteString(`{"id":"last","text":"no newline"}`)
	content := sb.String()
	dir := t.TempDir()
	plain := writeFile(t, dir, "a.jsonl", content)
	for _, bs := range []int{1, 7, 64, 1 << 20} {
		t.Run(fmt.Sprint("batch=", bs), func(t *testing.T) {
			recs, _, _, err := readSkipped(t, []string{plain}, &Options{BatchBytes: bs, MaxRecordBytes: 150, SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := checkSources(t, recs); n != len(recs) || n != 201 {
				t.Errorf("%d records of %d have a Source; want all 201", n, len(recs))
			}
		})
	}
	t.Run("text lines", func(t *testing.T) {
		p := writeFile(t, dir, "b.txt", "one\r\n\ntwo\nthree")
		recs, _, err := readRecords(t, []string{p}, &Options{BatchBytes: 3})
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSources(t, recs); n != 3 {
			t.Errorf("%d records with a Source; want 3", n)
		}
	})
	t.Run("dir", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "x.md", "a whole file")
		writeFile(t, root, "y.md.gz", "a compressed file")
		recs, _, err := readRecords(t, []string{root}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSources(t, recs); n != 1 || recs[0].Source == "" {
			t.Errorf("%d records with a Source (%+v); want only the uncompressed one", n, recs)
		}
	})
	t.Run("spooled", func(t *testing.T) {
		path, cleanup, err := Spool(strings.NewReader(content), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		recs, _, _, err := readSkipped(t, []string{path}, &Options{BatchBytes: 64, MaxRecordBytes: 150, SkipBad: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSources(t, recs); n != 201 {
			t.Errorf("%d records with a Source; want 201", n)
		}
		if recs[0].File != StdinName || recs[0].Source != path {
			t.Errorf("File %q, Source %q; want %q and the spool file %q", recs[0].File, recs[0].Source, StdinName, path)
		}
	})
	for _, name := range []string{"c.jsonl.gz", "c.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, dir, name, content)
			recs, _, _, err := readSkipped(t, []string{p}, &Options{MaxRecordBytes: 150, SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := checkSources(t, recs); n != 0 {
				t.Errorf("%d records of a compressed input have a Source; want 0", n)
			}
		})
	}
	t.Run("stdin", func(t *testing.T) {
		recs, _, _, err := readSkipped(t, []string{"-"}, &Options{Stdin: strings.NewReader(content), MaxRecordBytes: 150, SkipBad: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSources(t, recs); n != 0 {
			t.Errorf("%d records of standard input have a Source; want 0", n)
		}
	})
	t.Run("spooled gzip", func(t *testing.T) {
		path, cleanup, err := Spool(bytes.NewReader(compressBytes(t, "x.gz", []byte(content))), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		recs, _, _, err := readSkipped(t, []string{path}, &Options{MaxRecordBytes: 150, SkipBad: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 201 || checkSources(t, recs) != 0 {
			t.Errorf("%d records, some with a Source; want 201 without", len(recs))
		}
	})
}
