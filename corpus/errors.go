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
)

// RecordError describes a record that could not be read or parsed. Its message
// reads "file:line: field "name": reason", with the line and field left out
// when unknown. It is plain data, safe to read from any goroutine.
type RecordError struct {
	File  string // input file as named to the Reader; "<stdin>" for standard input
	Line  int64  // 1-based line or row number in File; 0 if the error is not about one record
	Index int64  // 0-based global record index; -1 if unknown
	Field string // JSON key or Parquet column at fault; "" for the whole record
	Err   error  // wraps a sentinel such as ErrNotJSON; never nil
}

// Error implements error.
func (e *RecordError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
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
