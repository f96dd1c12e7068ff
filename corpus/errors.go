package corpus

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Errors returned by this package wrap them with details
// (file, line, field, offending value); check with errors.Is.
var (
	// ErrNotJSON means a JSON Lines record is not valid JSON (RFC 8259).
	ErrNotJSON = errors.New("corpus: not valid JSON")
	// ErrNotObject means a JSON Lines record is valid JSON but not an object.
	ErrNotObject = errors.New("corpus: not a JSON object")
	// ErrMissingField means a record or a Parquet schema lacks the text field.
	ErrMissingField = errors.New("corpus: missing field")
	// ErrNotString means the text field holds something other than a string.
	ErrNotString = errors.New("corpus: not a JSON string")
	// ErrNotNumber means the keep field holds something other than a finite number.
	ErrNotNumber = errors.New("corpus: not a finite JSON number")
	// ErrBadID means the id field is neither a string, a number nor null.
	ErrBadID = errors.New("corpus: id is neither a string nor a number")
	// ErrTooLarge means a record is longer than Options.MaxRecordBytes.
	ErrTooLarge = errors.New("corpus: record too large")
	// ErrUnknownFormat means no format could be chosen for an input, or a
	// format name is not one of Formats.
	ErrUnknownFormat = errors.New("corpus: unknown input format")
	// ErrUnsupported means an input cannot be read the way it was asked for,
	// such as Parquet from standard input or a compressed Parquet file.
	ErrUnsupported = errors.New("corpus: unsupported input")
	// ErrBadOptions means an Options field breaks its rule.
	ErrBadOptions = errors.New("corpus: invalid options")
	// ErrNoInput means a Reader was asked to read no inputs.
	ErrNoInput = errors.New("corpus: no inputs")
	// ErrBadWARC means a WARC or WET record cannot be read: a corrupt or
	// truncated gzip member, a malformed header, a Content-Length that does
	// not match the record, a missing mandatory field.
	ErrBadWARC = errors.New("corpus: bad WARC record")
	// ErrBadHTTP means the HTTP response in a WARC response record cannot be
	// decoded: a malformed header, bad chunked encoding, a corrupt or
	// unsupported Content-Encoding, a charset that cannot be decoded.
	ErrBadHTTP = errors.New("corpus: bad HTTP response in WARC record")
)

// RecordError describes a record that could not be read or parsed. Its message
// reads "file:line: field "name": reason", with the line and field left out
// when unknown; for WARC and WET records, "file: record N at byte OFFSET:
// field "name": reason". It is plain data, safe to read from any goroutine.
type RecordError struct {
	File  string // input file as named to the Reader; "<stdin>" for standard input
	Line  int64  // 1-based line or row number in File (WARC: record number); 0 if the error is not about one record
	Index int64  // 0-based global record index; -1 if unknown
	Field string // JSON key, Parquet column or WARC header field at fault; "" for the whole record
	Err   error  // wraps a sentinel such as ErrNotJSON; never nil

	// Offset is, when HasOffset is set (WARC and WET records), the byte
	// offset in File at which the record starts as stored: the start of its
	// gzip member in a .warc.gz.
	Offset    int64
	HasOffset bool
}

// Error implements error.
func (e *RecordError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.HasOffset:
		if e.Line > 0 {
			b.WriteString(": record ")
			b.WriteString(strconv.FormatInt(e.Line, 10))
		} else {
			b.WriteString(": record")
		}
		b.WriteString(" at byte ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
	case e.Line > 0:
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(e.Line, 10))
	}
	if e.Field != "" {
		b.WriteString(": field ")
		b.WriteString(strconv.Quote(e.Field))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error, so errors.Is sees the sentinel.
func (e *RecordError) Unwrap() error { return e.Err }
