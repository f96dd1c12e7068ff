package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendString checks that AppendString and AppendBytes write what
// encoding/json writes, and that the output decodes with encoding/json to
// the same string as encoding/json's own round trip (invalid UTF-8 comes back
// as U+FFFD either way).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\b\f\n\r\t\x00\x1f\x7f", "<&>\u2028\u2029", "é✓😀", "bad\xff\xc3x", "\xed\xa0\x80", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := stdEncode(t, s)
		got := AppendString([]byte("pre"), s)
		if !bytes.HasPrefix(got, []byte("pre")) {
			t.Fatalf("AppendString(%q) lost dst: got %s", s, got)
		}
		got = got[3:]
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q): got %s; encoding/json writes %s", s, got, want)
		}
		if b := AppendBytes(nil, []byte(s)); !bytes.Equal(b, got) {
			t.Fatalf("AppendBytes(%q): got %s; AppendString writes %s", s, b, got)
		}
		var back, stdBack string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s does not decode: %v", s, got, err)
		}
		if err := json.Unmarshal(want, &stdBack); err != nil {
			t.Fatalf("encoding/json's %s does not decode: %v", want, err)
		}
		if back != stdBack {
			t.Fatalf("%q came back as %q; encoding/json's round trip gives %q", s, back, stdBack)
		}
	})
}
