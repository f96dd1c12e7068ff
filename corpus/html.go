package corpus

import (
	"bytes"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// This file extracts the visible text of an HTML document, one line per
// block, for deduplication: what a reader sees of the page's own content,
// without scripts, styles, navigation, banners and hidden elements.
//
// It walks html.Tokenizer's tokens rather than the tree html.Parse builds:
// the token walk runs at 2-3 times the speed of Parse plus a tree walk
// (BenchmarkExtractHTML, tokens against tree, cpu-MB/s; see BENCHMARKS.md)
// with a quarter of the allocations or fewer, and on well-formed pages both
// give the same text (TestExtractHTMLTokensMatchTree).
// Where they can differ is on markup whose structure only the tree builder's
// error recovery restores; the walk copes with the common cases (elements
// whose end tag may be omitted, such as a hidden <p> or <li>, end where the
// tree builder would end them) and otherwise keeps text rather than drop it.

// AppendHTMLText appends the visible text of the HTML document src to dst
// and returns the extended slice. src is taken as UTF-8 (see the package
// documentation for how WARC responses and files in other charsets are
// decoded first); invalid UTF-8 is passed through.
//
// The rules, in brief:
//   - The contents of script, style, noscript, template, svg, title, iframe,
//     noembed, noframes, object, canvas, audio, video, select, textarea, a
//     dialog without the open attribute, nav and aside are dropped, and so
//     are header and footer unless they are inside an article (where they
//     hold the article's title and byline).
//   - So are elements with the hidden attribute, aria-hidden="true", a style
//     attribute with display:none or visibility:hidden, or an ARIA landmark
//     role standing for the above (navigation, banner, contentinfo,
//     complementary).
//   - Block elements (p, div, li, h1-h6, br, tr, section, article, table,
//     blockquote, pre, …) start and end lines; table cells are separated by
//     a space; inside pre, line breaks are kept.
//   - Within a line, runs of HTML white space and no-break spaces become one
//     space; lines are trimmed, empty lines dropped, and lines are joined with
//     "\n" without a final one. Character references are decoded; comments,
//     the doctype and attribute values (alt, title) are not text.
//
// The title element is left out: it usually repeats the page's first heading
// and carries the site's name, template text that line-based boilerplate
// removal cannot strip because it is joined to the page's own title.
//
// AppendHTMLText never fails: any byte sequence is some HTML document. It is
// deterministic and safe for concurrent use.
func AppendHTMLText(dst, src []byte) []byte {
	var e htmlExtractor
	return e.appendText(dst, src)
}

// htmlExtractor holds the state of one extraction. The zero value is ready;
// appendText resets it.
type htmlExtractor struct {
	out         []byte
	lineStart   int  // offset in out where the current line starts
	space       bool // white space seen since the last character of the line
	skipAtom    atom.Atom
	skipName    []byte // name of the element being skipped when skipAtom is 0
	skipDepth   int    // open elements named skipName/skipAtom, > 0 while skipping
	skipInner   int    // open containers inside a skipped element with an optional end tag
	skipForeign bool   // the skipped element is svg (self-closing tags count)
	article     int    // open article elements
	pre         int    // open pre and listing elements outside skips
	name        []byte // scratch for tag names
	rd          bytes.Reader
	jumpMin     int // tests: shortest raw text jumped over (rawTextEnd); 0: minRawSkip, < 0: none
}

// appendText appends the text of src to dst.
func (e *htmlExtractor) appendText(dst, src []byte) []byte {
	*e = htmlExtractor{out: dst, lineStart: len(dst), skipName: e.skipName[:0], name: e.name[:0], jumpMin: e.jumpMin}
	e.rd.Reset(src)
	z := html.NewTokenizer(&e.rd)
	at := 0 // offset in src of the tokenizer's position: its tokens' Raw partition src
	jumpMin := e.jumpMin
	if jumpMin == 0 {
		jumpMin = minRawSkip
	}
	for {
		tt := z.Next()
		at += len(z.Raw())
		switch tt {
		case html.ErrorToken:
			e.breakLine()
			out := e.out
			if n := len(out); n > len(dst) && out[n-1] == '\n' {
				out = out[:n-1]
			}
			e.out = nil
			return out
		case html.TextToken:
			if e.skipDepth == 0 {
				e.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := e.startTag(z, tt == html.SelfClosingTagToken)
			if e.skipDepth > 0 && jumpMin > 0 {
				// The element's raw text, if any, is dropped: jump over it
				// and go on with a new tokenizer at its end tag.
				if end, ok := rawTextEnd(src, at, a); ok && end-at >= jumpMin {
					at = end
					e.rd.Reset(src[end:])
					z = html.NewTokenizer(&e.rd)
				}
			}
		case html.EndTagToken:
			a, name := e.tagName(z.Raw())
			e.endTag(a, name)
		}
	}
}

// tagName returns the atom (0 if none) and the lower-cased name of the tag
// whose raw bytes, "<name …" or "</name …", are raw. It reads the name as
// html.Tokenizer's readTagName delimits it. Tokenizer.TagName and TagAttr
// copy what they return (through bytes.ReplaceAll) at every call: reading
// the name here, and attributes only when they may matter (see startTag),
// halved the allocations of extraction on the site pages of
// BenchmarkExtractHTML (128,028 to 68,876 a pass; most of the rest are
// html.Tokenizer's own, two per attribute).
func (e *htmlExtractor) tagName(raw []byte) (atom.Atom, []byte) {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	name := e.name[:0]
	for ; i < len(raw); i++ {
		c := raw[i]
		if isHTMLSpace(c) || c == '/' || c == '>' {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		name = append(name, c)
	}
	e.name = name
	return atom.Lookup(name), name
}

// mayHide reports whether a raw start tag may hold an attribute that hides
// its element: one that holds "hidden", "none" or "role" in any case. It
// lets startTag skip decoding the attributes of nearly every tag.
func mayHide(raw []byte) bool {
	for i := 1; i+4 <= len(raw); i++ {
		switch raw[i] | 0x20 {
		case 'h':
			if hasPrefixFold(raw[i:], "hidden") {
				return true
			}
		case 'n':
			if hasPrefixFold(raw[i:], "none") {
				return true
			}
		case 'r':
			if hasPrefixFold(raw[i:], "role") {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word s,
// ignoring case.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := range len(s) {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// startTag handles a start tag whose token is current in z and returns its
// atom.
func (e *htmlExtractor) startTag(z *html.Tokenizer, selfClosing bool) atom.Atom {
	raw := z.Raw()
	a, name := e.tagName(raw)
	if e.skipDepth > 0 && !e.skipStart(a, name, selfClosing) {
		return a
	}
	hidden := false
	hasAttr := a == atom.Dialog || mayHide(raw)
	for hasAttr {
		var k, v []byte
		k, v, hasAttr = z.TagAttr()
		if attrHides(k, v) {
			hidden = true
		}
		if a == atom.Dialog && string(k) == "open" {
			a = openDialog
		}
	}
	if hidden || dropped(a) || (a == atom.Header || a == atom.Footer) && e.article == 0 {
		if voidElement(a) || selfClosing && a == atom.Svg {
			return a
		}
		if a == openDialog {
			a = atom.Dialog
		}
		e.skipAtom, e.skipDepth, e.skipInner, e.skipForeign = a, 1, 0, a == atom.Svg
		if a == 0 {
			e.skipName = append(e.skipName[:0], name...)
		}
		return a
	}
	switch a {
	case atom.Article:
		e.article++
	case atom.Pre, atom.Listing:
		e.pre++
	case atom.Td, atom.Th:
		e.space = true
		return a
	}
	if blockElement(a) {
		e.breakLine()
	}
	return a
}

// endTag handles an end tag named name (a its atom, 0 if none).
func (e *htmlExtractor) endTag(a atom.Atom, name []byte) {
	if e.skipDepth > 0 && !e.skipEnd(a, name) {
		return
	}
	switch a {
	case atom.Article:
		if e.article > 0 {
			e.article--
		}
	case atom.Pre, atom.Listing:
		if e.pre > 0 {
			e.pre--
		}
	case atom.Td, atom.Th:
		e.space = true
		return
	}
	if blockElement(a) {
		e.breakLine()
	}
}

// skipStart accounts for a start tag met while skipping an element. It
// returns true when the tag ends the skip and is to be handled as an element
// of its own: a tag that implicitly closes a skipped element whose end tag
// may be omitted (a hidden <p>, <li>, <tr>, …), where the tree builder would
// close it, so that the rest of the page is not dropped with it.
func (e *htmlExtractor) skipStart(a atom.Atom, name []byte, selfClosing bool) bool {
	if impliedEnd(e.skipAtom) {
		switch {
		case containerOf(e.skipAtom, a):
			e.skipInner++
		case e.skipInner == 0 && e.closedByStart(a):
			e.skipDepth = 0
			return true
		}
		return false
	}
	if e.isSkipped(a, name) && !(selfClosing && e.skipForeign) {
		e.skipDepth++
	}
	return false
}

// skipEnd accounts for an end tag met while skipping an element. It returns
// true when the tag ended the skip by closing the skipped element's parent
// (or the document), and is to be handled as an end tag of its own.
func (e *htmlExtractor) skipEnd(a atom.Atom, name []byte) bool {
	if a == atom.Body || a == atom.Html {
		e.skipDepth = 0
		return true
	}
	if impliedEnd(e.skipAtom) {
		switch {
		case containerOf(e.skipAtom, a) && e.skipInner > 0:
			e.skipInner--
		case e.skipInner > 0:
		case a == e.skipAtom:
			e.skipDepth = 0
		case e.closedByEnd(a):
			e.skipDepth = 0
			return true
		}
		return false
	}
	if e.isSkipped(a, name) {
		e.skipDepth--
	}
	return false
}

// isSkipped reports whether a tag names the element being skipped.
func (e *htmlExtractor) isSkipped(a atom.Atom, name []byte) bool {
	if e.skipAtom != 0 {
		return a == e.skipAtom
	}
	return a == 0 && bytes.Equal(name, e.skipName)
}

// impliedEnd reports elements whose end tag may be omitted.
func impliedEnd(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Li, atom.Dt, atom.Dd, atom.Option, atom.Tr, atom.Td, atom.Th:
		return true
	}
	return false
}

// containerOf reports whether tag a opens (or closes) an element inside
// skipped element s in which tags that would close s belong to a nested
// structure instead: a list inside a hidden li, a table inside a hidden td.
func containerOf(s, a atom.Atom) bool {
	switch s {
	case atom.Li:
		return a == atom.Ul || a == atom.Ol || a == atom.Menu
	case atom.Dt, atom.Dd:
		return a == atom.Dl
	case atom.Tr, atom.Td, atom.Th:
		return a == atom.Table
	case atom.Option:
		return a == atom.Select || a == atom.Datalist
	}
	return false
}

// closedByStart reports whether start tag a closes the skipped element,
// whose end tag may be omitted, at its own level.
func (e *htmlExtractor) closedByStart(a atom.Atom) bool {
	switch e.skipAtom {
	case atom.P:
		return closesP(a)
	case atom.Li:
		return a == atom.Li
	case atom.Dt, atom.Dd:
		return a == atom.Dt || a == atom.Dd
	case atom.Option:
		return a == atom.Option || a == atom.Optgroup
	case atom.Tr:
		return a == atom.Tr || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot
	case atom.Td, atom.Th:
		return a == atom.Td || a == atom.Th || a == atom.Tr || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot
	}
	return false
}

// closedByEnd reports whether end tag a, at the skipped element's own
// level, closes its parent and so the skipped element too.
func (e *htmlExtractor) closedByEnd(a atom.Atom) bool {
	switch e.skipAtom {
	case atom.P:
		// Only a parent's end tag: the end tags of what p may hold
		// (phrasing content, scripts, custom elements) leave it open.
		switch a {
		case atom.Td, atom.Th, atom.Tr, atom.Table, atom.Tbody, atom.Thead, atom.Tfoot,
			atom.Caption, atom.Li, atom.Dd, atom.Dt, atom.Button, atom.Object, atom.Template:
			return true
		}
		return closesP(a) && a != atom.P
	case atom.Li:
		return a == atom.Ul || a == atom.Ol || a == atom.Menu
	case atom.Dt, atom.Dd:
		return a == atom.Dl
	case atom.Option:
		return a == atom.Select || a == atom.Datalist || a == atom.Optgroup
	case atom.Tr:
		return a == atom.Table || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot
	case atom.Td, atom.Th:
		return a == atom.Table || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot || a == atom.Tr
	}
	return false
}

// minRawSkip is the shortest raw text worth a jump (and a new tokenizer,
// three allocations).
const minRawSkip = 256

// rawTextEnd returns the offset in src of the end tag that ends the raw text
// starting at from, the contents of element a just opened, as html.Tokenizer
// finds it; ok is false when a has no raw text the jump handles, or when the
// tokenizer must be left to find the end itself.
//
// html.Tokenizer reads the contents of script, style, textarea, title,
// iframe, noembed, noframes, noscript and xmp one byte at a time, looking for
// the end tag: "</" and the element's name in any ASCII case, then white
// space, '/' or '>' (readRawEndTag); before the end of the input, or there is
// no end. Searching for "</" with bytes.Index finds the same end tag many
// times faster. Script is the one exception, with "escaped" states entered
// through "<!--" in which "</script>" may not end it: a script whose text
// before the candidate holds "<!--" is left to the tokenizer. Going on with
// a new tokenizer at the end tag then yields exactly the tokens the old one
// would have (TestRawTextJump, FuzzAppendHTMLText).
func rawTextEnd(src []byte, from int, a atom.Atom) (int, bool) {
	var name string
	switch a {
	case atom.Script, atom.Style, atom.Textarea, atom.Title, atom.Iframe, atom.Noembed,
		atom.Noframes, atom.Noscript, atom.Xmp:
		name = a.String()
	default:
		return 0, false
	}
	for i := from; i < len(src); {
		j := bytes.Index(src[i:], []byte("</"))
		if j < 0 {
			return 0, false
		}
		k := i + j
		if d := k + 2 + len(name); d < len(src) && hasPrefixFold(src[k+2:], name) {
			switch src[d] {
			case ' ', '\n', '\r', '\t', '\f', '/', '>':
				if a == atom.Script && bytes.Contains(src[from:k], []byte("<!--")) {
					return 0, false
				}
				return k, true
			}
		}
		i = k + 2
	}
	return 0, false
}

// openDialog stands for a dialog start tag with the open attribute, which
// is shown; atom values are small positive numbers, so it cannot clash.
const openDialog atom.Atom = 1<<31 - 1

// dropped reports whether the contents of element a are not page text.
func dropped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Title,
		atom.Iframe, atom.Noembed, atom.Noframes, atom.Object, atom.Canvas, atom.Audio,
		atom.Video, atom.Select, atom.Textarea, atom.Dialog, atom.Nav, atom.Aside:
		return true
	}
	return false
}

// attrHides reports whether the attribute k=v hides its element.
func attrHides(k, v []byte) bool {
	switch string(k) {
	case "hidden":
		return true
	case "aria-hidden":
		return asciiEqualFold(bytes.TrimSpace(v), "true")
	case "style":
		return styleHides(v)
	case "role":
		switch string(bytes.TrimSpace(v)) {
		case "navigation", "banner", "contentinfo", "complementary":
			return true
		}
	}
	return false
}

// styleHides reports whether an inline style declares display:none or
// visibility:hidden (ignoring case and white space).
func styleHides(v []byte) bool {
	var buf [32]byte
	for len(v) > 0 {
		decl := v
		if i := bytes.IndexByte(v, ';'); i >= 0 {
			decl, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		// Squeeze out white space and fold case into buf.
		n := 0
		for _, c := range decl {
			if isHTMLSpace(c) {
				continue
			}
			if n == len(buf) {
				n = 0 // longer than any declaration we look for
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
		}
		d := string(buf[:n])
		if d == "display:none" || d == "visibility:hidden" ||
			d == "display:none!important" || d == "visibility:hidden!important" {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// voidElement reports elements that have no contents and no end tag.
func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Keygen, atom.Link, atom.Meta, atom.Param, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// blockElement reports elements that start and end a line.
func blockElement(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head,
		atom.Header, atom.Hgroup, atom.Hr, atom.Html, atom.Legend, atom.Li, atom.Listing,
		atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup, atom.Option, atom.P,
		atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Summary, atom.Table,
		atom.Tbody, atom.Tfoot, atom.Thead, atom.Tr, atom.Ul, atom.Xmp, openDialog:
		return true
	}
	return false
}

// closesP reports start tags that close an open p element.
func closesP(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details,
		atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Header, atom.Hgroup, atom.Hr, atom.Listing, atom.Main, atom.Menu, atom.Nav,
		atom.Ol, atom.P, atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Summary,
		atom.Table, atom.Ul, atom.Xmp, atom.Li, atom.Dd, atom.Dt:
		return true
	}
	return false
}

// isHTMLSpace reports HTML's ASCII white space.
func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// text appends the characters of one text token to the current line.
func (e *htmlExtractor) text(s []byte) {
	out := e.out
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' && e.pre > 0:
			e.out = out
			e.breakLine()
			out = e.out
			i++
			continue
		case isHTMLSpace(c):
			e.space = true
			i++
			continue
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0xa0: // U+00A0 NO-BREAK SPACE
			e.space = true
			i += 2
			continue
		}
		if e.space {
			if len(out) > e.lineStart {
				out = append(out, ' ')
			}
			e.space = false
		}
		// Copy the run of characters up to the next space.
		j := i + 1
		for j < len(s) && !isHTMLSpace(s[j]) && s[j] != 0xc2 {
			j++
		}
		out = append(out, s[i:j]...)
		i = j
	}
	e.out = out
}

// breakLine ends the current line, if it holds text.
func (e *htmlExtractor) breakLine() {
	e.space = false
	if len(e.out) > e.lineStart {
		e.out = append(e.out, '\n')
		e.lineStart = len(e.out)
	}
}
