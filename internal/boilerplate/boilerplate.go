// Package boilerplate finds the lines that many documents of a corpus share
// — navigation, cookie banners, footers — so that a shingle spec can drop
// them (shingle.Spec.Boilerplate): it counts in how many documents each
// normalised line occurs, exactly and within a memory budget, and picks the
// lines that occur in at least N documents, N given or chosen from the
// corpus. It is the first pass of a job that drops boilerplate; every
// command that does (neardup dedup, sign, eval truth, index build,
// boilerplate) counts through it, so that they drop the same lines.
//
// # Counting
//
// Each document's lines (shingle.Shingler.AppendLines, under the spec
// without a set) are reduced to their distinct line hashes, and each hash is
// added once per document to a spilling sorter (internal/extsort): sorted,
// equal hashes are adjacent and their run is the line's document count,
// exact whatever the budget. A count-min sketch of the same hashes, updated
// in input order, picks out while the corpus is read the lines that may end
// up frequent, and keeps the text of one of their occurrences for the
// report (the counts of a count-min sketch never fall short, so no frequent
// line is missed); the sketch decides nothing else.
//
// # Choosing N
//
// With Options.MinDocs 0 (auto), N comes from the histogram of document
// counts in powers of two — C(0) lines in 1 document, C(1) in 2–3, C(2) in
// 4–7, … Lines repeated because documents are near duplicates of each other
// thin out geometrically from the unique ones: C(b) ≈ C(0)·ρ^b with ρ =
// C(1)/C(0) (each add-one smoothed). Template lines do not: a site's template
// puts its lines at the count of the site's pages, far out. N is the lower
// edge 2^b of the first bin b ≥ 2 that holds at least MinAutoLines lines and
// at least twice what the tail predicts; if there is none, no line is
// boilerplate. Result.Reason says which bin and why. A line shared by many
// copies of one text counts as well: where exact or near copies abound,
// give N (or leave boilerplate off) rather than auto.
//
// Counting is deterministic: the same corpus, spec and N give the same set,
// and the same texts in the report, whatever the number of workers or the
// budget.
package boilerplate

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/shingle"
)

// Errors; check with errors.Is.
var (
	// ErrBadOptions reports Options that break a rule.
	ErrBadOptions = errors.New("boilerplate: invalid options")
	// ErrTooManyLines reports a MinDocs so low that the set would hold more
	// lines than MaxLines or the memory budget allows.
	ErrTooManyLines = errors.New("boilerplate: too many lines")
)

// Limits and defaults.
const (
	// MaxLines is the most lines a set holds: 8 MiB of hashes, which the
	// index stores in its meta record and a pipeline ships to its workers.
	MaxLines = 1 << 20
	// MinAutoLines is the fewest lines in a bin that auto takes for
	// boilerplate: one or two lines far out are quotes or slogans, a
	// template has several.
	MinAutoLines = 4
	// DefaultTop is the default Options.Top.
	DefaultTop = 20
	// DefaultMemory is the default Options.Memory: 256 MiB.
	DefaultMemory = 256 << 20
	// maxTextBytes bounds the text kept of a line for the report.
	maxTextBytes = 200
	// maxTexts bounds the lines whose text is kept while counting.
	maxTexts = 1 << 15
	// lineBytes is what a line of the set costs in memory: its hash and
	// count while collected, its hash in the sorted list and two slots of
	// the lookup table.
	lineBytes = 40
)

// Options configure a count. A nil *Options means every default.
type Options struct {
	// MinDocs is N: lines in at least this many documents are boilerplate.
	// 0 chooses N from the corpus (auto; see the package doc). Default 0;
	// at least 2 when set.
	MinDocs int
	// Memory is the budget in bytes for the count: half for sorting line
	// hashes (then spilled), an eighth for the count-min sketch, a
	// sixteenth for the set. Default DefaultMemory; at least 1 MiB.
	Memory int64
	// TempDir holds spill files. Default "" (os.TempDir()).
	TempDir string
	// Workers is the number of goroutines that parse and normalise.
	// Default 0: GOMAXPROCS. Results do not depend on it.
	Workers int
	// Top is how many of the most frequent boilerplate lines Result.Top
	// lists, with their texts. Default DefaultTop.
	Top int
}

func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.Top == 0 {
		c.Top = DefaultTop
	}
	switch {
	case c.MinDocs < 0 || c.MinDocs == 1:
		return c, fmt.Errorf("%w: MinDocs %d; want 0 (auto) or at least 2 documents", ErrBadOptions, c.MinDocs)
	case c.Memory < 1<<20:
		return c, fmt.Errorf("%w: Memory %d bytes; want at least 1 MiB", ErrBadOptions, c.Memory)
	case c.Top < 0:
		return c, fmt.Errorf("%w: Top %d is negative", ErrBadOptions, c.Top)
	}
	return c, nil
}

// Result is what a count found. Plain data (it encodes with encoding/json
// into report.json's "boilerplate").
type Result struct {
	// Set is the boilerplate set, to put in shingle.Spec.Boilerplate; nil
	// when no line reaches N.
	Set *shingle.Boilerplate `json:"-"`
	// Auto reports that N was chosen from the corpus.
	Auto bool `json:"auto"`
	// MinDocs is N, given or chosen; 0 when auto found no boilerplate.
	MinDocs int `json:"min_docs"`
	// Reason says how N was chosen (auto) or what N gave.
	Reason string `json:"reason"`
	// Documents is the number of documents counted.
	Documents int64 `json:"documents"`
	// Occurrences is the number of (document, distinct line) pairs counted.
	Occurrences int64 `json:"occurrences"`
	// Distinct is the number of distinct lines.
	Distinct int64 `json:"distinct_lines"`
	// Lines is the number of lines in the set.
	Lines int `json:"lines"`
	// Dropped is the number of (document, line) pairs the set drops: the
	// sum of its lines' document counts.
	Dropped int64 `json:"dropped"`
	// Histogram counts the distinct lines by their document count, in
	// powers of two: bin b holds the lines in 2^b to 2^(b+1)−1 documents.
	Histogram []Bin `json:"histogram"`
	// Top are the most frequent lines of the set (most documents first,
	// then by hash), at most Options.Top.
	Top []TopLine `json:"top"`

	all   []TopLine         // every line of the set, for WriteLines
	texts map[uint64]string // the texts kept while counting
}

// Bin is one bin of Result.Histogram.
type Bin struct {
	MinDocs int64 `json:"min_docs"` // 2^b
	MaxDocs int64 `json:"max_docs"` // 2^(b+1) − 1
	Lines   int64 `json:"lines"`    // distinct lines whose document count is in the bin
}

// TopLine is one line of Result.Top.
type TopLine struct {
	// Docs is the number of documents the line occurs in.
	Docs int64 `json:"docs"`
	// Hash is the line hash, 16 hex digits.
	Hash string `json:"hash"`
	// Text is the line as one of its occurrences wrote it (trimmed, at most
	// 200 bytes, invalid UTF-8 replaced); "" if no text was kept.
	Text string `json:"text"`

	h uint64
}

// Count reads inputs with copts (as corpus.NewReader; "-" must already be
// spooled, as the corpus is read once here and again by the job), counts
// the lines of every document under spec (its own Boilerplate, if any, is
// ignored) and returns the lines that occur in at least N documents. It
// also returns the corpus statistics of the pass.
func Count(ctx context.Context, inputs []string, copts *corpus.Options, spec shingle.Spec, opts *Options) (*Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	spec.Boilerplate = nil
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	reader, err := corpus.NewReader(inputs, copts)
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	c := newCounter(&o)
	defer c.close()
	_, err = corpuspipe.Run(ctx, reader, copts, o.Workers,
		func() (corpuspipe.Worker[docLines], error) {
			sh, err := shingle.New(spec)
			if err != nil {
				return corpuspipe.Worker[docLines]{}, err
			}
			w := &lineWorker{sh: sh}
			return corpuspipe.Worker[docLines]{Begin: w.begin, Document: w.document}, nil
		},
		func(b *corpuspipe.Batch[docLines]) error { return c.add(&b.Result) })
	if err != nil {
		return nil, err
	}
	return c.result(&o)
}

// docLines is what a worker makes of a batch: per document its distinct
// line hashes and the text of each (truncated).
type docLines struct {
	hashes  []uint64
	docEnd  []int // hashes[docEnd[i-1]:docEnd[i]] are document i's
	texts   []byte
	textEnd []int // per hash
}

type lineWorker struct {
	sh    *shingle.Shingler
	lines []shingle.Line
}

func (w *lineWorker) begin(res *docLines, _ *corpus.Batch) {
	res.hashes, res.docEnd, res.texts, res.textEnd = res.hashes[:0], res.docEnd[:0], res.texts[:0], res.textEnd[:0]
}

func (w *lineWorker) document(res *docLines, _ *corpus.Record, doc *corpus.Document) error {
	w.lines = w.sh.AppendLines(w.lines[:0], doc.Text)
	// Distinct hashes, each with its first line in the document.
	slices.SortStableFunc(w.lines, func(a, b shingle.Line) int { return cmp.Compare(a.Hash, b.Hash) })
	w.lines = slices.CompactFunc(w.lines, func(a, b shingle.Line) bool { return a.Hash == b.Hash })
	for _, l := range w.lines {
		res.hashes = append(res.hashes, l.Hash)
		res.texts = appendText(res.texts, doc.Text[l.Start:l.End])
		res.textEnd = append(res.textEnd, len(res.texts))
	}
	res.docEnd = append(res.docEnd, len(res.hashes))
	return nil
}

// appendText appends line, trimmed of surrounding whitespace and cut to at
// most maxTextBytes at a code point boundary, to dst.
func appendText(dst, line []byte) []byte {
	t := strings.TrimSpace(string(line)) // a copy only when the line is not ASCII-clean; fine for a report
	if len(t) > maxTextBytes {
		cut := maxTextBytes
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut]
	}
	return append(dst, t...)
}

// counter is the collector of a count: it sees every document's lines in
// input order.
type counter struct {
	sorted *extsort.Sorter
	cms    cms
	texts  map[uint64]string
	level  uint32 // the sketch count at which a line's text is kept
	docs   int64
	tmp    string
}

func newCounter(o *Options) *counter {
	return &counter{
		sorted: extsort.New(o.TempDir, "neardup-boilerplate-lines", int(o.Memory/2/16)),
		cms:    newCMS(o.Memory / 8),
		texts:  map[uint64]string{},
		level:  2,
		tmp:    o.TempDir,
	}
}

func (c *counter) close() { c.sorted.Close() }

func (c *counter) add(d *docLines) error {
	t0 := 0
	for i, h := range d.hashes {
		est := c.cms.add(h)
		if est >= c.level {
			if _, ok := c.texts[h]; !ok {
				c.texts[h] = string(d.texts[t0:d.textEnd[i]])
				if len(c.texts) > maxTexts {
					c.raiseLevel()
				}
			}
		}
		t0 = d.textEnd[i]
	}
	c.docs += int64(len(d.docEnd))
	return c.sorted.Add(d.hashes...)
}

// raiseLevel doubles the level at which texts are kept and forgets those
// of lines below it, until the texts fit.
func (c *counter) raiseLevel() {
	for len(c.texts) > maxTexts/2 && c.level < math.MaxUint32/2 {
		c.level *= 2
		for h := range c.texts {
			if c.cms.estimate(h) < c.level {
				delete(c.texts, h)
			}
		}
	}
}

// result counts the sorted hashes, chooses N and collects the set.
func (c *counter) result(o *Options) (*Result, error) {
	res := &Result{Documents: c.docs, Occurrences: c.sorted.Len(), Auto: o.MinDocs == 0}
	it, err := c.sorted.Iter(false)
	if err != nil {
		return nil, fmt.Errorf("boilerplate: %w", err)
	}
	defer it.Close()
	// Lines in two or more documents go to a file of (hash, count) for the
	// second look once N is known; the histogram is counted on the way.
	f, err := os.CreateTemp(c.tmp, "neardup-boilerplate-repeated-*")
	if err != nil {
		return nil, fmt.Errorf("boilerplate: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var hist []int64 // by bin
	var given int64  // lines in at least o.MinDocs documents
	var rec [16]byte
	emit := func(h uint64, n int64) error {
		res.Distinct++
		if o.MinDocs > 0 && n >= int64(o.MinDocs) {
			given++
		}
		b := binOf(n)
		for len(hist) <= b {
			hist = append(hist, 0)
		}
		hist[b]++
		if n < 2 {
			return nil
		}
		binary.LittleEndian.PutUint64(rec[:], h)
		binary.LittleEndian.PutUint64(rec[8:], uint64(n))
		_, err := w.Write(rec[:])
		return err
	}
	var cur uint64
	var n int64
	for v, ok := it.Next(); ok; v, ok = it.Next() {
		if n > 0 && v != cur {
			if err := emit(cur, n); err != nil {
				return nil, err
			}
			n = 0
		}
		cur = v
		n++
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("boilerplate: %w", err)
	}
	if n > 0 {
		if err := emit(cur, n); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("boilerplate: %w", err)
	}
	for b, k := range hist {
		res.Histogram = append(res.Histogram, Bin{MinDocs: 1 << b, MaxDocs: 1<<(b+1) - 1, Lines: k})
	}
	limit := min(MaxLines, int(o.Memory/16/lineBytes))
	if res.MinDocs, res.Reason, err = chooseN(o.MinDocs, given, hist, limit); err != nil {
		return nil, err
	}
	if res.MinDocs == 0 {
		return res, nil
	}
	// The second look: the lines that reach N.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("boilerplate: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var lines []uint64
	for {
		if _, err := io.ReadFull(r, rec[:]); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("boilerplate: re-reading counts: %w", err)
		}
		h, k := binary.LittleEndian.Uint64(rec[:]), int64(binary.LittleEndian.Uint64(rec[8:]))
		if k < int64(res.MinDocs) {
			continue
		}
		lines = append(lines, h)
		res.Dropped += k
		res.all = append(res.all, TopLine{Docs: k, h: h})
	}
	res.Set = shingle.NewBoilerplate(lines)
	res.Lines = len(lines)
	res.texts = c.texts
	sortLines(res.all)
	for _, t := range res.all[:min(o.Top, len(res.all))] {
		res.Top = append(res.Top, res.line(t))
	}
	return res, nil
}

// line returns t with its hash and text filled in.
func (r *Result) line(t TopLine) TopLine {
	t.Hash = fmt.Sprintf("%016x", t.h)
	t.Text = strings.ToValidUTF8(r.texts[t.h], "\uFFFD")
	return t
}

// sortLines sorts lines by documents, most first, then by hash.
func sortLines(t []TopLine) {
	slices.SortFunc(t, func(a, b TopLine) int {
		if c := cmp.Compare(b.Docs, a.Docs); c != 0 {
			return c
		}
		return cmp.Compare(a.h, b.h)
	})
}

// binOf returns the histogram bin of a document count n ≥ 1: ⌊log2 n⌋.
func binOf(n int64) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

// chooseN returns N: minDocs when given (the set then has given lines,
// which must fit in limit), else the auto choice from the histogram (see the
// package doc), and the reason.
func chooseN(minDocs int, given int64, hist []int64, limit int) (int, string, error) {
	if minDocs > 0 {
		if given > int64(limit) {
			return 0, "", fmt.Errorf("%w: %d lines occur in %d or more documents; a set holds at most %d (MaxLines, or a sixteenth of the memory budget at %d bytes a line): raise N",
				ErrTooManyLines, given, minDocs, limit, lineBytes)
		}
		return minDocs, fmt.Sprintf("given: %d lines occur in at least %d documents", given, minDocs), nil
	}
	get := func(b int) float64 {
		if b < len(hist) {
			return float64(hist[b])
		}
		return 0
	}
	atLeast := func(b int) int64 { // lines in bins b and above
		var s int64
		for _, k := range hist[min(b, len(hist)):] {
			s += k
		}
		return s
	}
	c0, c1 := get(0), get(1)
	rho := (c1 + 1) / (c0 + 1)
	for b := 2; b < len(hist); b++ {
		expect := c0 * math.Pow(rho, float64(b))
		if got := get(b); got >= MinAutoLines && got >= 2*expect {
			if atLeast(b) > int64(limit) {
				continue // too many lines for a set: a higher bin
			}
			return 1 << b, fmt.Sprintf("auto: %.0f lines occur in %d–%d documents where the tail of %.0f unique lines and %.0f in 2–3 documents predicts %.2g; the %d lines in at least %d documents are boilerplate",
				got, 1<<b, 1<<(b+1)-1, c0, c1, expect, atLeast(b), 1<<b), nil
		}
	}
	return 0, fmt.Sprintf("auto: no bin of document counts from 4 up holds %d lines and twice what the tail of %.0f unique lines and %.0f in 2–3 documents predicts; no line is boilerplate", MinAutoLines, c0, c1), nil
}
