package corpus

import (
	"strings"
	"testing"
)

func TestParseWARCHeader(t *testing.T) {
	const crlf = "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Target-URI: https://a/\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: 12\r\n\r\n"
	for _, c := range []struct {
		name, in string
		err      string // fragment; "" for success
		typ, id  string
		length   int64
		size     int // -1: all of in
	}{
		{"WARC/1.1 with CRLF", crlf + "block", "", "response", "<urn:uuid:1>", 12, len(crlf)},
		{"WARC/1.0 with LF", "WARC/1.0\nwarc-type:warcinfo\nCONTENT-LENGTH:  0 \n\n", "", "warcinfo", "", 0, -1},
		{"folded and unknown fields", "WARC/1.0\r\nX-Long: a\r\n  continued: here\r\nWARC-Type: metadata\r\nContent-Length: 3\r\n\r\n", "", "metadata", "", 3, -1},
		{"the same length twice", "WARC/1.0\nContent-Length: 5\nWARC-Type: x\nContent-Length: 5\n\n", "", "x", "", 5, -1},
		{"incomplete", "WARC/1.1\r\nWARC-Type: response\r\n", "incomplete header", "", "", 0, 0},
		{"incomplete version line", "WARC/", "incomplete header", "", "", 0, 0},
		{"not WARC", "HTTP/1.1 200 OK\r\n\r\n", "does not start with a WARC version line", "", "", 0, 0},
		{"not WARC, no line yet", "GET / HTTP", "does not start with a WARC version line", "", "", 0, 0},
		{"old version", "WARC/0.18\r\nWARC-Type: x\r\nContent-Length: 1\r\n\r\n", `unsupported WARC version "WARC/0.18"`, "", "", 0, 0},
		{"no length", "WARC/1.0\r\nWARC-Type: x\r\n\r\n", "no Content-Length", "", "", 0, 0},
		{"no type", "WARC/1.0\r\nContent-Length: 1\r\n\r\n", "no WARC-Type", "", "", 0, 0},
		{"negative length", "WARC/1.0\r\nWARC-Type: x\r\nContent-Length: -1\r\n\r\n", `bad Content-Length "-1"`, "", "", 0, 0},
		{"huge length", "WARC/1.0\r\nWARC-Type: x\r\nContent-Length: 1234567890123456789\r\n\r\n", "bad Content-Length", "", "", 0, 0},
		{"two lengths", "WARC/1.0\r\nWARC-Type: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "two Content-Length fields, 1 and 2", "", "", 0, 0},
		{"no colon", "WARC/1.0\r\nWARC-Type x\r\n\r\n", "header line without a field name", "", "", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h warcHeader
			err := parseWARCHeader([]byte(c.in), &h)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v; want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.size < 0 {
				c.size = len(c.in)
			}
			if string(h.typ) != c.typ || string(h.recordID) != c.id || h.length != c.length || h.size != c.size {
				t.Errorf("got type %q id %q length %d size %d; want %q %q %d %d", h.typ, h.recordID, h.length, h.size, c.typ, c.id, c.length, c.size)
			}
		})
	}
}

func TestParseHTTPHeader(t *testing.T) {
	for _, c := range []struct {
		name, in         string
		err              string
		ctype, te, ce    string
		size             int // -1: all of in
		html, incomplete bool
	}{
		{"plain", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n<p>", "", "text/html; charset=UTF-8", "", "", len("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n"), true, false},
		{"LF and case", "HTTP/1.0 404 Not Found\ncontent-TYPE:APPLICATION/XHTML+XML\nTransfer-Encoding: chunked\n\n", "", "APPLICATION/XHTML+XML", "chunked", "", -1, true, false},
		{"repeated lists", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: br\r\n\r\n", "", "", "", "gzip,br", -1, false, false},
		{"malformed lines ignored", "HTTP/1.1 200 OK\r\nno colon\r\n folded\r\nContent-Type: text/plain\r\n\r\n", "", "text/plain", "", "", -1, false, false},
		{"not HTTP", "<html>", "does not start with an HTTP status line", "", "", "", 0, false, false},
		{"incomplete", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", "incomplete header", "", "", "", 0, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h httpHeader
			err := parseHTTPHeader([]byte(c.in), &h)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || (err == errIncomplete) != c.incomplete {
					t.Fatalf("got %v; want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.size < 0 {
				c.size = len(c.in)
			}
			if string(h.contentType) != c.ctype || string(h.transferEncoding) != c.te || string(h.contentEncoding) != c.ce || h.size != c.size {
				t.Errorf("got %q %q %q size %d; want %q %q %q %d", h.contentType, h.transferEncoding, h.contentEncoding, h.size, c.ctype, c.te, c.ce, c.size)
			}
			if isHTMLType(h.contentType) != c.html {
				t.Errorf("isHTMLType(%q) = %v; want %v", h.contentType, !c.html, c.html)
			}
		})
	}
}
