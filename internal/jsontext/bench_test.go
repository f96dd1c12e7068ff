package jsontext

import (
	"strconv"
	"strings"
	"testing"
)

var sinkBytes []byte

// benchTexts are the kinds of text BenchmarkAppendString encodes: prose
// that needs no escape, code-like text with an escape every few bytes, and
// mixed Latin, CJK and symbols (multi-byte UTF-8 with a U+2028 now and then).
var benchTexts = []struct{ name, unit string }{
	{"ascii", "The quick brown fox jumps over the lazy dog, again and again. "},
	{"escapes", "if x == \"y\" {\n\treturn a\\b\r\n}\n"},
	{"utf8", "Größe naïve café — 東京の日本語テキスト ✓ \u2028 "},
}

// BenchmarkAppendString encodes each kind of text in sizes from 16 bytes to
// 64 KiB, from a string and from a byte slice, into a reused buffer. Bytes are
// input bytes.
func BenchmarkAppendString(b *testing.B) {
	for _, kind := range benchTexts {
		for _, size := range []int{16, 256, 4096, 65536} {
			s := strings.Repeat(kind.unit, size/len(kind.unit)+1)[:size]
			bs := []byte(s)
			name := kind.name + "/" + strconv.Itoa(size)
			b.Run(name+"/string", func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				dst := make([]byte, 0, 8*size+2)
				for b.Loop() {
					dst = AppendString(dst[:0], s)
				}
				sinkBytes = dst
			})
			b.Run(name+"/bytes", func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				dst := make([]byte, 0, 8*size+2)
				for b.Loop() {
					dst = AppendBytes(dst[:0], bs)
				}
				sinkBytes = dst
			})
		}
	}
}
