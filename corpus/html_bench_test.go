package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// bundledArticles is the news sample shipped in the repository (MIT licence,
// testdata/articles.LICENSE).
const bundledArticles = "../testdata/articles_1000.jsonl"

// loadArticles returns the texts of the bundled articles, or skips tb.
func loadArticles(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(bundledArticles)
	if err != nil {
		tb.Skipf("bundled articles absent: %v", err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var a struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			tb.Fatal(err)
		}
		texts = append(texts, a.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return texts
}

// articleBody marks up an article's text as paragraphs of three sentences.
func articleBody(text string) string {
	var b strings.Builder
	sentences := strings.SplitAfter(text, ". ")
	for i := 0; i < len(sentences); i += 3 {
		b.WriteString(`<p class="article-body__paragraph">`)
		b.WriteString(html.EscapeString(strings.Join(sentences[i:min(i+3, len(sentences))], "")))
		b.WriteString("</p>\n")
	}
	return b.String()
}

// sitePage wraps body in the kind of template a news site serves: a head
// full of meta, link, style and JSON-LD, a header with a navigation menu, a
// cookie banner, related links in an aside, a footer and trailing scripts.
// Most of its bytes are markup, as on real pages. n numbers the page.
func sitePage(body string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en" class="no-js">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Story %d | The Daily Example</title>
<meta name="description" content="The latest news from around the world.">
<meta property="og:title" content="Story %d">
<meta property="og:type" content="article">
<link rel="stylesheet" href="/static/css/main.4f3a9c.css">
<link rel="preload" href="/static/fonts/serif.woff2" as="font" type="font/woff2" crossorigin>
<link rel="canonical" href="https://news.example.com/world/story-%d">
<style>.article-body__paragraph{margin:0 0 1em;font:18px/1.6 Georgia,serif}.nav__item{display:inline-block;padding:.5em}.cookie-banner{position:fixed;bottom:0}</style>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Story %d","datePublished":"2024-05-01T08:00:00Z","author":{"@type":"Person","name":"A. Reporter"}}</script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-XXXX"></script>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag('js',new Date());gtag('config','G-XXXX');</script>
</head>
<body class="page page--article">
<div class="cookie-banner" id="cookie-banner" role="dialog"><p>We use cookies to improve your experience. By continuing you accept our <a href="/cookies">cookie policy</a>.</p><button class="btn btn--primary" onclick="accept()">Accept</button></div>
<header class="site-header"><a class="site-header__logo" href="/"><img src="/static/logo.svg" alt="The Daily Example" width="180" height="40"></a>
<nav class="nav" aria-label="Main"><ul class="nav__list">
`, n, n, n, n)
	for _, s := range []string{"World", "Politics", "Business", "Technology", "Science", "Health", "Sport", "Culture", "Travel", "Opinion", "Video", "Podcasts"} {
		fmt.Fprintf(&b, `<li class="nav__item"><a class="nav__link" href="/%s" data-track="nav-%s">%s</a></li>`+"\n", strings.ToLower(s), strings.ToLower(s), s)
	}
	fmt.Fprintf(&b, `</ul></nav><form class="search" action="/search"><input type="search" name="q" placeholder="Search"><button type="submit">Search</button></form></header>
<main id="main" class="layout">
<article class="article" itemscope itemtype="https://schema.org/NewsArticle">
<header class="article__header"><h1 class="article__headline" itemprop="headline">Story number %d</h1>
<p class="article__byline">By <a href="/people/a-reporter" rel="author">A. Reporter</a> &middot; <time datetime="2024-05-01T08:00:00Z">1 May 2024</time></p></header>
<div class="article__body" itemprop="articleBody">
%s</div>
<div class="share" aria-hidden="true"><a href="#" class="share__link share__link--x">Share</a><a href="#" class="share__link share__link--fb">Share</a></div>
</article>
<aside class="related"><h2>Related stories</h2><ul>
`, n, body)
	for i := range 6 {
		fmt.Fprintf(&b, `<li class="related__item"><a href="/world/story-%d"><img src="/img/%d.jpg" alt="" loading="lazy"><span>Story %d</span></a></li>`+"\n", n+i+1, n+i+1, n+i+1)
	}
	b.WriteString(`</ul></aside>
</main>
<footer class="site-footer"><ul class="site-footer__links"><li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li><li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use</a></li></ul>
<p class="site-footer__copy">&copy; 2024 The Daily Example Ltd. All rights reserved.</p></footer>
<script src="/static/js/vendor.8d1e2f.js" defer></script>
<script src="/static/js/main.1b7c4a.js" defer></script>
</body>
</html>
`)
	return b.String()
}

// appPage is sitePage as a framework builds it: an inline stylesheet of
// about 8 kB in the head and the page's state as a JSON script of about
// 20 kB at the end of the body (Next.js's __NEXT_DATA__, Nuxt's __NUXT__),
// holding the article text again and a list of related items.
func appPage(text string, n int) string {
	var css strings.Builder
	for i := range 120 {
		fmt.Fprintf(&css, ".c%d{margin:0 %dpx;padding:%dpx;color:#%06x}", i, i%7, i%5, i*997)
	}
	type item struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
		URL   string `json:"url"`
		Tags  []string
	}
	state := struct {
		Props struct {
			Text    string `json:"text"`
			Related []item `json:"related"`
		} `json:"props"`
		Page string `json:"page"`
	}{Page: "/world/[slug]"}
	state.Props.Text = text
	for i := range 120 {
		state.Props.Related = append(state.Props.Related, item{n*1000 + i, fmt.Sprintf("Story %d", n+i), fmt.Sprintf("/world/story-%d", n+i), []string{"world", "news"}})
	}
	js, _ := json.Marshal(state)
	page := sitePage(articleBody(text), n)
	page = strings.Replace(page, "</head>", "<style>"+css.String()+"</style>\n</head>", 1)
	return strings.Replace(page, "</body>", `<script id="__NEXT_DATA__" type="application/json">`+string(js)+"</script>\n</body>", 1)
}

type benchPage struct {
	name string
	html []byte
}

// benchPages returns the pages benchmarks and cross-checks run on: the
// bundled articles in the site template (one page per article, joined so
// that one b.N iteration extracts them all), the same as framework-built
// pages heavy with inline style and script (appPage), and the Go
// specification from GOROOT, a long page that is mostly text.
func benchPages(tb testing.TB) []benchPage {
	tb.Helper()
	var pages []benchPage
	if texts := loadArticles(tb); len(texts) > 0 {
		var site []byte
		for i, text := range texts[:200] {
			site = append(site, sitePage(articleBody(text), i)...)
		}
		pages = append(pages, benchPage{"site", site})
		var app []byte
		for i, text := range texts[:200] {
			app = append(app, appPage(text, i)...)
		}
		pages = append(pages, benchPage{"app", app})
	}
	if spec, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html")); err == nil {
		pages = append(pages, benchPage{"gospec", spec})
	}
	return pages
}

// splitPages cuts the joined site pages back into documents.
func splitPages(b []byte) [][]byte {
	var docs [][]byte
	for len(b) > 0 {
		i := bytes.Index(b[1:], []byte("<!DOCTYPE"))
		if i < 0 {
			return append(docs, b)
		}
		docs, b = append(docs, b[:i+1]), b[i+1:]
	}
	return docs
}

// BenchmarkExtractHTML measures extraction in bytes of HTML per second, by
// the token walk that AppendHTMLText uses, the same without jumping over raw
// text (rawTextEnd), and html.Parse and a tree walk (the reference), per
// document as the Parser calls it.
func BenchmarkExtractHTML(b *testing.B) {
	for _, page := range benchPages(b) {
		docs := [][]byte{page.html}
		if page.name == "site" || page.name == "app" {
			docs = splitPages(page.html)
		}
		for _, impl := range []struct {
			name string
			fn   func(e *htmlExtractor, dst, src []byte) []byte
		}{
			{"tokens", (*htmlExtractor).appendText},
			{"tokens-nojump", func(e *htmlExtractor, dst, src []byte) []byte { e.jumpMin = -1; return e.appendText(dst, src) }},
			{"tree", func(_ *htmlExtractor, dst, src []byte) []byte { return treeText(dst, src) }},
		} {
			b.Run(page.name+"/"+impl.name, func(b *testing.B) {
				var e htmlExtractor
				var out []byte
				b.SetBytes(int64(len(page.html)))
				b.ReportAllocs()
				c0 := cputime.Process()
				for b.Loop() {
					for _, d := range docs {
						out = impl.fn(&e, out[:0], d)
					}
				}
				cputime.ReportThroughput(b, int64(len(page.html)), cputime.Process()-c0)
				b.ReportMetric(float64(len(out)), "text-bytes/last-doc")
			})
		}
	}
}
