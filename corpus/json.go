package corpus

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/jsontext"
)

// This file holds a small JSON scanner specialised for one job: find a few
// top-level keys of one object and report where their values lie, validating
// the whole record as RFC 8259 requires (it accepts exactly what
// encoding/json.Valid accepts, checked by FuzzParseJSONL) but never building
// values it does not need.
//
// Why not a library (BenchmarkParseJSON, articles as JSON Lines, 2-core
// EPYC, busy): encoding/json runs at ~110 MB/s with 5 allocations a record;
// valyala/fastjson at 3-5 GB/s; this scanner at 2.2-2.4 GB/s, 0 allocations.
// fastjson is faster because it does not validate: it keeps invalid escapes,
// raw control characters and NaN as they are, lets the first of duplicate
// keys win (encoding/json: the last), and builds its errors with fmt and no
// offsets. Both are far above the 300 MB/s a core the batch job needs, so we
// take strictness and precise errors over the difference.

// maxNesting is the deepest nesting of objects and arrays accepted; it matches
// encoding/json so that both accept the same records.
const maxNesting = 10000

// valueKind is the JSON type of a scanned value.
type valueKind uint8

const (
	kindNone valueKind = iota
	kindString
	kindNumber
	kindBool
	kindNull
	kindObject
	kindArray
)

// String names the kind for error messages ("found a number").
func (k valueKind) String() string {
	switch k {
	case kindString:
		return "a string"
	case kindNumber:
		return "a number"
	case kindBool:
		return "a boolean"
	case kindNull:
		return "null"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "nothing"
}

// scanner validates JSON in b. Its methods return the offset after what they
// consumed and false on failure, leaving the reason in why and the offset in at.
type scanner struct {
	b   []byte
	why string
	at  int
}

func (s *scanner) fail(at int, why string) bool {
	s.at, s.why = at, why
	return false
}

// isSpace reports JSON whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialInString reports bytes that end the plain run inside a JSON string:
// the closing quote, a backslash, or a control character (invalid unescaped).
func specialInString(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

// hasControl reports whether b holds a byte below 0x20. It tests eight bytes
// a step with the SWAR has-less-than trick, (x - 0x20..) &^ x & 0x80.., which
// is exact for "is there such a byte" and needs no branch per word.
func hasControl(b []byte) bool {
	var acc uint64
	for len(b) >= 16 {
		x := binary.LittleEndian.Uint64(b)
		y := binary.LittleEndian.Uint64(b[8:])
		acc |= (x-lsb*0x20)&^x | (y-lsb*0x20)&^y
		b = b[16:]
	}
	if len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		acc |= (x - lsb*0x20) &^ x
		b = b[8:]
	}
	if acc&msb != 0 {
		return true
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// indexBackslash returns the index of the first '\\' in p, or -1. It looks
// at the first 16 bytes eight at a time (the zero-byte trick on p XOR
// '\\'s, whose lowest set bit is exact) before calling bytes.IndexByte: in
// text dense in escapes — source code, Python's ensure_ascii output — the
// next one is usually that close, and IndexByte's set-up costs more than
// the search.
func indexBackslash(p []byte) int {
	if len(p) < 16 {
		return bytes.IndexByte(p, '\\')
	}
	x := binary.LittleEndian.Uint64(p) ^ lsb*'\\'
	if z := (x - lsb) &^ x & msb; z != 0 {
		return bits.TrailingZeros64(z) >> 3
	}
	y := binary.LittleEndian.Uint64(p[8:]) ^ lsb*'\\'
	if z := (y - lsb) &^ y & msb; z != 0 {
		return 8 + bits.TrailingZeros64(z)>>3
	}
	if i := bytes.IndexByte(p[16:], '\\'); i >= 0 {
		return 16 + i
	}
	return -1
}

func isHex(c byte) bool {
	return c-'0' < 10 || (c|0x20)-'a' < 6
}

// scanString scans a string whose opening quote is at i-1. It returns the
// offset of the closing quote and whether the string holds escapes.
//
// This is most of the cost of parsing a record, so it leans on the
// vectorised bytes.IndexByte: find the next '"' and, before it, the next
// '\\'; the run up to the first of them then only needs a branch-free check
// for control characters (hasControl). Quote positions found are reused, so
// a string with many escapes is still scanned in linear time. Replacing one
// SWAR loop that looked for all three kinds of byte at once took
// BenchmarkParseJSON from ~1.6 to ~2.4-3 GB/s; the SWAR loop still wins on
// strings under ~32 bytes (BenchmarkScanString), which cost little anyway. (Checking the run for '\\' and
// control characters in one SWAR pass before looking for the '\\' was
// slower on real records: most hold an escape somewhere.)
//
// With out not nil, a string that holds escapes is also decoded into *out
// (its backing array reused) as appendUnescaped would decode it, in the same
// pass: the parser does so for the text field, whose escapes would otherwise
// be searched for twice.
func (s *scanner) scanString(i int, out *[]byte) (int, bool, bool) {
	b := s.b
	esc := false
	quote := -1 // offset of the next '"' at or after i, once known
	var dst []byte
	if out != nil {
		dst = (*out)[:0]
	}
	for {
		if quote < i {
			q := bytes.IndexByte(b[i:], '"')
			if q < 0 {
				if at := firstControl(b, i, len(b)); at >= 0 {
					return at, esc, s.fail(at, "control character in string")
				}
				return len(b), esc, s.fail(len(b), "unterminated string")
			}
			quote = i + q
		}
		end := quote
		bs := indexBackslash(b[i:quote])
		if bs >= 0 {
			end = i + bs
		}
		if hasControl(b[i:end]) {
			at := firstControl(b, i, end)
			return at, esc, s.fail(at, "control character in string")
		}
		if bs < 0 {
			if esc && out != nil {
				*out = append(dst, b[i:quote]...)
			}
			return quote, esc, true
		}
		// An escape at end.
		esc = true
		if out != nil {
			dst = append(dst, b[i:end]...)
		}
		i = end
		if i+1 >= len(b) {
			return i + 1, esc, s.fail(i+1, "unterminated string")
		}
		switch c := b[i+1]; c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			if out != nil {
				dst = append(dst, unescaped[c])
			}
			i += 2
		case 'u':
			for j := i + 2; j < i+6; j++ {
				if j >= len(b) || !isHex(b[j]) {
					return j, esc, s.fail(j, "invalid \\u escape")
				}
			}
			if out != nil {
				dst, i = appendUEscape(dst, b, i)
			} else {
				i += 6
			}
		default:
			return i + 1, esc, s.fail(i+1, "invalid escape")
		}
	}
}

// firstControl returns the offset of the first byte below 0x20 in b[i:end],
// or -1.
func firstControl(b []byte, i, end int) int {
	for ; i < end; i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

// scanNumber scans a number starting at i.
func (s *scanner) scanNumber(i int) (int, bool) {
	b := s.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, s.fail(i, "truncated number")
	case b[i] == '0':
		i++
	case b[i]-'1' < 9:
		i++
		for i < len(b) && b[i]-'0' < 10 {
			i++
		}
	default:
		return i, s.fail(i, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i]-'0' >= 10 {
			return i, s.fail(i, "invalid number")
		}
		for i < len(b) && b[i]-'0' < 10 {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i]-'0' >= 10 {
			return i, s.fail(i, "invalid number")
		}
		for i < len(b) && b[i]-'0' < 10 {
			i++
		}
	}
	return i, true
}

// scanLiteral scans the literal lit starting at i.
func (s *scanner) scanLiteral(i int, lit string) (int, bool) {
	b := s.b
	for j := 0; j < len(lit); j++ {
		if i+j >= len(b) || b[i+j] != lit[j] {
			return i + j, s.fail(i+j, "invalid literal")
		}
	}
	return i + len(lit), true
}

// scanValue scans one value starting at i (no leading space) inside depth
// enclosing containers. It returns the end offset, the value's kind and
// whether a string value holds escapes.
func (s *scanner) scanValue(i, depth int) (int, valueKind, bool, bool) {
	b := s.b
	if i >= len(b) {
		return i, kindNone, false, s.fail(i, "unexpected end of input")
	}
	switch c := b[i]; c {
	case '"':
		end, esc, ok := s.scanString(i+1, nil)
		return end + 1, kindString, esc, ok
	case '{':
		end, ok := s.scanObject(i+1, depth+1)
		return end, kindObject, false, ok
	case '[':
		end, ok := s.scanArray(i+1, depth+1)
		return end, kindArray, false, ok
	case 't':
		end, ok := s.scanLiteral(i, "true")
		return end, kindBool, false, ok
	case 'f':
		end, ok := s.scanLiteral(i, "false")
		return end, kindBool, false, ok
	case 'n':
		end, ok := s.scanLiteral(i, "null")
		return end, kindNull, false, ok
	default:
		if c == '-' || c-'0' < 10 {
			end, ok := s.scanNumber(i)
			return end, kindNumber, false, ok
		}
		return i, kindNone, false, s.fail(i, "unexpected character")
	}
}

// scanObject scans the rest of an object whose '{' is at i-1.
func (s *scanner) scanObject(i, depth int) (int, bool) {
	if depth > maxNesting {
		return i - 1, s.fail(i-1, "nesting too deep")
	}
	b := s.b
	i = skipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, s.fail(i, "expected a key")
		}
		end, _, ok := s.scanString(i+1, nil)
		if !ok {
			return end, false
		}
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return i, s.fail(i, "expected ':'")
		}
		i = skipSpace(b, i+1)
		if i, _, _, ok = s.scanValue(i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		return i, s.fail(i, "expected ',' or '}'")
	}
}

// scanArray scans the rest of an array whose '[' is at i-1.
func (s *scanner) scanArray(i, depth int) (int, bool) {
	if depth > maxNesting {
		return i - 1, s.fail(i-1, "nesting too deep")
	}
	b := s.b
	i = skipSpace(b, i)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, _, _, ok = s.scanValue(i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		return i, s.fail(i, "expected ',' or ']'")
	}
}

// hex4 decodes four hex digits that scanString has validated.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		default:
			c = (c | 0x20) - 'a' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unescaped maps the byte after a backslash of a one-character escape to the
// byte it stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendUEscape appends the code point of the \uXXXX escape at s[i:] (its
// hex digits valid) to dst and returns where the escape ends. A high
// surrogate followed by a \u escape of a low one (all four hex digits valid)
// makes one code point of both; any other surrogate is U+FFFD, as
// encoding/json decodes them.
func appendUEscape(dst, s []byte, i int) ([]byte, int) {
	r := hex4(s[i+2:])
	i += 6
	if utf16.IsSurrogate(r) {
		r2 := utf8.RuneError
		if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' &&
			isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) {
			r2 = utf16.DecodeRune(r, hex4(s[i+2:]))
		}
		if r2 != utf8.RuneError {
			i += 6
		}
		r = r2
	}
	return utf8.AppendRune(dst, r), i
}

// appendUnescaped appends the decoded contents of a JSON string body s (the
// bytes between the quotes, validated by scanString) to dst. Escapes decode as
// in encoding/json, including its handling of unpaired surrogates (U+FFFD);
// unlike encoding/json, raw bytes that are not valid UTF-8 are copied as they
// are.
func appendUnescaped(dst, s []byte) []byte {
	for {
		i := indexBackslash(s)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		if c := s[i+1]; c != 'u' {
			dst = append(dst, unescaped[c])
			s = s[i+2:]
			continue
		}
		var end int
		dst, end = appendUEscape(dst, s, i)
		s = s[end:]
	}
}

// appendJSONString appends s as a quoted JSON string to dst, escaped as
// encoding/json escapes it with HTML escaping off (invalid UTF-8 becomes
// U+FFFD), so the output is always valid JSON. It is jsontext.AppendBytes
// under the name this package's writers use.
func appendJSONString(dst, s []byte) []byte { return jsontext.AppendBytes(dst, s) }
