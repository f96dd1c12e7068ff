package docid

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestField: golden fields for every rule, and the round trip.
func TestField(t *testing.T) {
	for _, c := range []struct{ id, field, back string }{
		{"", "", ""},
		{"doc-7", "doc-7", "doc-7"},
		{"sp ace", "sp ace", "sp ace"},
		{" lead", " lead", " lead"},
		{"#", `"#"`, "#"},
		{"#hash", `"#hash"`, "#hash"},
		{"a#b", "a#b", "a#b"},
		{"tab\there", `"tab\there"`, "tab\there"},
		{"new\nline", `"new\nline"`, "new\nline"},
		{"cr\rx", `"cr\rx"`, "cr\rx"},
		{`quote"q`, `"quote\"q"`, `quote"q`},
		{`"start`, `"\"start"`, `"start`},
		{"\\back", "\\back", "\\back"},
		{"<html>&amp;", "<html>&amp;", "<html>&amp;"},
		{"ünï🙂", "ünï🙂", "ünï🙂"},
		{"bad\xffbyte", "bad\xffbyte", "bad\uFFFDbyte"},
		{"#\xff", `"#\xff"`, "#\uFFFD"},
		{"ok\xc3", "ok\xc3", "ok\uFFFD"},
		{"\xfe\xfe\tx", `"\xfe\xfe\tx"`, "\uFFFD\uFFFD\tx"},
	} {
		got := string(AppendFieldString(nil, c.id))
		if got != c.field {
			t.Errorf("AppendFieldString(%q) = %q; want %q", c.id, got, c.field)
		}
		if b := string(AppendField([]byte("x"), []byte(c.id))); b != "x"+c.field {
			t.Errorf("AppendField(x, %q) = %q; want %q", c.id, b, "x"+c.field)
		}
		back, err := ParseField(got)
		if err != nil || back != c.back {
			t.Errorf("ParseField(%q) = %q, %v; want %q", got, back, err, c.back)
		}
	}
}

// TestParseFieldErrors: a field that begins with a quote must be one quoted
// string.
func TestParseFieldErrors(t *testing.T) {
	for _, f := range []string{`"`, `"abc`, `"a"b`, `"\q"`} {
		if _, err := ParseField(f); !errors.Is(err, ErrField) {
			t.Errorf("ParseField(%q): err = %v; want ErrField", f, err)
		}
	}
}

// TestCanonicalIsJSON: Canonical is what encoding/json makes of an id.
func TestCanonicalIsJSON(t *testing.T) {
	for _, id := range []string{"", "abc", "a\xffb", "\xc3", "\xc3\x28", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xef\xbf\xbd", "é\x80\x80é"} {
		if got, want := Canonical(id), viaJSON(t, id); got != want {
			t.Errorf("Canonical(%q) = %q; want %q (encoding/json)", id, got, want)
		}
	}
}

func viaJSON(t testing.TB, id string) string {
	t.Helper()
	b, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzField: any id round-trips to its canonical form, which is what
// encoding/json reads back, and its field holds no tab or line break and does
// not begin with '#'.
func FuzzField(f *testing.F) {
	for _, s := range []string{"", "a", "#a", "a\tb", "\"", "\xff", "#\xff\t", "\u2028", "\\x41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		field := string(AppendFieldString(nil, id))
		if strings.ContainsAny(field, "\t\n\r") || strings.HasPrefix(field, "#") {
			t.Fatalf("field %q of %q holds a separator or begins a comment", field, id)
		}
		back, err := ParseField(field)
		if err != nil {
			t.Fatalf("ParseField(%q): %v", field, err)
		}
		if back != Canonical(id) || back != viaJSON(t, id) {
			t.Fatalf("%q reads back %q; want %q", id, back, Canonical(id))
		}
		if !utf8.ValidString(back) {
			t.Fatalf("%q reads back invalid UTF-8 %q", id, back)
		}
	})
}

func BenchmarkAppendField(b *testing.B) {
	ids := [][]byte{[]byte("doc-000123456"), []byte("https://example.com/a/b/c?d=e"), []byte("#x\ty")}
	var n int64
	for _, id := range ids {
		n += int64(len(id))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		dst = dst[:0]
		for _, id := range ids {
			dst = AppendField(dst, id)
		}
	}
	sink = dst
}

var sink []byte
