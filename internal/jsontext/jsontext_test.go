package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdEncode returns what encoding/json writes for s with HTML escaping off,
// without the trailing newline.
func stdEncode(tb testing.TB, s string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		tb.Fatalf("encoding/json: %v", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x07\x0b\x0e\x1b\x1f", `"\u0000\u0001\u0007\u000b\u000e\u001b\u001f"`},
		{"\x7f<&>", "\"\x7f<&>\""},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"\u2027\u202a\u2020", "\"\u2027\u202a\u2020\""}, // neighbours of U+2028/9 stay raw
		{"é✓😀\ufffd", "\"é✓😀\ufffd\""},
		{"bad\xff\xc3x", `"bad\ufffd\ufffdx"`},
		{"\x80\xbf", `"\ufffd\ufffd"`},                                        // lone continuation bytes
		{"\xc0\xaf\xc1\xbf", `"\ufffd\ufffd\ufffd\ufffd"`},                    // overlong two-byte
		{"\xe0\x80\xaf", `"\ufffd\ufffd\ufffd"`},                              // overlong three-byte
		{"\xf0\x80\x80\xaf", `"\ufffd\ufffd\ufffd\ufffd"`},                    // overlong four-byte
		{"\xed\xa0\x80\xed\xbf\xbf", `"` + strings.Repeat(`\ufffd`, 6) + `"`}, // surrogates
		{"\xf4\x90\x80\x80", `"\ufffd\ufffd\ufffd\ufffd"`},                    // past U+10FFFF
		{"\xf5\xf8\xfe", `"\ufffd\ufffd\ufffd"`},
		{"\xe2\x80", `"\ufffd\ufffd"`},                                      // truncated U+2028
		{"\xe2\x80\xa8\xe2", `"\u2028\ufffd"`},                              // U+2028, then a truncated one
		{"\xf0\x9f\x98", `"\ufffd\ufffd\ufffd"`},                            // truncated four-byte
		{"x\xed\x9f\xbfy\xf4\x8f\xbf\xbfz", "\"x\ud7ff" + "y\U0010ffffz\""}, // edges that are valid
	}
	for _, tc := range tests {
		std := stdEncode(t, tc.in)
		if string(std) != tc.want {
			t.Errorf("encoding/json(%q): got %s; want %s (the table is out of date)", tc.in, std, tc.want)
		}
		if got := AppendString([]byte("pre"), tc.in); string(got) != "pre"+tc.want {
			t.Errorf("AppendString(%q): got %s; want pre%s", tc.in, got, tc.want)
		}
		if got := AppendBytes([]byte("pre"), []byte(tc.in)); string(got) != "pre"+tc.want {
			t.Errorf("AppendBytes(%q): got %s; want pre%s", tc.in, got, tc.want)
		}
	}
}

// TestAppendStringBytes checks every string of one and two bytes, and of
// three bytes around the UTF-8 boundaries, against encoding/json.
func TestAppendStringBytes(t *testing.T) {
	edges := []byte{0x00, 0x08, 0x0c, 0x1f, 0x20, 0x22, 0x5c, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xa7, 0xa8, 0xa9, 0xaa, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	check := func(s string) {
		t.Helper()
		want := stdEncode(t, s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q): got %s; want %s", s, got, want)
		}
		if got := AppendBytes(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Fatalf("AppendBytes(%q): got %s; want %s", s, got, want)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
		for _, b := range edges {
			for _, c := range edges {
				check(string([]byte{byte(a), b, c}))
			}
		}
	}
}

// TestUTF8Len checks that utf8Len accepts exactly what utf8.DecodeRune
// decodes, for every first and second byte and the edge values of the rest.
func TestUTF8Len(t *testing.T) {
	edges := []byte{0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}
	var buf [4]byte
	for a := 0x80; a < 0x100; a++ {
		for b := range 256 {
			for _, c := range edges {
				for _, d := range edges {
					buf = [4]byte{byte(a), byte(b), c, d}
					for n := 1; n <= 4; n++ {
						s := buf[:n]
						r, size := utf8.DecodeRune(s)
						want := size
						if r == utf8.RuneError && size == 1 {
							want = 0
						}
						if got := utf8Len(s, 0); got != want {
							t.Fatalf("utf8Len(% x): got %d; want %d", s, got, want)
						}
						if got := utf8Len(string(s), 0); got != want {
							t.Fatalf("utf8Len(string % x): got %d; want %d", s, got, want)
						}
					}
				}
			}
		}
	}
}

func TestAppendStringAllocs(t *testing.T) {
	s := strings.Repeat("plain \"quoted\"\n\x01 é\u2028 \xff ", 50)
	b := []byte(s)
	dst := make([]byte, 0, 8*len(s)+2)
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], s) }); n != 0 {
		t.Errorf("AppendString: got %v allocations per run; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendBytes(dst[:0], b) }); n != 0 {
		t.Errorf("AppendBytes: got %v allocations per run; want 0", n)
	}
}

// TestAppendStringWords puts each kind of byte the eight-byte path must
// stop at (and its safe neighbours) at every position of strings of 7 to
// 25 bytes, against encoding/json.
func TestAppendStringWords(t *testing.T) {
	for _, b := range []string{"\x00", "\x1f", " ", "!", "\"", "#", "[", "\\", "]", "~", "\x7f", "\x80", "é", "\u2028", "\xff"} {
		for n := 7; n <= 25; n++ {
			for i := 0; i+len(b) <= n; i++ {
				s := strings.Repeat("a", i) + b + strings.Repeat("z", n-i-len(b))
				if got, want := AppendString(nil, s), stdEncode(t, s); !bytes.Equal(got, want) {
					t.Fatalf("AppendString(%q) = %s; want %s", s, got, want)
				}
				if got, want := AppendBytes(nil, []byte(s)), stdEncode(t, s); !bytes.Equal(got, want) {
					t.Fatalf("AppendBytes(%q) = %s; want %s", s, got, want)
				}
			}
		}
	}
}
