package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type pqRow struct {
	ID    string  `parquet:"id"`
	Text  string  `parquet:"text"`
	Score float64 `parquet:"score"`
	N     int64   `parquet:"n"`
	U     uint32  `parquet:"u"`
	Flag  bool    `parquet:"flag"`
	F32   float32 `parquet:"f32"`
	Note  *string `parquet:"note,optional"`
	Blob  []byte  `parquet:"blob"`
}

// writeParquet writes rows to dir/name, one row group per chunk of perGroup
// rows.
func writeParquet[T any](t *testing.T, dir, name string, rows []T, perGroup int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	for i := 0; i < len(rows); i += perGroup {
		if _, err := w.Write(rows[i:min(i+perGroup, len(rows))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func samplePQRows(n int) []pqRow {
	rows := make([]pqRow, n)
	for i := range rows {
		note := "note " + strconv.Itoa(i)
		rows[i] = pqRow{
			ID: "r" + strconv.Itoa(i), Text: "text \"" + strconv.Itoa(i) + "\"\nline two é",
			Score: float64(i) / 4, N: int64(-i), U: uint32(4000000000 + i), Flag: i%2 == 0,
			F32: 1.5, Blob: []byte{'b', byte(i)},
		}
		if i%3 != 0 {
			rows[i].Note = &note
		}
	}
	return rows
}

func TestReaderParquet(t *testing.T) {
	dir := t.TempDir()
	rows := samplePQRows(25)
	p := writeParquet(t, dir, "a.parquet", rows, 7) // row groups of 7, 7, 7, 4
	for _, bs := range []int{1, 200, 1 << 20} {
		opts := &Options{KeepField: "score", BatchBytes: bs}
		recs, st, err := readRecords(t, []string{p}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(rows) || st.Records != int64(len(rows)) || st.Files != 1 {
			t.Fatalf("got %d records, stats %+v; want %d", len(recs), st, len(rows))
		}
		parser, _ := NewParser(opts)
		for i, r := range recs {
			row := rows[i]
			if r.File != p || r.Line != int64(i+1) || r.Index != int64(i) || r.Format != FormatParquet {
				t.Errorf("record %d: got %s:%d index %d format %s; want %s:%d index %d parquet", i, r.File, r.Line, r.Index, r.Format, p, i+1, i)
			}
			var d Document
			if err := parser.Parse(&r, &d); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if string(d.ID) != row.ID || string(d.Text) != row.Text || !d.HasKeep || d.Keep != row.Score {
				t.Errorf("record %d: got %q %q %v; want %q %q %v", i, d.ID, d.Text, d.Keep, row.ID, row.Text, row.Score)
			}
			// Raw is the whole row as JSON, keys in schema order.
			var m map[string]any
			if err := json.Unmarshal(r.Raw, &m); err != nil {
				t.Fatalf("record %d: Raw %s is not JSON: %v", i, r.Raw, err)
			}
			var note any
			if row.Note != nil {
				note = *row.Note
			}
			want := map[string]any{"id": row.ID, "text": row.Text, "score": row.Score, "n": float64(row.N),
				"u": float64(row.U), "flag": row.Flag, "f32": 1.5, "note": note, "blob": string(row.Blob)}
			if !reflect.DeepEqual(m, want) {
				t.Errorf("record %d: got row %v; want %v", i, m, want)
			}
			if !bytes.HasPrefix(r.Raw, []byte(`{"id":`)) {
				t.Errorf("record %d: got %s; want keys in schema order, id first", i, r.Raw)
			}
		}
	}
	pr, _ := NewReader([]string{p}, nil)
	defer pr.Close()
	var b Batch
	for pr.Next(&b) == nil {
	}
	fi, _ := os.Stat(p)
	if got := pr.Progress(); got.Read != fi.Size() || got.Total != fi.Size() {
		t.Errorf("got progress %+v; want %d of %d", got, fi.Size(), fi.Size())
	}
}

func TestReaderParquetNumericID(t *testing.T) {
	type row struct {
		ID   int64  `parquet:"doc_id"`
		Body string `parquet:"body"`
	}
	dir := t.TempDir()
	p := writeParquet(t, dir, "n.parquet", []row{{7, "seven"}, {-3, "minus three"}}, 10)
	got, err := readDocs(t, []string{p}, &Options{IDField: "doc_id", TextField: "body"})
	if err != nil {
		t.Fatal(err)
	}
	want := []rec{{p, 1, 0, "7", "seven"}, {p, 2, 1, "-3", "minus three"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
	// Without an id column the id is the row number.
	got, err = readDocs(t, []string{p}, &Options{TextField: "body"})
	if err != nil || got[1].ID != "2" {
		t.Errorf("got %+v, %v; want the second id to be 2", got, err)
	}
}

func TestReaderParquetNested(t *testing.T) {
	type row struct {
		ID   string   `parquet:"id"`
		Text string   `parquet:"text"`
		Tags []string `parquet:"tags,list"`
	}
	dir := t.TempDir()
	rows := []row{{"a", "first", []string{"x", "y"}}, {"b", "second", nil}}
	p := writeParquet(t, dir, "nested.parquet", rows, 10)
	recs, _, err := readRecords(t, []string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parser, _ := NewParser(nil)
	for i, r := range recs {
		var d Document
		if err := parser.Parse(&r, &d); err != nil {
			t.Fatalf("record %d (%s): %v", i, r.Raw, err)
		}
		if string(d.ID) != rows[i].ID || string(d.Text) != rows[i].Text {
			t.Errorf("record %d: got %q %q; want %q %q", i, d.ID, d.Text, rows[i].ID, rows[i].Text)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(recs[0].Raw, &m); err != nil || !reflect.DeepEqual(m["tags"], []any{"x", "y"}) {
		t.Errorf("got %s (%v); want tags [x y]", recs[0].Raw, err)
	}
}

func TestReaderParquetErrors(t *testing.T) {
	type row struct {
		ID   string `parquet:"id"`
		Body string `parquet:"body"`
	}
	dir := t.TempDir()
	p := writeParquet(t, dir, "nobody.parquet", []row{{"a", "b"}}, 10)
	_, _, err := readRecords(t, []string{p}, nil)
	wantErr(t, err, ErrMissingField, p, `field "text"`)

	bad := writeFile(t, dir, "bad.parquet", "this is not parquet at all")
	_, _, err = readRecords(t, []string{bad}, nil)
	wantErr(t, err, ErrUnsupported, bad)

	// Text column of the wrong type: reported per record, like JSON Lines.
	type numText struct {
		Text int32 `parquet:"text"`
	}
	p = writeParquet(t, dir, "num.parquet", []numText{{1}, {2}}, 10)
	_, err = readDocs(t, []string{p}, nil)
	wantErr(t, err, ErrNotString, p+":1:", `field "text"`)

	// Rows over the limit.
	rows := []row{{"a", "short"}, {"b", string(bytes.Repeat([]byte("long "), 40))}, {"c", "short"}}
	p = writeParquet(t, dir, "long.parquet", rows, 10)
	_, _, err = readRecords(t, []string{p}, &Options{TextField: "body", MaxRecordBytes: 100})
	wantErr(t, err, ErrTooLarge, p+":2:")
	recs, skipped, st, err := readSkipped(t, []string{p}, &Options{TextField: "body", MaxRecordBytes: 100, SkipBad: true})
	if err != nil || len(recs) != 2 || recs[1].Index != 2 || st.Bad != 1 {
		t.Errorf("got %d records, %+v, %v; want 2 with the last at index 2 and 1 bad", len(recs), st, err)
	}
	if len(skipped) != 1 || skipped[0].Line != 2 || skipped[0].Index != 1 || !errors.Is(&skipped[0], ErrTooLarge) {
		t.Errorf("got skipped %v; want row 2 (index 1), too large", skipped)
	}
}

// TestReaderParquetSpooled reads Parquet from standard input through Spool.
func TestReaderParquetSpooled(t *testing.T) {
	dir := t.TempDir()
	rows := samplePQRows(5)
	p := writeParquet(t, dir, "a.parquet", rows, 2)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sp, cleanup, err := Spool(bytes.NewReader(data), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	got, err := readDocs(t, []string{sp}, &Options{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[4].ID != "r4" || got[4].File != StdinName {
		t.Errorf("got %+v; want 5 documents from %s", got, StdinName)
	}
}
