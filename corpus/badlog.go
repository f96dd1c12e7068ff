package corpus

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BadLogHeader is the first line a BadLog writes: a comment naming the
// columns.
const BadLogHeader = "# file\tline\tindex\tfield\treason\n"

// BadLog writes the records skipped as bad under SkipBad, one a line, so that
// a run can say which records it left out (neardup's --bad-out):
//
//	# file	line	index	field	reason
//	data.jsonl	3	2	text	corpus: missing field
//	data.jsonl	9	8	-	corpus: record too large: 70000000 bytes, over MaxRecordBytes (67108864)
//
// Columns are separated by tabs: the input file as the Reader names it, the
// 1-based line (or Parquet row) number, or "-" when the record has none (a
// whole file under FormatDir), the 0-based global record index, the field at
// fault or "-" for the whole record, and the reason. A file, field or reason
// that is empty, is "-", starts with '"' or '#', holds a tab, a line break or
// invalid UTF-8 is written as a Go-quoted string, so every line has exactly
// five columns.
//
// Make one with NewBadLog; the zero value is not usable. A BadLog is not safe
// for concurrent use; its output is a deterministic function of what is
// written. It buffers: call Flush when done.
type BadLog struct {
	w   *bufio.Writer
	buf []byte
	n   int64
}

// NewBadLog returns a BadLog writing to w, starting with BadLogHeader.
func NewBadLog(w io.Writer) *BadLog {
	l := &BadLog{w: bufio.NewWriterSize(w, 64<<10)}
	l.w.WriteString(BadLogHeader) // an error stays in the bufio.Writer for Write and Flush
	return l
}

// Write writes one line for e.
func (l *BadLog) Write(e *RecordError) error {
	b := appendBadField(l.buf[:0], e.File)
	b = append(b, '\t')
	if e.Line > 0 {
		b = strconv.AppendInt(b, e.Line, 10)
	} else {
		b = append(b, '-')
	}
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.Index, 10)
	b = append(b, '\t')
	if e.Field == "" {
		b = append(b, '-')
	} else {
		b = appendBadField(b, e.Field)
	}
	b = append(b, '\t')
	reason := "unknown error"
	if e.Err != nil {
		reason = e.Err.Error()
	}
	b = appendBadField(b, reason)
	b = append(b, '\n')
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("corpus: write bad-record log: %w", err)
	}
	l.n++
	return nil
}

// Add writes a line for each error, in order.
func (l *BadLog) Add(errs []RecordError) error {
	for i := range errs {
		if err := l.Write(&errs[i]); err != nil {
			return err
		}
	}
	return nil
}

// Count returns the number of records written.
func (l *BadLog) Count() int64 { return l.n }

// Flush writes any buffered data to the underlying writer.
func (l *BadLog) Flush() error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("corpus: write bad-record log: %w", err)
	}
	return nil
}

// appendBadField appends s as one column of a BadLog line.
func appendBadField(dst []byte, s string) []byte {
	if s == "" || s == "-" || s[0] == '"' || s[0] == '#' || strings.ContainsAny(s, "\t\n\r") || !utf8.ValidString(s) {
		return strconv.AppendQuote(dst, s)
	}
	return append(dst, s...)
}
