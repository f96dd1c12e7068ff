package eval

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/docid"
)

// ErrPairFile reports a malformed line of a pair file; check with errors.Is.
// The error names the file, the line and what was wrong.
var ErrPairFile = errors.New("eval: malformed pair file")

// LabeledPair is one line of a pair file: two document ids, ordered so that
// A < B bytewise, and their similarity when the file gives one. It is a plain
// value.
type LabeledPair struct {
	// A and B are the documents' ids, A < B (bytewise).
	A, B string
	// J is the pair's similarity, or NaN when the line gives none (the
	// articles .truth format).
	J float64
}

// HasJ reports whether the pair carries a similarity.
func (p LabeledPair) HasJ() bool { return !math.IsNaN(p.J) }

// PairFile is a parsed pair file: a truth file written by `neardup eval
// truth`, a pairs.tsv written by `neardup dedup`, or a plain list of id pairs
// such as the articles set's .truth files.
//
// # Format
//
// One pair a line: two ids and, optionally, more fields. Fields are separated
// by tabs if the line holds a tab, else by runs of spaces. Ids are TSV id
// fields (package internal/docid, which pairs.tsv and truth files are
// written with): an id that starts with a double quote is a Go-quoted string
// (ids holding tabs, line breaks or quotes, or beginning with '#', are
// written so), any other is the id as it stands; ids are returned in their
// canonical form, invalid UTF-8 bytes replaced by U+FFFD as clusters.jsonl
// has them, so that ids read from every output compare equal. The pair's
// similarity is the last of the
// further fields that is a number; "-" stands for "not computed", so in a
// pairs.tsv line (idA, idB, estimate, exact) it is the exact Jaccard when
// present, else the estimate. Blank lines are skipped. Lines starting with
// '#' are comments; a comment may carry key=value fields, of which
// threshold=, documents= and spec= are read (WriteTruthHeader writes them).
//
// Pairs of a document with itself are dropped, and a pair listed twice is
// kept once (its first line).
type PairFile struct {
	// Threshold is the least similarity of the file's pairs, from its
	// header (threshold=), or 0 when the file does not say: then the list
	// may be any set of pairs.
	Threshold float64
	// Documents is the number of documents of the corpus the pairs come
	// from, from the header (documents=), or 0 when the file does not say.
	Documents int64
	// Spec is the shingle spec of the features the similarities are over,
	// from the header (spec=), or "".
	Spec string
	// Pairs are the file's pairs, sorted by (A, B), without duplicates.
	Pairs []LabeledPair
}

// ReadPairFile parses a pair file (see PairFile) from r; name is used in
// error messages only. Errors wrap ErrPairFile or the reader's error.
func ReadPairFile(r io.Reader, name string) (*PairFile, error) {
	pf := &PairFile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	line := 0
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrPairFile, name, line, fmt.Sprintf(why, args...))
	}
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		if s[0] == '#' {
			if err := pf.readHeader(s[1:]); err != nil {
				return nil, bad("%v", err)
			}
			continue
		}
		var f []string
		if strings.Contains(s, "\t") {
			f = strings.Split(s, "\t")
		} else {
			f = strings.Fields(s)
		}
		if len(f) < 2 {
			return nil, bad("%d field(s); want at least two ids", len(f))
		}
		p := LabeledPair{J: math.NaN()}
		var err error
		if p.A, err = docid.ParseField(f[0]); err != nil {
			return nil, bad("first id: %v", err)
		}
		if p.B, err = docid.ParseField(f[1]); err != nil {
			return nil, bad("second id: %v", err)
		}
		for k := len(f) - 1; k >= 2; k-- {
			v := strings.TrimSpace(f[k])
			if v == "-" || v == "" {
				continue
			}
			j, err := strconv.ParseFloat(v, 64)
			if err != nil || !(j >= 0 && j <= 1) {
				return nil, bad("field %d is %q; want a similarity in [0, 1] or -", k+1, v)
			}
			if !p.HasJ() {
				p.J = j
			}
		}
		if p.A == p.B {
			continue
		}
		if p.A > p.B {
			p.A, p.B = p.B, p.A
		}
		pf.Pairs = append(pf.Pairs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read %s: %w", name, err)
	}
	pf.Pairs = sortUniquePairs(pf.Pairs)
	return pf, nil
}

// readHeader reads the key=value fields of a comment line.
func (pf *PairFile) readHeader(s string) error {
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "threshold":
			t, err := strconv.ParseFloat(v, 64)
			if err != nil || !(t >= 0 && t <= 1) {
				return fmt.Errorf("header threshold=%s; want a number in [0, 1]", v)
			}
			pf.Threshold = t
		case "documents":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("header documents=%s; want a count", v)
			}
			pf.Documents = n
		case "spec":
			pf.Spec = v
		}
	}
	return nil
}

// sortUniquePairs sorts ps by (A, B) and keeps the first of equal pairs.
func sortUniquePairs(ps []LabeledPair) []LabeledPair {
	slices.SortStableFunc(ps, compareIDs)
	return slices.CompactFunc(ps, func(x, y LabeledPair) bool { return x.A == y.A && x.B == y.B })
}

func compareIDs(x, y LabeledPair) int {
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}

// TruthHeader is what WriteTruthHeader records about a truth file.
type TruthHeader struct {
	// Threshold is the join's threshold: the file lists every pair at or
	// above it.
	Threshold float64
	// Documents is the number of documents joined.
	Documents int64
	// Spec is the shingle spec's canonical form (no spaces).
	Spec string
}

// WriteTruthHeader writes the comment line that begins a truth file:
//
//	# neardup eval truth threshold=0.5 documents=7711 spec=v1/word:5/...
//
// ReadPairFile reads its fields back.
func WriteTruthHeader(w io.Writer, h TruthHeader) error {
	_, err := fmt.Fprintf(w, "# neardup eval truth threshold=%s documents=%d spec=%s\n",
		strconv.FormatFloat(h.Threshold, 'g', -1, 64), h.Documents, h.Spec)
	return err
}

// AppendPairLine appends one truth-file line, "idA<TAB>idB<TAB>J\n", to dst.
// Ids are TSV id fields as pairs.tsv writes them (package internal/docid:
// Go-quoted when they hold a tab, a line break or a double quote, or begin
// with '#'); J is written with the fewest digits that read back to the same
// float64, so that filtering a truth file at a threshold is exact.
func AppendPairLine(dst []byte, a, b string, j float64) []byte {
	dst = docid.AppendFieldString(dst, a)
	dst = append(dst, '\t')
	dst = docid.AppendFieldString(dst, b)
	dst = append(dst, '\t')
	dst = strconv.AppendFloat(dst, j, 'f', -1, 64)
	return append(dst, '\n')
}
