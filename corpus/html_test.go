package corpus

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestAppendHTMLText(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty", ``, ``},
		{"plain text", `hello   world`, `hello world`},
		{"entities", `caf&eacute; &amp; cr&#232;me &lt;b&gt; &#x41;&nbsp;B`, `café & crème <b> A B`},
		{"inline elements join", `<p>foo<b>bar</b> <i>baz</i></p>`, `foobar baz`},
		{"blocks are lines", `<h1>Title</h1><p>one</p><div>two<div>three</div></div><li>four</li>`, "Title\none\ntwo\nthree\nfour"},
		{"br and hr", `a<br>b<br/>c<hr>d`, "a\nb\nc\nd"},
		{"whitespace collapsed and trimmed", "<p>  a \t\n b  </p>\n\n<p>\n c\r\n</p>", "a b\nc"},
		{"no-break spaces are spaces", "<p>&nbsp;&nbsp;x\u00a0\u00a0y&nbsp;</p><p>&nbsp;</p>", "x y"},
		{"table cells separated", `<table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>`, "a b\nc d"},
		{"pre keeps line breaks", "<pre>line 1\n  line 2\n\nline 3</pre>after", "line 1\nline 2\nline 3\nafter"},
		{"script and style dropped", `<p>a<script>var x = "</p>";</script>b</p><style>p{}</style><p>c</p>`, "ab\nc"},
		{"noscript template svg dropped", `<p>a</p><noscript>enable js</noscript><template><p>t</p></template><svg><text>s</text><svg/></svg><p>b</p>`, "a\nb"},
		{"self-closing svg", `<p>a<svg/>b</p>`, "ab"},
		{"nav header footer aside dropped", `<header>site</header><nav><ul><li>home</li></ul></nav><p>body</p><aside>ads</aside><footer>(c)</footer>`, "body"},
		{"article header kept", `<header>site</header><article><header><h1>Story</h1></header><p>text</p><footer>by me</footer></article><footer>site</footer>`, "Story\ntext\nby me"},
		{"title dropped", `<html><head><title>Page | Site</title><meta charset=utf-8></head><body><p>x</p></body></html>`, "x"},
		{"title outside head dropped", `<title>t</title>x`, "x"},
		{"comments and doctype", `<!DOCTYPE html><!-- c --><p>x<!-- y --></p><?php z ?>`, "x"},
		{"hidden attribute", `<p>a</p><div hidden><p>b</p><div>c</div></div><p>d</p>`, "a\nd"},
		{"aria-hidden", `<p>a<span aria-hidden="TRUE">icon</span>b<span aria-hidden="false">c</span></p>`, "abc"},
		{"display none", `<div style="color: red; DISPLAY : None">x</div><div style="display:block">y</div><span style="visibility:hidden !important">z</span>`, "y"},
		{"landmark roles", `<div role="navigation">menu</div><div role="main">m</div><div role=banner>b</div><div role="contentinfo">c</div>`, "m"},
		{"hidden void element", `<p>a<input hidden value=v><img hidden alt=x>b</p>`, "ab"},
		{"hidden p closed implicitly", `<p hidden>gone<p>kept<div>also</div>`, "kept\nalso"},
		{"hidden p closed by parent", `<div><p hidden>gone</div>kept`, "kept"},
		{"hidden p holding a script", `<div><p hidden>a<script>x</script>b<code>c</code>d</p>e</div>`, "e"},
		{"hidden p inline child", `<p hidden>gone <b>bold</b> still gone</p>kept`, "kept"},
		{"hidden li", `<ul><li hidden>gone<li>kept</ul>`, "kept"},
		{"hidden li nested list", `<ul><li hidden>a<ul><li>b<li>c</ul>d<li>kept</ul>`, "kept"},
		{"hidden li closed by list end", `<ul><li hidden>gone</ul><p>kept`, "kept"},
		{"hidden td", `<table><tr><td hidden>gone<td>kept</table>`, "kept"},
		{"hidden tr", `<table><tr hidden><td>gone<tr><td>kept</table>`, "kept"},
		{"nested same element", `<nav><nav>a</nav>b</nav>c`, "c"},
		{"nested hidden divs", `<div hidden><div>a</div><div>b</div></div>c`, "c"},
		{"custom element hidden", `<my-box hidden><my-box>a</my-box>b</my-box>c`, "c"},
		{"dialog", `<dialog>closed</dialog><dialog open>shown</dialog>`, "shown"},
		{"select textarea dropped", `<form>Country <select><option>France<option>Peru</select><textarea>draft</textarea> go</form>`, "Country go"},
		{"attributes are not text", `<img alt="a picture" title="t"><a href="x" title="y">link</a>`, "link"},
		{"unclosed tags", `<div><p>one<p>two<li>three`, "one\ntwo\nthree"},
		{"stray end tags", `</div></p>a</b>b`, "ab"},
		{"less-than in text", `a < b <3 c`, "a < b <3 c"},
		{"upper-case tags", `<P>a</P><SCRIPT>x</SCRIPT><DIV HIDDEN>y</DIV>b`, "a\nb"},
		{"invalid utf-8 passes", "<p>a\xffb</p>", "a\xffb"},
		{"unterminated script", `a<script>b`, "a"},
		{"body end closes skip", `<div hidden>a</body>b`, "b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(AppendHTMLText(nil, []byte(c.in)))
			if got != c.want {
				t.Errorf("AppendHTMLText(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if got := string(AppendHTMLText([]byte("prefix\n"), []byte(c.in))); got != "prefix\n"+c.want {
				t.Errorf("with a prefix: got %q; want %q", got, "prefix\n"+c.want)
			}
		})
	}
}

// treeText is the reference extraction: html.Parse builds the tree (with
// all of the HTML5 tree builder's error recovery) and a walk of the tree
// applies the same rules as the token walk. It is what the token walk is
// measured against (BenchmarkExtractHTML) and checked against
// (TestExtractHTMLTokensMatchTree).
func treeText(dst, src []byte) []byte {
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		panic(err) // html.Parse fails only on read errors
	}
	e := htmlExtractor{out: dst, lineStart: len(dst)}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			e.text([]byte(n.Data))
			return
		case html.DocumentNode:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
			return
		case html.ElementNode:
		default:
			return
		}
		a := n.DataAtom
		if n.Namespace != "" && a != atom.Svg {
			a = 0 // inside foreign content other than the svg root itself
		}
		hidden := false
		for _, at := range n.Attr {
			if at.Namespace == "" && attrHides([]byte(at.Key), []byte(at.Val)) {
				hidden = true
			}
			if a == atom.Dialog && at.Key == "open" {
				a = openDialog
			}
		}
		if hidden || dropped(a) || (a == atom.Header || a == atom.Footer) && e.article == 0 {
			return
		}
		switch a {
		case atom.Article:
			e.article++
			defer func() { e.article-- }()
		case atom.Pre, atom.Listing:
			e.pre++
			defer func() { e.pre-- }()
		case atom.Td, atom.Th:
			e.space = true
			defer func() { e.space = true }()
		}
		if blockElement(a) {
			e.breakLine()
			defer e.breakLine()
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	e.breakLine()
	if n := len(e.out); n > len(dst) && e.out[n-1] == '\n' {
		e.out = e.out[:n-1]
	}
	return e.out
}

// wellFormedPage generates a random well-formed page: every element
// closed, block elements only inside blocks, the kind of markup on which the
// tree builder does no error recovery, so the token walk and the tree walk
// must agree exactly.
func wellFormedPage(rng *rand.Rand) []byte {
	var b strings.Builder
	words := []string{"alpha", "beta", "&amp;", "caf&eacute;", "x&nbsp;y", "<!-- c -->", "δ", "  ", "\n", "a&lt;b"}
	blocks := []string{"div", "p", "section", "article", "header", "footer", "nav", "aside", "blockquote", "h2", "main"}
	inline := []string{"span", "b", "i", "em", "code"} // no a: nested links are not well-formed
	attrs := []string{"", "", "", ` class="c"`, ` hidden`, ` aria-hidden="true"`, ` style="display:none"`, ` role="navigation"`, ` id=x`}
	var text func(depth int)
	text = func(depth int) {
		for range rng.IntN(4) + 1 {
			switch r := rng.IntN(10); {
			case r < 6:
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			case r < 8 && depth < 4:
				tag := inline[rng.IntN(len(inline))]
				fmt.Fprintf(&b, "<%s%s>", tag, attrs[rng.IntN(len(attrs))])
				text(depth + 1)
				fmt.Fprintf(&b, "</%s>", tag)
			case r < 9:
				b.WriteString("<br>")
			default:
				b.WriteString(`<script>var s = "<p>no</p>";</script>`)
			}
		}
	}
	var block func(depth int)
	block = func(depth int) {
		for range rng.IntN(4) + 1 {
			switch r := rng.IntN(10); {
			case r < 5 || depth >= 4:
				tag := "p"
				if rng.IntN(3) == 0 {
					tag = "h1"
				}
				fmt.Fprintf(&b, "<%s%s>", tag, attrs[rng.IntN(len(attrs))])
				text(depth)
				fmt.Fprintf(&b, "</%s>", tag)
			case r < 8:
				tag := blocks[rng.IntN(len(blocks))]
				if tag == "p" || tag == "h2" {
					tag = "div"
				}
				fmt.Fprintf(&b, "<%s%s>", tag, attrs[rng.IntN(len(attrs))])
				block(depth + 1)
				fmt.Fprintf(&b, "</%s>", tag)
			case r < 9:
				fmt.Fprintf(&b, "<ul%s><li>", attrs[rng.IntN(len(attrs))])
				text(depth)
				b.WriteString("</li><li" + attrs[rng.IntN(len(attrs))] + ">")
				text(depth)
				b.WriteString("</li></ul>")
			default:
				b.WriteString("<table><tbody><tr><td>")
				text(depth)
				b.WriteString("</td><td" + attrs[rng.IntN(len(attrs))] + ">")
				text(depth)
				b.WriteString("</td></tr></tbody></table>")
			}
		}
	}
	b.WriteString("<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body>")
	block(0)
	b.WriteString("</body></html>")
	return []byte(b.String())
}

func TestExtractHTMLTokensMatchTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		page := wellFormedPage(rng)
		got, want := AppendHTMLText(nil, page), treeText(nil, page)
		if !bytes.Equal(got, want) {
			t.Fatalf("page %d: %s\ntokens: %q\ntree:   %q", i, page, got, want)
		}
	}
	for _, page := range benchPages(t) {
		got, want := AppendHTMLText(nil, page.html), treeText(nil, page.html)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the token walk and the tree walk differ", page.name)
			gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for j := range min(len(gl), len(wl)) {
				if gl[j] != wl[j] {
					t.Errorf("first difference at line %d:\ntokens: %q\ntree:   %q", j+1, gl[j], wl[j])
					break
				}
			}
		}
	}
}

// TestAppendHTMLTextAllocs checks that extraction allocates per document
// and per attribute (html.Tokenizer's own costs), not per byte of text or per
// tag: a page with a hundred times more paragraphs costs no more.
func TestAppendHTMLTextAllocs(t *testing.T) {
	para := "<p>Some <b>bold</b> text &amp; an entity, <i>twice</i>.</p>\n"
	allocs := func(body string) float64 {
		page := []byte(sitePage(body, 3))
		var e htmlExtractor
		dst := make([]byte, 0, len(page))
		return testing.AllocsPerRun(20, func() { dst = e.appendText(dst[:0], page) })
	}
	one, many := allocs(para), allocs(strings.Repeat(para, 100))
	if many != one {
		t.Errorf("got %v allocations for 100 paragraphs and %v for one; want the same", many, one)
	}
}

// TestRawTextJump checks that jumping over dropped raw text (rawTextEnd)
// gives exactly the text of letting html.Tokenizer read it, on end tags in
// every form, scripts with escapes, and pages.
func TestRawTextJump(t *testing.T) {
	pad := strings.Repeat("x = 1; ", 50) // past minRawSkip
	cases := []string{
		"<script>" + pad + "</script><p>after</p>",
		"<SCRIPT type=x>" + pad + "</ScRiPt >after",
		"<style>" + pad + "</style\n>after<style>a</style/>b",
		"<script>" + pad + "</scripty></script>after",
		"<div hidden><script>" + pad + "</scripty></div>shown?</script></div>after",
		"<div hidden><style>" + pad + "</style</div>shown?</style></div>after",
		"<script>" + pad + "<!-- <script> </script> --></script>after</script>more",
		"<script>" + pad + "<!--</script>after",
		"<script>" + pad + "</script",
		"<script>" + pad + "</",
		"<script>" + pad,
		"<textarea>" + pad + "&amp;</textarea>after<title>" + pad + "</title>t",
		"<div hidden><script>" + pad + "</div></script>in</div>after",
		"<div hidden><xmp>" + pad + "</div></xmp>in</div><xmp>shown " + pad + "</xmp>",
		"<noscript>" + pad + "<p>no</p></noscript><iframe>" + pad + "</iframe>x<noembed>" + pad + "</noembed>y<noframes>" + pad + "</noframes>z",
		"<svg><style>" + pad + "</style><text>t</text></svg>after",
		"<script>" + pad + "</script\x00>after</script>x",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		cases = append(cases, string(wellFormedPage(rng)))
	}
	for _, p := range benchPages(t) {
		cases = append(cases, string(p.html))
	}
	for _, c := range cases {
		for _, min := range []int{1, minRawSkip} {
			jump, walk := htmlExtractor{jumpMin: min}, htmlExtractor{jumpMin: -1}
			got, want := jump.appendText(nil, []byte(c)), walk.appendText(nil, []byte(c))
			if !bytes.Equal(got, want) {
				t.Errorf("jumping (min %d) over raw text of %q:\n got %q\nwant %q", min, clip([]byte(c), 200), got, want)
			}
		}
	}
}

// FuzzAppendHTMLText checks on any input that extraction does not panic,
// that its output has the documented shape (no empty, untrimmed or
// space-doubled lines), that it keeps valid UTF-8 valid, that the token
// walk's text is made only of characters of the input's text (no markup
// invented), that a prefix in dst is kept, and that jumping over raw text
// changes nothing.
func FuzzAppendHTMLText(f *testing.F) {
	for _, s := range []string{
		``, `plain`, `<p>a</p><p>b</p>`, `<div hidden><p>x</div>y`, `<ul><li hidden>a<ul><li>b</ul><li>c</ul>`,
		`<script>a</script>`, `<svg><svg/></svg>x`, `<pre>a
b</pre>`, `&amp;&nbsp;&#0;&#xD800;`, `<table><tr hidden><td>a<tr><td>b</table>`,
		`<p style="display:none">x</p>`, "\x00<p\x00>\xff", `<dialog open>d</dialog>`, `<article><header>h</header></article>`,
		`<script>a<!--<script></script>--></script>b</script>c`, `<style>a</STYLE >b`, `<textarea>t</textarea/>u`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out := AppendHTMLText([]byte("x"), src)
		if len(out) == 0 || out[0] != 'x' {
			t.Fatalf("the prefix was lost: %q", out)
		}
		jump, walk := htmlExtractor{jumpMin: 1}, htmlExtractor{jumpMin: -1}
		if a, b := jump.appendText(nil, src), walk.appendText(nil, src); !bytes.Equal(a, b) || !bytes.Equal(b, out[1:]) {
			t.Fatalf("%q: jumping over raw text gives %q, walking %q", src, a, b)
		}
		text := out[1:]
		if len(text) == 0 {
			return
		}
		for _, line := range bytes.Split(text, []byte{'\n'}) {
			if len(line) == 0 {
				t.Fatalf("empty line in %q (from %q)", text, src)
			}
			if isHTMLSpace(line[0]) || isHTMLSpace(line[len(line)-1]) || bytes.Contains(line, []byte("  ")) {
				t.Fatalf("line %q is not trimmed and collapsed (from %q)", line, src)
			}
		}
		if utf8.Valid(src) && !utf8.Valid(text) {
			t.Fatalf("valid UTF-8 in, invalid out: %q -> %q", src, text)
		}
		if !bytes.ContainsAny(src, "<&") && utf8.Valid(src) {
			// No markup: the text is the input with white space collapsed.
			want := strings.Join(strings.FieldsFunc(string(src), func(r rune) bool {
				return r < utf8.RuneSelf && isHTMLSpace(byte(r)) || r == '\u00a0'
			}), " ")
			if string(text) != want {
				t.Fatalf("plain %q: got %q; want %q", src, text, want)
			}
		}
	})
}
