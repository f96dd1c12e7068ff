package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// This file is the Parser's side of WARC and WET records and of HTML text:
// take the id from the WARC header, undo the HTTP transfer and content
// codings of a response, decode its charset to UTF-8 and extract the text
// of its HTML. It runs on the worker goroutines, so the costly steps
// (decompression, extraction) use every core.

// htmlState is a Parser's scratch for WARC records and HTML: buffers and
// decompressors reused from record to record.
type htmlState struct {
	ext        htmlExtractor
	text       []byte // extracted text
	bufA, bufB []byte // decoded bodies, alternately
	utf8       []byte // charset-decoded body
	rd         bytes.Reader
	gz         *gzip.Reader
	zl         io.ReadCloser // zlib
	fl         io.ReadCloser // raw deflate
	br         *brotli.Reader
	zd         *zstd.Decoder
}

func (p *Parser) htmlScratch() *htmlState {
	if p.hs == nil {
		p.hs = &htmlState{}
	}
	return p.hs
}

// parseWARC fills doc from a WARC or WET record.
func (p *Parser) parseWARC(rec *Record, doc *Document) error {
	field, err := p.warcDocument(rec, doc)
	if err != nil {
		p.bad++
		return &RecordError{File: rec.File, Line: rec.Line, Index: rec.Index, Field: field, Err: err, Offset: rec.Offset, HasOffset: true}
	}
	return nil
}

func (p *Parser) warcDocument(rec *Record, doc *Document) (string, error) {
	var h warcHeader
	if err := parseWARCHeader(rec.Raw, &h); err != nil {
		if err == errIncomplete {
			err = errors.New("the record ends inside its header")
		}
		return "", fmt.Errorf("%w: %v", ErrBadWARC, err)
	}
	block := rec.Raw[h.size:]
	if int64(len(block)) < h.length {
		return "", warcLengthError(&h, len(block))
	}
	block = block[:h.length]
	id, field := warcID(&h, p.idField)
	if len(id) == 0 {
		return field, fmt.Errorf("%w: the record has no %s", ErrMissingField, field)
	}
	doc.ID = id
	switch {
	case rec.Format == FormatWET && asciiEqualFold(h.typ, "conversion"):
		doc.Text = block
		return "", nil
	case rec.Format == FormatWARC && asciiEqualFold(h.typ, "response"):
	default:
		return "WARC-Type", fmt.Errorf("%w: a %q record is not a document of %s input", ErrBadWARC, clip(h.typ, 32), rec.Format)
	}
	var hh httpHeader
	if err := parseHTTPHeader(block, &hh); err != nil {
		if err == errIncomplete {
			err = errors.New("the HTTP header does not end")
		}
		return "", fmt.Errorf("%w: %v", ErrBadHTTP, err)
	}
	s := p.htmlScratch()
	body, err := s.decodeBody(block[hh.size:], &hh, h.truncated, p.maxBody)
	if err != nil {
		return "", err
	}
	text, err := s.utf8Text(body, hh.contentType)
	if err != nil {
		return "", err
	}
	s.text = s.ext.appendText(s.text[:0], text)
	doc.Text = s.text
	return "", nil
}

// htmlText replaces doc.Text, HTML, by its visible text when Options.HTML
// is set; fromFile says the text is a file's bytes, in some charset.
func (p *Parser) htmlText(rec *Record, doc *Document, fromFile bool) error {
	if !p.html {
		return nil
	}
	s := p.htmlScratch()
	src := doc.Text
	if fromFile {
		var err error
		if src, err = s.utf8Text(src, nil); err != nil {
			p.bad++
			return &RecordError{File: rec.File, Line: rec.Line, Index: rec.Index, Err: err}
		}
	}
	s.text = s.ext.appendText(s.text[:0], src)
	doc.Text = s.text
	return nil
}

// codings splits a Transfer-Encoding or Content-Encoding list into its
// codings, last applied first, lower-cased.
func codings(list []byte) []string {
	var out []string
	for len(list) > 0 {
		var c []byte
		c, list, _ = bytes.Cut(list, []byte{','})
		if c = trimOWS(c); len(c) > 0 {
			out = append(out, strings.ToLower(string(c)))
		}
	}
	slices.Reverse(out)
	return out
}

// decodeBody undoes the transfer codings, then the content codings, of an
// HTTP body, each bounded by limit bytes of output. A body cut short is an
// error unless the WARC record says it was truncated (WARC-Truncated), in
// which case what decodes is kept.
func (s *htmlState) decodeBody(body []byte, hh *httpHeader, truncated bool, limit int) ([]byte, error) {
	if len(body) == 0 || len(hh.transferEncoding) == 0 && len(hh.contentEncoding) == 0 {
		// An empty body has nothing to decode, whatever the codings say (a
		// 304 or 204 response keeps the header of the full one).
		return body, nil
	}
	bufs := [2]*[]byte{&s.bufA, &s.bufB} // each step writes one, reads the other
	k := 0
	for _, list := range []struct {
		name string
		v    []byte
	}{{"Transfer-Encoding", hh.transferEncoding}, {"Content-Encoding", hh.contentEncoding}} {
		for _, c := range codings(list.v) {
			out := (*bufs[k])[:0]
			var err error
			switch c {
			case "identity":
				continue
			case "chunked":
				if list.name != "Transfer-Encoding" {
					return nil, fmt.Errorf("%w: chunked is not a Content-Encoding", ErrBadHTTP)
				}
				out, err = dechunk(out, body, truncated, limit)
			case "gzip", "x-gzip", "deflate", "br", "zstd":
				out, err = s.decompress(out, c, body, truncated, limit)
			default:
				return nil, fmt.Errorf("%w: unsupported %s %q", ErrBadHTTP, list.name, c)
			}
			*bufs[k] = out
			if err != nil {
				if errors.Is(err, ErrTooLarge) {
					return nil, err
				}
				return nil, fmt.Errorf("%w: %s %s: %v", ErrBadHTTP, list.name, c, err)
			}
			body, k = out, k^1
		}
	}
	return body, nil
}

// dechunk appends the data of a chunked body to dst. The body may end after
// any whole chunk (a connection closed early); a chunk cut short is an error
// unless truncated.
func dechunk(dst, b []byte, truncated bool, limit int) ([]byte, error) {
	for len(b) > 0 {
		line, next, ok := nextLine(b, 0)
		if !ok {
			if truncated {
				return dst, nil
			}
			return dst, errors.New("the body ends inside a chunk size line")
		}
		hex := line
		if i := bytes.IndexAny(hex, "; \t"); i >= 0 {
			hex = hex[:i]
		}
		size, ok := parseHex(hex)
		if !ok {
			return dst, fmt.Errorf("bad chunk size %q", clip(line, 20))
		}
		b = b[next:]
		if size == 0 {
			return dst, nil // trailers follow, unused
		}
		if size > int64(len(b)) {
			if truncated {
				return append(dst, b...), nil
			}
			return dst, fmt.Errorf("a chunk of %d bytes, only %d follow", size, len(b))
		}
		if len(dst)+int(size) > limit {
			return dst, fmt.Errorf("%w: decoded body over MaxRecordBytes (%d)", ErrTooLarge, limit)
		}
		dst = append(dst, b[:size]...)
		b = b[size:]
		switch {
		case bytes.HasPrefix(b, []byte("\r\n")):
			b = b[2:]
		case bytes.HasPrefix(b, []byte("\n")):
			b = b[1:]
		case len(b) == 0:
		default:
			return dst, errors.New("no line break after a chunk")
		}
	}
	return dst, nil
}

// parseHex parses a chunk size: 1 to 15 hex digits.
func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			c = c | 0x20 - 'a' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// decompress appends the decompression of src by coding c to dst, at most
// limit bytes.
func (s *htmlState) decompress(dst []byte, c string, src []byte, truncated bool, limit int) ([]byte, error) {
	s.rd.Reset(src)
	var r io.Reader
	var err error
	switch c {
	case "gzip", "x-gzip":
		if s.gz == nil {
			s.gz, err = gzip.NewReader(&s.rd)
		} else {
			err = s.gz.Reset(&s.rd)
		}
		r = s.gz
	case "deflate":
		// HTTP's deflate is zlib (RFC 1950), but some servers send raw
		// deflate (RFC 1951), as browsers accept: tell them by the zlib
		// header (CM 8 and a check sum that divides by 31).
		if len(src) >= 2 && src[0]&0x0f == 8 && (uint(src[0])<<8|uint(src[1]))%31 == 0 {
			if s.zl == nil {
				s.zl, err = zlib.NewReader(&s.rd)
			} else {
				err = s.zl.(zlib.Resetter).Reset(&s.rd, nil)
			}
			r = s.zl
		} else {
			if s.fl == nil {
				s.fl = flate.NewReader(&s.rd)
			} else {
				err = s.fl.(flate.Resetter).Reset(&s.rd, nil)
			}
			r = s.fl
		}
	case "br":
		if s.br == nil {
			s.br = brotli.NewReader(&s.rd)
		} else {
			err = s.br.Reset(&s.rd)
		}
		r = s.br
	case "zstd":
		if s.zd == nil {
			s.zd, err = zstd.NewReader(&s.rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)+1))
		} else {
			err = s.zd.Reset(&s.rd)
		}
		r = s.zd
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if truncated && err == io.ErrUnexpectedEOF {
			return dst, nil
		}
		return dst, err
	}
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, max2(4096, len(dst)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), limit+1)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, fmt.Errorf("%w: decoded body over MaxRecordBytes (%d)", ErrTooLarge, limit)
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case err == io.ErrUnexpectedEOF && truncated:
			return dst, nil
		case err != nil:
			return dst, err
		}
	}
}

// utf8Text returns an HTML body as UTF-8, given the HTTP Content-Type (nil
// for a file). The policy:
//
//   - A body that is valid UTF-8 is taken as it is, whatever it declares,
//     unless it declares UTF-16 or ISO-2022-JP, the charsets that are not
//     ASCII-compatible (ISO-2022-JP is 7-bit, so always valid UTF-8). Text
//     mislabelled as ISO-8859-1 or windows-1252 that is in fact UTF-8 is
//     common on the web; legacy text that happens to be valid UTF-8 past its
//     ASCII is rare. A UTF-8 byte order mark is dropped.
//   - Otherwise the charset is found as browsers find it, by
//     golang.org/x/net/html/charset.DetermineEncoding: a byte order mark,
//     the charset parameter of Content-Type, a <meta> declaration in the
//     first 1024 bytes, else windows-1252, the HTML standard's default. The
//     labels and decoders are the WHATWG Encoding Standard's, so every
//     charset a browser reads is decoded; bytes a charset does not map
//     become U+FFFD.
//   - UTF-8 that is not valid is passed on as it is (the shingler replaces
//     what is invalid), as text from JSON Lines is.
//   - The "replacement" charsets (ISO-2022-KR, HZ-GB-2312 and a few others,
//     which browsers refuse to decode) are an error wrapping ErrBadHTTP.
func (s *htmlState) utf8Text(body, contentType []byte) ([]byte, error) {
	if utf8.Valid(body) {
		if !declaresNonASCII(body, contentType) {
			return bytes.TrimPrefix(body, utf8BOM), nil
		}
	}
	e, name, _ := charset.DetermineEncoding(body, string(contentType))
	switch {
	case name == "utf-8":
		return bytes.TrimPrefix(body, utf8BOM), nil
	case name == "replacement":
		return nil, fmt.Errorf("%w: the page's charset cannot be decoded (a WHATWG replacement encoding, such as ISO-2022-KR)", ErrBadHTTP)
	case utf8.Valid(body) && name != "utf-16le" && name != "utf-16be" && name != "iso-2022-jp":
		return bytes.TrimPrefix(body, utf8BOM), nil
	}
	return s.decodeCharset(e, body)
}

// declaresNonASCII reports whether a body that is valid UTF-8 may declare a
// charset that is not ASCII-compatible: its Content-Type names UTF-16 or
// ISO-2022, or its text holds an ESC (ISO-2022-JP's escapes). Only then is
// the full detection worth its cost.
func declaresNonASCII(body, contentType []byte) bool {
	for _, s := range []string{"utf-16", "iso-2022", "utf16", "csiso2022"} {
		if containsFold(contentType, s) {
			return true
		}
	}
	return bytes.IndexByte(body, 0x1b) >= 0
}

// containsFold reports whether b contains the lower-case ASCII s in any case.
func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if hasPrefixFold(b[i:], s) {
			return true
		}
	}
	return false
}

// decodeCharset decodes body from encoding e to UTF-8, dropping a byte
// order mark.
func (s *htmlState) decodeCharset(e encoding.Encoding, body []byte) ([]byte, error) {
	out, _, err := transform.Append(e.NewDecoder(), s.utf8[:0], body)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding the page's charset: %v", ErrBadHTTP, err)
	}
	s.utf8 = out
	return bytes.TrimPrefix(out, utf8BOM), nil
}
