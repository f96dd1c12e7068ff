// Package docid is the one encoding of document ids in neardup's text
// outputs: the id field of every TSV the project writes and reads (pairs.tsv,
// the truth files of `neardup eval truth`), and the form in which an id reads
// back from any output, JSON ones included. Writers and readers call it, so
// that an id cannot be quoted one way and read another.
//
// # The TSV field
//
// An id is written as it is unless a TSV reader could take it for something
// else: when it holds a tab, a line feed, a carriage return or a double quote,
// or when it begins with '#' (a line that begins with '#' is a comment), it
// is written Go-quoted, as [strconv.Quote] quotes it. A field that begins with
// a double quote is read as a Go-quoted string; any other field is the id as
// it stands. The empty id is an empty field. Bytes that are not valid UTF-8
// are written as they are (or as \x escapes inside a quoted id).
//
// # Reading back
//
// A field reads back as the id's canonical form ([Canonical]): every byte that
// does not begin a valid UTF-8 sequence becomes U+FFFD, which is what
// encoding/json (and internal/jsontext) write for it into clusters.jsonl and
// report.json. So an id reads the same from pairs.tsv, from a truth file and
// from clusters.jsonl; two ids that differ only in their invalid bytes read
// alike, in every output.
//
// The functions keep no state: they are safe for concurrent use and
// deterministic.
package docid

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// ErrField reports a TSV id field that begins with a double quote but is not
// a valid Go-quoted string; check with errors.Is.
var ErrField = errors.New("docid: malformed quoted id")

// AppendField appends id to dst as a TSV field (see the package doc) and
// returns the extended buffer. It does not keep id.
func AppendField(dst, id []byte) []byte { return appendField(dst, id) }

// AppendFieldString is AppendField for an id held in a string.
func AppendFieldString(dst []byte, id string) []byte { return appendField(dst, id) }

func appendField[S string | []byte](dst []byte, id S) []byte {
	if NeedsQuote(string(id)) {
		return strconv.AppendQuote(dst, string(id))
	}
	return append(dst, id...)
}

// NeedsQuote reports whether id is written Go-quoted in a TSV field: whether
// it holds a tab, a line feed, a carriage return or a double quote, or
// begins with '#'.
func NeedsQuote(id string) bool {
	if len(id) > 0 && id[0] == '#' {
		return true
	}
	for i := 0; i < len(id); i++ {
		switch id[i] {
		case '\t', '\n', '\r', '"':
			return true
		}
	}
	return false
}

// ParseField reads a TSV id field written by AppendField (or by hand) and
// returns the id in its canonical form. A field that begins with a double
// quote must be a whole Go-quoted string; errors wrap ErrField and name the
// field.
func ParseField(field string) (string, error) {
	if len(field) == 0 || field[0] != '"' {
		return Canonical(field), nil
	}
	id, err := strconv.Unquote(field)
	if err != nil {
		return "", fmt.Errorf("%w: %s: want a Go-quoted string", ErrField, field)
	}
	return Canonical(id), nil
}

// Canonical returns id with every byte that does not begin a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json writes it: the form in which
// the id reads back from every output. A valid id is returned as it is,
// without allocating.
func Canonical(id string) string {
	if utf8.ValidString(id) {
		return id
	}
	b := make([]byte, 0, len(id)+8)
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRuneInString(id[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, id[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
