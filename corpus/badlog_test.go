package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestBadLog writes the errors of real bad records and checks every column,
// including the quoting of awkward file names, fields and reasons.
func TestBadLog(t *testing.T) {
	p, err := NewParser(&Options{KeepField: "q"})
	if err != nil {
		t.Fatal(err)
	}
	parseErr := func(file string, line int64, raw string) *RecordError {
		t.Helper()
		var d Document
		err := p.Parse(&Record{Raw: []byte(raw), File: file, Line: line, Index: line - 1}, &d)
		var re *RecordError
		if !errors.As(err, &re) {
			t.Fatalf("Parse(%s): got %v; want a *RecordError", raw, err)
		}
		return re
	}
	errs := []*RecordError{
		parseErr("a.jsonl", 3, `{"id":"x"}`),
		parseErr("a.jsonl", 4, `{"text":"t","q":"high"}`),
		parseErr("odd\tname.jsonl", 7, `{not json`),
		{File: "docs/big.html", Index: 12, Err: fmt.Errorf("%w: more than 10 bytes, over MaxRecordBytes (10)", ErrTooLarge)},
		{File: "#c.jsonl", Line: 1, Index: 13, Field: "-", Err: errors.New("two\nlines")},
	}
	var out bytes.Buffer
	l := NewBadLog(&out)
	for _, e := range errs[:2] {
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	var rest []RecordError
	for _, e := range errs[2:] {
		rest = append(rest, *e)
	}
	if err := l.Add(rest); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	want := BadLogHeader +
		"a.jsonl\t3\t2\ttext\tcorpus: missing field\n" +
		"a.jsonl\t4\t3\tq\tcorpus: not a finite JSON number: found a string\n" +
		`"odd\tname.jsonl"` + "\t7\t6\t-\tcorpus: not valid JSON: expected a key: 'n' at byte 1\n" +
		"docs/big.html\t-\t12\t-\tcorpus: record too large: more than 10 bytes, over MaxRecordBytes (10)\n" +
		`"#c.jsonl"` + "\t1\t13\t\"-\"\t\"two\\nlines\"\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if l.Count() != 5 {
		t.Errorf("Count() = %d; want 5", l.Count())
	}
	// Every line has five columns, and quoted columns read back.
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")[1:] {
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			t.Fatalf("line %d %q: %d columns; want 5", i+1, line, len(cols))
		}
		file := cols[0]
		if strings.HasPrefix(file, `"`) {
			if file, err = strconv.Unquote(file); err != nil {
				t.Fatalf("line %d: file %s: %v", i+1, cols[0], err)
			}
		}
		if file != errs[i].File {
			t.Errorf("line %d: file %q; want %q", i+1, file, errs[i].File)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestBadLogWriteError(t *testing.T) {
	l := NewBadLog(failWriter{})
	err := l.Write(&RecordError{File: "a", Line: 1, Err: ErrNotJSON})
	if err == nil {
		err = l.Flush()
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v; want the writer's error", err)
	}
}
