package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// This file parses the two headers of a WARC response: the WARC record
// header (ISO 28500, WARC/1.0 and WARC/1.1) and the HTTP response header at
// the start of its block. Both parsers work on bytes in memory, keep only
// the few fields this package uses, and do not allocate.

// The values of Options.IDField that choose a WARC header field as the id.
const (
	// IDFieldRecordID makes WARC-Record-ID the id of WARC and WET records. It
	// is the default (the default IDField, "id", also chooses it): every record
	// has one and the standard makes it unique, so each document in a report
	// names one record.
	IDFieldRecordID = "record-id"
	// IDFieldURI makes WARC-Target-URI the id: readable, the same in a WARC
	// file and the WET file made from it, but not unique when a URI was
	// fetched more than once.
	IDFieldURI = "uri"
)

// Limits on the parts of a WARC record the Reader buffers to look at.
const (
	// maxWARCHeader bounds a WARC record header. Real ones are well under
	// 4 KiB; a header that does not end within this many bytes is not one.
	maxWARCHeader = 256 << 10
	// maxHTTPHeader bounds the HTTP header of a response, which the Reader
	// reads to tell HTML responses from others.
	maxHTTPHeader = 64 << 10
)

// errIncomplete means a header did not end within the bytes given.
var errIncomplete = errors.New("incomplete header")

// warcHeader holds the fields of a WARC record header that the package
// uses. Its slices alias the parsed bytes.
type warcHeader struct {
	typ         []byte // WARC-Type
	recordID    []byte // WARC-Record-ID
	targetURI   []byte // WARC-Target-URI
	contentType []byte // Content-Type (of the block)
	payloadType []byte // WARC-Identified-Payload-Type
	truncated   bool   // WARC-Truncated is present
	length      int64  // Content-Length
	size        int    // bytes of the header, version line to blank line
}

// nextLine returns the line at b[i:] without its "\n" or "\r\n" and the
// offset after it, or ok false when no "\n" follows.
func nextLine(b []byte, i int) (line []byte, next int, ok bool) {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return nil, i, false
	}
	line = b[i : i+j]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, i + j + 1, true
}

// trimOWS trims the spaces and tabs around a header value.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseWARCHeader parses the WARC record header at the start of b into h.
// Lines may end in "\r\n" (as the standard says) or "\n"; folded
// continuation lines are accepted and ignored. It returns errIncomplete when
// b ends before the blank line that ends the header, and otherwise an error
// naming what is wrong.
func parseWARCHeader(b []byte, h *warcHeader) error {
	*h = warcHeader{length: -1}
	line, i, ok := nextLine(b, 0)
	if !ok {
		if len(b) >= 5 && !bytes.HasPrefix(b, []byte("WARC/")) {
			return fmt.Errorf("does not start with a WARC version line: %q", clip(b, 16))
		}
		return errIncomplete
	}
	if !bytes.HasPrefix(line, []byte("WARC/")) {
		return fmt.Errorf("does not start with a WARC version line: %q", clip(line, 16))
	}
	if v := string(line[5:]); v != "1.0" && v != "1.1" {
		return fmt.Errorf("unsupported WARC version %q (want 1.0 or 1.1)", clip(line, 16))
	}
	for {
		if line, i, ok = nextLine(b, i); !ok {
			return errIncomplete
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // continuation of a field this package does not use
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return fmt.Errorf("header line without a field name: %q", clip(line, 40))
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch {
		case asciiEqualFold(name, "warc-type"):
			h.typ = value
		case asciiEqualFold(name, "warc-record-id"):
			h.recordID = value
		case asciiEqualFold(name, "warc-target-uri"):
			h.targetURI = value
		case asciiEqualFold(name, "content-type"):
			h.contentType = value
		case asciiEqualFold(name, "warc-identified-payload-type"):
			h.payloadType = value
		case asciiEqualFold(name, "warc-truncated"):
			h.truncated = true
		case asciiEqualFold(name, "content-length"):
			n, ok := parseLength(value)
			if !ok {
				return fmt.Errorf("bad Content-Length %q", clip(value, 24))
			}
			if h.length >= 0 && h.length != n {
				return fmt.Errorf("two Content-Length fields, %d and %d", h.length, n)
			}
			h.length = n
		}
	}
	if h.length < 0 {
		return errors.New("no Content-Length field")
	}
	if len(h.typ) == 0 {
		return errors.New("no WARC-Type field")
	}
	h.size = i
	return nil
}

// parseLength parses a non-negative decimal length of at most 18 digits.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// clip returns at most n bytes of b, for error messages.
func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// httpHeader holds the fields of an HTTP response header that the package
// uses. Its slices alias the parsed bytes.
type httpHeader struct {
	contentType      []byte
	transferEncoding []byte
	contentEncoding  []byte
	size             int // bytes of the header, status line to blank line
}

// parseHTTPHeader parses the HTTP response header at the start of b (a WARC
// response block) into h. It returns errIncomplete when b ends before the
// blank line that ends the header. Repeated Transfer-Encoding and
// Content-Encoding fields are joined, as HTTP says lists may be.
func parseHTTPHeader(b []byte, h *httpHeader) error {
	*h = httpHeader{}
	if !bytes.HasPrefix(b, []byte("HTTP/")) {
		return fmt.Errorf("block does not start with an HTTP status line: %q", clip(b, 16))
	}
	_, i, ok := nextLine(b, 0)
	if !ok {
		return errIncomplete
	}
	for {
		var line []byte
		if line, i, ok = nextLine(b, i); !ok {
			return errIncomplete
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			continue // folded or malformed lines: browsers ignore them too
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch {
		case asciiEqualFold(name, "content-type"):
			h.contentType = value
		case asciiEqualFold(name, "transfer-encoding"):
			h.transferEncoding = joinList(h.transferEncoding, value)
		case asciiEqualFold(name, "content-encoding"):
			h.contentEncoding = joinList(h.contentEncoding, value)
		}
	}
	h.size = i
	return nil
}

// joinList joins a repeated list field to the earlier value. The result
// allocates only when a field is repeated, which is rare.
func joinList(prev, v []byte) []byte {
	if len(prev) == 0 {
		return v
	}
	return append(append(append([]byte(nil), prev...), ','), v...)
}

// isHTMLType reports whether a Content-Type is HTML: text/html or
// application/xhtml+xml, ignoring case and parameters.
func isHTMLType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = trimOWS(ct)
	return asciiEqualFold(ct, "text/html") || asciiEqualFold(ct, "application/xhtml+xml")
}

// warcKind is what the Reader makes of a record.
type warcKind uint8

const (
	warcSkip warcKind = iota // not a document: counted in Stats.Skipped
	warcDoc                  // a document
)

// classify tells documents from other records, given the record's header
// and the first bytes of its block (all of it, or at least maxHTTPHeader
// bytes: with fewer, a response whose HTTP header was cut off is taken for
// a document). In WET, conversion records are documents. In WARC, response
// records whose block is an HTTP response with an HTML Content-Type (or,
// without one, an HTML WARC-Identified-Payload-Type) are; so is a response
// whose HTTP header does not end within maxHTTPHeader bytes, for the Parser
// to report, rather than drop it unseen.
func classify(f Format, h *warcHeader, block []byte) warcKind {
	if f == FormatWET {
		if asciiEqualFold(h.typ, "conversion") {
			return warcDoc
		}
		return warcSkip
	}
	if !asciiEqualFold(h.typ, "response") || !bytes.HasPrefix(block, []byte("HTTP/")) {
		return warcSkip
	}
	var hh httpHeader
	switch err := parseHTTPHeader(block, &hh); {
	case err != nil:
		return warcDoc
	case len(hh.contentType) > 0:
		if isHTMLType(hh.contentType) {
			return warcDoc
		}
	case isHTMLType(h.payloadType):
		return warcDoc
	}
	return warcSkip
}

// validateWARC checks the options that WARC and WET inputs read: the id
// field must choose a header field, and there is no keep field.
func (o *Options) validateWARC(f Format) error {
	switch o.IDField {
	case DefaultIDField, IDFieldRecordID, IDFieldURI:
	default:
		return fmt.Errorf("%w: IDField %q has no meaning for %s input (want %q or %q)", ErrBadOptions, o.IDField, f, IDFieldRecordID, IDFieldURI)
	}
	if o.KeepField != "" {
		return fmt.Errorf("%w: KeepField %q has no meaning for %s input", ErrBadOptions, o.KeepField, f)
	}
	return nil
}

// checkWARCOptions validates the options against the inputs that resolved
// to WARC or WET, which FormatAuto may have chosen by name.
func (r *Reader) checkWARCOptions() error {
	for _, in := range r.inputs {
		if in.format == FormatWARC || in.format == FormatWET {
			if err := r.opts.validateWARC(in.format); err != nil {
				return fmt.Errorf("%w (input %s)", err, in.name)
			}
		}
	}
	return nil
}

// warcID returns the id of a WARC record by the IDField rule, and the name of
// the field it came from.
func warcID(h *warcHeader, idField string) ([]byte, string) {
	if idField == IDFieldURI {
		u := h.targetURI
		// Some WARC 1.1 writers put the URI in angle brackets, as an
		// erratum in the standard's examples did.
		if len(u) >= 2 && u[0] == '<' && u[len(u)-1] == '>' {
			u = u[1 : len(u)-1]
		}
		return u, "WARC-Target-URI"
	}
	return h.recordID, "WARC-Record-ID"
}

// warcLengthError explains a block shorter than its Content-Length.
func warcLengthError(h *warcHeader, have int) error {
	return fmt.Errorf("%w: truncated record: Content-Length says a block of %s bytes, only %d follow", ErrBadWARC, strconv.FormatInt(h.length, 10), have)
}
