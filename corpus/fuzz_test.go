package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"
)

// jsonUTF8 is what encoding/json makes of raw string bytes: every byte of
// invalid UTF-8 becomes U+FFFD. The Parser passes such bytes through, so its
// text equals encoding/json's after this mapping.
func jsonUTF8(b []byte) string {
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// FuzzParseJSONL checks the Parser against encoding/json on any line: it
// never panics; it accepts exactly the records encoding/json finds valid;
// it classifies the rest as encoding/json's decoding does; and the text it
// returns is encoding/json's (up to invalid UTF-8, which it passes through)
// and round-trips through json.Marshal and json.Unmarshal.
func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"hello"}`,
		`{"id":7,"text":"x","keep":1.5e3}`,
		`{"text":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800"}`,
		`{"te\u0078t":"k","text":"last"}`,
		"{\"text\":\"bad utf8 \xff\"}",
		`{"id":null,"text":"","keep":null,"o":{"a":[1,-0.5e-3,true,false,null,{}]}}`,
		`[{"text":"array"}]`,
		`{"text":5}`,
		`{"text":"a",}`,
		`{"text":01}`,
		` {"text" : "spaces" } `,
	} {
		f.Add([]byte(s))
	}
	p, err := NewParser(&Options{KeepField: "keep"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rec := Record{Raw: raw, File: "fuzz", Line: 3}
		var doc Document
		err := p.Parse(&rec, &doc)
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) || re.File != "fuzz" || re.Line != 3 {
				t.Fatalf("got %v; want a *RecordError for fuzz:3", err)
			}
		}

		if !json.Valid(raw) {
			if !errors.Is(err, ErrNotJSON) {
				t.Fatalf("encoding/json rejects %q; got %v, want ErrNotJSON", raw, err)
			}
			return
		}
		if errors.Is(err, ErrNotJSON) {
			t.Fatalf("encoding/json accepts %q; got %v", raw, err)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("json.Valid(%q) but Decode: %v", raw, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			if !errors.Is(err, ErrNotObject) {
				t.Fatalf("%q is not an object; got %v, want ErrNotObject", raw, err)
			}
			return
		}

		// Work out what the Parser must say, in its order of checks.
		var want error
		text, hasText := m["text"]
		id, hasID := m["id"]
		keep, hasKeep := m["keep"]
		textStr, textOK := text.(string)
		switch {
		case !hasText:
			want = ErrMissingField
		case !textOK:
			want = ErrNotString
		}
		if want == nil && hasID {
			switch id.(type) {
			case string, json.Number, nil:
			default:
				want = ErrBadID
			}
		}
		var keepVal float64
		if want == nil && hasKeep && keep != nil {
			n, ok := keep.(json.Number)
			if !ok {
				want = ErrNotNumber
			} else if v, perr := strconv.ParseFloat(string(n), 64); perr != nil || math.IsInf(v, 0) {
				want = ErrNotNumber
			} else {
				keepVal = v
			}
		}
		if want != nil {
			if !errors.Is(err, want) {
				t.Fatalf("%q: got %v; want %v", raw, err, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: got %v; want success", raw, err)
		}

		if got := jsonUTF8(doc.Text); got != textStr {
			t.Fatalf("%q: got text %q; encoding/json says %q", raw, got, textStr)
		}
		wantID := "3"
		switch id := id.(type) {
		case string:
			wantID = id
		case json.Number:
			wantID = string(id)
		}
		if got := jsonUTF8(doc.ID); got != wantID {
			t.Fatalf("%q: got id %q; want %q", raw, got, wantID)
		}
		if doc.HasKeep != (hasKeep && keep != nil) || doc.Keep != keepVal {
			t.Fatalf("%q: got keep %v/%v; want %v", raw, doc.Keep, doc.HasKeep, keep)
		}

		// Round trip: text -> JSON string (ours and encoding/json's) -> text.
		for _, enc := range [][]byte{appendJSONString(nil, doc.Text), mustMarshal(t, string(doc.Text))} {
			var back string
			if err := json.Unmarshal(enc, &back); err != nil {
				t.Fatalf("%q: encoded text %s does not decode: %v", raw, enc, err)
			}
			if back != jsonUTF8(doc.Text) {
				t.Fatalf("%q: text %q came back as %q", raw, doc.Text, back)
			}
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
