package corpus

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, raw string
		opts      *Options
		id, text  string
		keep      float64
		hasKeep   bool
	}{
		{"plain", `{"id":"a1","text":"hello world"}`, nil, "a1", "hello world", 0, false},
		{"spaces", " \t{ \"text\" : \"x\" , \"id\" : \"y\" } \t", nil, "y", "x", 0, false},
		{"numeric id", `{"id":-12.5e3,"text":"t"}`, nil, "-12.5e3", "t", 0, false},
		{"integer id", `{"id":7,"text":"t"}`, nil, "7", "t", 0, false},
		{"missing id", `{"text":"t"}`, nil, "17", "t", 0, false},
		{"null id", `{"id":null,"text":"t"}`, nil, "17", "t", 0, false},
		{"escapes", `{"id":"i\"d","text":"a\"b\\c\/d\b\f\n\r\t"}`, nil, `i"d`, "a\"b\\c/d\b\f\n\r\t", 0, false},
		{"unicode escapes", `{"text":"\u00e9\u4e2d\ud83d\ude00\u0000"}`, nil, "17", "é中😀\x00", 0, false},
		{"lone surrogates", `{"text":"a\ud800b\udc00c\ud800\u0041"}`, nil, "17", "a\uFFFDb\uFFFDc\uFFFDA", 0, false},
		{"high surrogate then escape", `{"text":"\ud83d\n"}`, nil, "17", "\uFFFD\n", 0, false},
		{"raw utf8", `{"text":"naïve café 中文"}`, nil, "17", "naïve café 中文", 0, false},
		{"invalid utf8 passes", "{\"text\":\"a\xffb\xc3\"}", nil, "17", "a\xffb\xc3", 0, false},
		{"empty text", `{"text":""}`, nil, "17", "", 0, false},
		{"last key wins", `{"text":"first","text":"second","id":"x","id":"y"}`, nil, "y", "second", 0, false},
		{"escaped key", `{"te\u0078t":"via escaped key"}`, nil, "17", "via escaped key", 0, false},
		{"other fields", `{"meta":{"text":"nested, not ours","a":[1,"2",[{}],true,false,null]},"text":"top"}`, nil, "17", "top", 0, false},
		{"custom fields", `{"doc_id":"d","body":"b","text":"not this","q":0.25}`,
			&Options{IDField: "doc_id", TextField: "body", KeepField: "q"}, "d", "b", 0.25, true},
		{"keep integer", `{"text":"t","keep":3}`, &Options{KeepField: "keep"}, "17", "t", 3, true},
		{"keep null", `{"text":"t","keep":null}`, &Options{KeepField: "keep"}, "17", "t", 0, false},
		{"keep missing", `{"text":"t"}`, &Options{KeepField: "keep"}, "17", "t", 0, false},
		{"empty key does not match unset keep", `{"":1,"text":"t"}`, nil, "17", "t", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewParser(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var d Document
			rec := Record{Raw: []byte(tc.raw), File: "f.jsonl", Line: 17, Index: 3, Format: FormatJSONL}
			if err := p.Parse(&rec, &d); err != nil {
				t.Fatalf("Parse(%s): %v", tc.raw, err)
			}
			if string(d.ID) != tc.id || string(d.Text) != tc.text || d.Keep != tc.keep || d.HasKeep != tc.hasKeep || d.Index != 3 {
				t.Errorf("Parse(%s): got id %q text %q keep %v/%v index %d; want %q %q %v/%v 3",
					tc.raw, d.ID, d.Text, d.Keep, d.HasKeep, d.Index, tc.id, tc.text, tc.keep, tc.hasKeep)
			}
			// Stats().Keep counts the documents that had a keep value, so
			// a command can tell that a keep field never appears.
			if want := map[bool]int64{true: 1}[tc.hasKeep]; p.Stats().Keep != want {
				t.Errorf("Parse(%s): got Stats().Keep %d; want %d", tc.raw, p.Stats().Keep, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)
	tests := []struct {
		name, raw string
		target    error
		field     string
		frags     []string
	}{
		{"empty", ``, ErrNotJSON, "", []string{"empty record"}},
		{"garbage", `hello`, ErrNotJSON, "", []string{"'h' at byte 0"}},
		{"array", `[1,2]`, ErrNotObject, "", []string{"found an array"}},
		{"string", `"text"`, ErrNotObject, "", []string{"found a string"}},
		{"number then junk", `1 2`, ErrNotJSON, "", []string{"data after the value"}},
		{"truncated", `{"text":"abc`, ErrNotJSON, "", []string{"unterminated string"}},
		{"no colon", `{"text" "abc"}`, ErrNotJSON, "", []string{"expected ':'"}},
		{"trailing comma", `{"text":"abc",}`, ErrNotJSON, "", []string{"expected a key"}},
		{"two objects", `{"text":"a"}{"text":"b"}`, ErrNotJSON, "", []string{"data after the object"}},
		{"control char", "{\"text\":\"a\tb\"}", ErrNotJSON, "", []string{"control character", `'\t' at byte 10`}},
		{"bad escape", `{"text":"a\xb"}`, ErrNotJSON, "", []string{"invalid escape"}},
		{"bad unicode escape", `{"text":"\u12G4"}`, ErrNotJSON, "", []string{"invalid \\u escape"}},
		{"leading zero", `{"text":"t","n":01}`, ErrNotJSON, "", nil},
		{"bare dot", `{"text":"t","n":1.}`, ErrNotJSON, "", []string{"invalid number"}},
		{"nan", `{"text":"t","n":NaN}`, ErrNotJSON, "", nil},
		{"bad literal", `{"text":"t","b":tru}`, ErrNotJSON, "", []string{"invalid literal"}},
		{"single quotes", `{'text':'t'}`, ErrNotJSON, "", []string{"expected a key"}},
		{"too deep", `{"text":"t","d":` + deep + `}`, ErrNotJSON, "", []string{"nesting too deep"}},
		{"missing text", `{"id":"x"}`, ErrMissingField, "text", nil},
		{"text number", `{"text":12}`, ErrNotString, "text", []string{"found a number"}},
		{"text null", `{"text":null}`, ErrNotString, "text", []string{"found null"}},
		{"text object", `{"text":{"a":"b"}}`, ErrNotString, "text", []string{"found an object"}},
		{"id bool", `{"id":true,"text":"t"}`, ErrBadID, "id", []string{"found a boolean"}},
		{"id array", `{"id":[1],"text":"t"}`, ErrBadID, "id", []string{"found an array"}},
		{"keep string", `{"text":"t","keep":"0.5"}`, ErrNotNumber, "keep", []string{"found a string"}},
		{"keep overflow", `{"text":"t","keep":1e999}`, ErrNotNumber, "keep", []string{"1e999 is out of range"}},
	}
	p, err := NewParser(&Options{KeepField: "keep"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d Document
			rec := Record{Raw: []byte(tc.raw), File: "in.jsonl", Line: 9, Index: 4}
			err := p.Parse(&rec, &d)
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("Parse(%.40s): got %v; want a *RecordError", tc.raw, err)
			}
			if re.File != "in.jsonl" || re.Line != 9 || re.Index != 4 || re.Field != tc.field {
				t.Errorf("got File %q Line %d Index %d Field %q; want in.jsonl 9 4 %q", re.File, re.Line, re.Index, re.Field, tc.field)
			}
			prefix := "in.jsonl:9: "
			if tc.field != "" {
				prefix += `field "` + tc.field + `": `
			}
			wantErr(t, err, tc.target, append(tc.frags, prefix)...)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("got message %q; want it to start with %q", err, prefix)
			}
		})
	}
	if got := p.Stats().Bad; got != int64(len(tests)) {
		t.Errorf("got Stats().Bad %d; want %d", got, len(tests))
	}
}

// TestParseNesting checks the nesting limit matches encoding/json's: the
// top-level object is depth 1.
func TestParseNesting(t *testing.T) {
	p, _ := NewParser(nil)
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{2, true}, {maxNesting, true}, {maxNesting + 1, false}} {
		inner := tc.depth - 1
		raw := `{"text":"t","d":` + strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}`
		var d Document
		err := p.Parse(&Record{Raw: []byte(raw)}, &d)
		if (err == nil) != tc.ok {
			t.Errorf("depth %d: got %v; want ok=%v", tc.depth, err, tc.ok)
		}
	}
}

func TestParseTextFormats(t *testing.T) {
	p, _ := NewParser(nil)
	var d Document
	if err := p.Parse(&Record{Raw: []byte(`{"not":"json parsed"}`), Line: 12, Index: 5, Format: FormatLines}, &d); err != nil {
		t.Fatal(err)
	}
	if string(d.ID) != "12" || string(d.Text) != `{"not":"json parsed"}` || d.Index != 5 {
		t.Errorf("lines: got %q %q %d; want 12, the raw line, 5", d.ID, d.Text, d.Index)
	}
	if err := p.Parse(&Record{Raw: []byte("file\nbody"), Name: "a/b.txt", Line: 1, Format: FormatDir}, &d); err != nil {
		t.Fatal(err)
	}
	if string(d.ID) != "a/b.txt" || string(d.Text) != "file\nbody" {
		t.Errorf("dir: got %q %q; want a/b.txt and the file", d.ID, d.Text)
	}
}

func TestParseAllocs(t *testing.T) {
	p, _ := NewParser(&Options{KeepField: "score"})
	recs := []Record{
		{Raw: []byte(`{"id":"x1","text":"plain text without escapes","score":0.75}`), Line: 1},
		{Raw: []byte(`{"id":"x\"2","text":"text with \"escapes\" and \u00e9","score":12}`), Line: 2},
		{Raw: []byte(`{"text":"no id","meta":{"a":[1,2,3]}}`), Line: 123456},
	}
	var d Document
	for i := range recs { // warm the scratch buffers
		if err := p.Parse(&recs[i], &d); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range recs {
			p.Parse(&recs[i], &d)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per run; want 0", allocs)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\n\r\t\x00\x1f\x7f", `"\n\r\t\u0000\u001f` + "\x7f" + `"`},
		{"\b\f", `"\b\f"`},
		{"<&>\u2028\u2029é", `"<&>\u2028\u2029é"`},
		{"bad\xff\xc3x", `"bad\ufffd\ufffdx"`},
	} {
		if got := string(appendJSONString([]byte("pre"), []byte(tc.in))); got != "pre"+tc.want {
			t.Errorf("appendJSONString(%q): got %s; want pre%s", tc.in, got, tc.want)
		}
	}
}
