package corpus

import (
	"fmt"
	"math"
	"strconv"
)

// Document is one parsed record: what deduplication needs from it.
//
// ID and Text alias memory owned by the Parser or by the Record's batch: they
// stay valid until the next Parse call on the same Parser or until the batch
// holding the Record is reused, whichever comes first. Copy them to keep them
// longer. The zero value is an empty document; a Document is plain data.
type Document struct {
	// ID is the document id: the id field's string value, a numeric id's JSON
	// text, or the 1-based line (row) number in decimal when the id is missing
	// or null; for FormatLines the line number; for FormatDir the file's path
	// relative to the directory; for WARC and WET the WARC-Record-ID or
	// WARC-Target-URI (Options.IDField) as written in the header.
	ID []byte
	// Text is the document text, unescaped. It may hold invalid UTF-8, passed
	// through from the input. For WARC it is the visible text of the HTML
	// response (AppendHTMLText), for WET the conversion record's block, and
	// with Options.HTML the visible text of the HTML the record held.
	Text []byte
	// Keep is the value of Options.KeepField when HasKeep is true.
	Keep float64
	// HasKeep reports whether the record carried a non-null KeepField.
	HasKeep bool
	// Index is the record's 0-based global index (Record.Index).
	Index int64
}

// Parser turns Records into Documents. Make one per goroutine with NewParser:
// a Parser is not safe for concurrent use (it owns scratch buffers), and its
// zero value is not usable. Parsing is deterministic and, on records without
// escapes in the text, does not allocate; extracting the text of HTML (WARC
// responses, Options.HTML) does, mostly inside html.Tokenizer.
type Parser struct {
	idField, textField, keepField string
	html                          bool       // Options.HTML
	maxBody                       int        // Options.MaxRecordBytes: bound on decoded HTTP bodies
	hs                            *htmlState // WARC and HTML scratch, made on first use

	sc      scanner
	idBuf   []byte // rendered ids (line numbers, unescaped ids)
	textBuf []byte // unescaped text
	keyBuf  []byte // unescaped keys
	bad     int64
	keep    int64 // documents with a keep value
}

// NewParser returns a Parser for records read with opts (nil means defaults).
func NewParser(opts *Options) (*Parser, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	return &Parser{idField: o.IDField, textField: o.TextField, keepField: o.KeepField, html: o.HTML, maxBody: o.MaxRecordBytes}, nil
}

// Stats returns the Parser's counts: Bad is the number of Parse calls that
// failed, Keep the number that filled a keep value. Add it to the Reader's
// Stats for a total.
func (p *Parser) Stats() Stats { return Stats{Bad: p.bad, Keep: p.keep} }

// Parse fills doc from rec. A record of the zero Format is taken as JSON
// Lines. On failure it returns a *RecordError naming rec's file, line and
// the field at fault, doc is left partly filled, and the Parser counts the
// record as bad.
func (p *Parser) Parse(rec *Record, doc *Document) error {
	*doc = Document{Index: rec.Index}
	switch rec.Format {
	case FormatLines:
		doc.Text = rec.Raw
		p.idBuf = strconv.AppendInt(p.idBuf[:0], rec.Line, 10)
		doc.ID = p.idBuf
		return p.htmlText(rec, doc, false)
	case FormatDir:
		doc.Text = rec.Raw
		p.idBuf = append(p.idBuf[:0], rec.Name...)
		doc.ID = p.idBuf
		return p.htmlText(rec, doc, true)
	case FormatWARC, FormatWET:
		return p.parseWARC(rec, doc)
	}
	field, err := p.parseJSON(rec, doc)
	if err != nil {
		p.bad++
		return &RecordError{File: rec.File, Line: rec.Line, Index: rec.Index, Field: field, Err: err}
	}
	return p.htmlText(rec, doc, false)
}

// span locates a captured value in a record.
type span struct {
	start, end int
	kind       valueKind
	esc        bool
}

// parseJSON parses a JSON object record. On failure it returns the field at
// fault ("" for the record as a whole) and an error wrapping a sentinel.
func (p *Parser) parseJSON(rec *Record, doc *Document) (string, error) {
	b := rec.Raw
	p.sc = scanner{b: b}
	s := &p.sc
	var id, text, keep span

	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", p.notObject(i)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				s.fail(i, "expected a key")
				return "", p.syntaxError()
			}
			ks := i + 1
			ke, kesc, ok := s.scanString(ks, nil)
			if !ok {
				return "", p.syntaxError()
			}
			i = skipSpace(b, ke+1)
			if i >= len(b) || b[i] != ':' {
				s.fail(i, "expected ':'")
				return "", p.syntaxError()
			}
			i = skipSpace(b, i+1)
			// Last occurrence wins, as in encoding/json.
			var dst *span
			key := b[ks:ke]
			if kesc {
				p.keyBuf = appendUnescaped(p.keyBuf[:0], key)
				key = p.keyBuf
			}
			switch {
			case string(key) == p.textField:
				dst = &text
			case string(key) == p.idField:
				dst = &id
			case p.keepField != "" && string(key) == p.keepField:
				dst = &keep
			}
			vs := i
			var ve int
			var kind valueKind
			var vesc bool
			if dst == &text && i < len(b) && b[i] == '"' {
				// The text is decoded as it is scanned, into textBuf.
				ve, vesc, ok = s.scanString(i+1, &p.textBuf)
				ve, kind = ve+1, kindString
			} else {
				ve, kind, vesc, ok = s.scanValue(i, 1)
			}
			if !ok {
				return "", p.syntaxError()
			}
			if dst != nil {
				*dst = span{vs, ve, kind, vesc}
			}
			i = skipSpace(b, ve)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			s.fail(i, "expected ',' or '}'")
			return "", p.syntaxError()
		}
	}
	if i = skipSpace(b, i); i < len(b) {
		s.fail(i, "data after the object")
		return "", p.syntaxError()
	}

	switch text.kind {
	case kindString:
		doc.Text = b[text.start+1 : text.end-1]
		if text.esc {
			doc.Text = p.textBuf // decoded by scanString
		}
	case kindNone:
		return p.textField, ErrMissingField
	default:
		return p.textField, fmt.Errorf("%w: found %v", ErrNotString, text.kind)
	}
	switch id.kind {
	case kindString:
		doc.ID = p.stringValue(b, id, &p.idBuf)
	case kindNumber:
		doc.ID = b[id.start:id.end]
	case kindNone, kindNull:
		p.idBuf = strconv.AppendInt(p.idBuf[:0], rec.Line, 10)
		doc.ID = p.idBuf
	default:
		return p.idField, fmt.Errorf("%w: found %v", ErrBadID, id.kind)
	}
	switch keep.kind {
	case kindNumber:
		v, err := strconv.ParseFloat(string(b[keep.start:keep.end]), 64)
		if err != nil || math.IsInf(v, 0) {
			return p.keepField, fmt.Errorf("%w: %s is out of range", ErrNotNumber, b[keep.start:keep.end])
		}
		doc.Keep, doc.HasKeep = v, true
		p.keep++
	case kindNone, kindNull:
	default:
		return p.keepField, fmt.Errorf("%w: found %v", ErrNotNumber, keep.kind)
	}
	return "", nil
}

// stringValue returns the contents of the string value at sp: a subslice of b
// when it holds no escapes, else its unescaped form in *scratch.
func (p *Parser) stringValue(b []byte, sp span, scratch *[]byte) []byte {
	body := b[sp.start+1 : sp.end-1]
	if !sp.esc {
		return body
	}
	*scratch = appendUnescaped((*scratch)[:0], body)
	return *scratch
}

// notObject explains why a record that does not start with '{' is rejected:
// ErrNotObject if it is some other valid JSON value, else ErrNotJSON.
func (p *Parser) notObject(i int) error {
	s := &p.sc
	if i >= len(s.b) {
		return fmt.Errorf("%w: empty record", ErrNotJSON)
	}
	end, kind, _, ok := s.scanValue(i, 0)
	if !ok {
		return p.syntaxError()
	}
	if end = skipSpace(s.b, end); end < len(s.b) {
		s.fail(end, "data after the value")
		return p.syntaxError()
	}
	return fmt.Errorf("%w: found %v", ErrNotObject, kind)
}

// syntaxError builds the ErrNotJSON error for the scanner's failure.
func (p *Parser) syntaxError() error {
	s := &p.sc
	if s.at >= len(s.b) {
		return fmt.Errorf("%w: %s at end of record (byte %d)", ErrNotJSON, s.why, s.at)
	}
	return fmt.Errorf("%w: %s: %q at byte %d", ErrNotJSON, s.why, s.b[s.at], s.at)
}
