package jsontext

// safe marks the bytes that are copied unchanged without further checks:
// printable ASCII other than '"' and '\\'. Bytes from 0x80 up are not safe
// here; they start the UTF-8 path.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a quoted JSON string, escaped as
// encoding/json escapes it with HTML escaping off (see the package
// documentation: invalid UTF-8 becomes U+FFFD), and returns the extended
// buffer. It allocates only when dst must grow and does not keep s.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendBytes is AppendString for text held in a byte slice, with the same
// output. s must not share memory with dst's spare capacity.
func AppendBytes(dst, s []byte) []byte { return appendString(dst, s) }

// appendString is the one implementation behind AppendString and
// AppendBytes; being generic rather than converting between string and
// []byte keeps both free of copies.
func appendString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	// Whole words of eight safe bytes first: ids, and the start of ASCII
	// text, need no look at each byte (clusters.jsonl's ids at 5M short
	// documents: 0.06 CPU-s byte by byte). Only up to the first word that
	// needs a look: past it, text with many such bytes (escapes, UTF-8) is
	// faster byte by byte than with a failed word test every eight bytes.
	i := 0
	for i+8 <= len(s) && safeWord(load64(s, i)) {
		i += 8
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		n := utf8Len(s, i)
		switch {
		case n == 0:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			n = 1
		case n == 3 && c == 0xe2 && s[i+1] == 0x80 && s[i+2]&^1 == 0xa8: // U+2028, U+2029
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 returns s[i:i+8] as a little-endian word.
func load64[S string | []byte](s S, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// safeWord reports whether the eight bytes of w are all safe: none from
// 0x80 up, none below 0x20, none '"' or '\\'. hasZero(v) is set exactly
// when a byte of v is zero (the classic bit trick: a byte's high bit is
// set in v-ones only by a borrow or its own high bit, and ^v clears the
// latter), so it finds bytes below 0x20 in w-0x20·ones once the high bits
// are known clear, and equal ones in w xor the byte repeated.
func safeWord(w uint64) bool {
	hasZero := func(v uint64) bool { return (v-ones)&^v&highs != 0 }
	return w&highs == 0 && (w-0x20*ones)&highs == 0 && !hasZero(w^'"'*ones) && !hasZero(w^'\\'*ones)
}

// utf8Len returns the length of the valid UTF-8 sequence that starts at
// s[i], a byte of at least 0x80, or 0 if none does. It accepts exactly the
// sequences utf8.DecodeRune decodes (no overlong forms, surrogates or values
// past U+10FFFF), checked by TestUTF8Len; it exists because utf8 has no
// function for both strings and byte slices.
func utf8Len[S string | []byte](s S, i int) int {
	x := leads[s[i]]
	n := int(x.n)
	if n == 0 || len(s)-i < n || s[i+1] < x.lo || s[i+1] > x.hi {
		return 0
	}
	if n > 2 && s[i+2]&0xc0 != 0x80 || n > 3 && s[i+3]&0xc0 != 0x80 {
		return 0
	}
	return n
}

// lead describes the sequences a byte begins: their length (0 if it begins
// none) and the range of their second byte.
type lead struct{ n, lo, hi byte }

var leads = func() (t [256]lead) {
	for c := 0xc2; c < 0xf5; c++ {
		l := lead{n: 2, lo: 0x80, hi: 0xbf}
		switch {
		case c >= 0xf0:
			l.n = 4
		case c >= 0xe0:
			l.n = 3
		}
		switch c {
		case 0xe0:
			l.lo = 0xa0 // overlong
		case 0xed:
			l.hi = 0x9f // surrogates
		case 0xf0:
			l.lo = 0x90 // overlong
		case 0xf4:
			l.hi = 0x8f // past U+10FFFF
		}
		t[c] = l
	}
	return t
}()
