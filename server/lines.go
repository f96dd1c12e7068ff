package server

import (
	"bufio"
	"errors"
	"io"
)

// errLineTooLong is lineReader.next's error for a line over its limit; the
// line has been skipped, and the next call reads the line after it.
var errLineTooLong = errors.New("server: line too long")

// lineReader splits a request body into lines as it arrives, holding at
// most one line (up to max bytes, without its newline) in memory: a batch
// is never read whole. Not safe for concurrent use.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line []byte // a line longer than r's buffer, assembled
}

// lineBufSize is the read buffer of a lineReader: most lines (documents)
// fit in it and are returned without a copy.
const lineBufSize = 64 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, lineBufSize), max: max}
}

// next returns the next line without its '\n', valid until the next call;
// io.EOF after the last line (a last line without '\n' is a line);
// errLineTooLong for a line of more than max bytes (skipped); or the body's
// read error (such as *http.MaxBytesError).
func (lr *lineReader) next() ([]byte, error) {
	l, err := lr.r.ReadSlice('\n')
	switch {
	case err == nil:
		return lr.limit(l[:len(l)-1])
	case errors.Is(err, io.EOF) && len(l) > 0:
		return lr.limit(l)
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, err
	}
	// A line longer than the buffer: assemble it, up to max.
	lr.line = append(lr.line[:0], l...)
	for {
		l, err = lr.r.ReadSlice('\n')
		if len(lr.line)+len(l) > lr.max+1 { // +1: the '\n', not counted
			if err = lr.skip(err); err != nil {
				return nil, err
			}
			return nil, errLineTooLong
		}
		lr.line = append(lr.line, l...)
		switch {
		case err == nil:
			return lr.line[:len(lr.line)-1], nil
		case errors.Is(err, io.EOF):
			return lr.limit(lr.line)
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// limit returns line, or errLineTooLong if it is longer than max.
func (lr *lineReader) limit(line []byte) ([]byte, error) {
	if len(line) > lr.max {
		return nil, errLineTooLong
	}
	return line, nil
}

// skip reads up to the end of the current line, given the error of the
// last read of it; it returns nil at the end of the line or of the body.
func (lr *lineReader) skip(err error) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = lr.r.ReadSlice('\n')
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
