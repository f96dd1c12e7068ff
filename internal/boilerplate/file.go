package boilerplate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/docid"
	"github.com/neardup/neardup/shingle"
)

// ErrBadFile reports a lines file that cannot be read, or that was counted
// under another spec; check with errors.Is.
var ErrBadFile = errors.New("boilerplate: bad lines file")

// FileName is the name of the lines file neardup dedup writes beside its
// outputs when it drops boilerplate.
const FileName = "boilerplate.tsv"

// fileMagic begins the header line of a lines file.
const fileMagic = "# neardup boilerplate v1"

// WriteLines writes the set of res, counted under spec, as a lines file:
// the header line
//
//	# neardup boilerplate v1 spec=<spec> min_docs=<N> lines=<count> documents=<count>
//
// (spec is the canonical form of spec without lines), then one line per
// line of the set, most documents first (ties by hash): its line hash in 16
// hex digits, its document count and its text (a docid TSV field; empty when
// no text was kept), tab-separated. ReadLines reads it back; only the hashes
// and the spec matter to it, the rest is for people.
func WriteLines(w io.Writer, spec shingle.Spec, res *Result) error {
	spec.Boilerplate = nil
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s spec=%s min_docs=%d lines=%d documents=%d\n", fileMagic, spec, res.MinDocs, res.Lines, res.Documents)
	var b []byte
	for _, t := range res.all {
		t = res.line(t)
		b = append(b[:0], t.Hash...)
		b = append(b, '\t')
		b = strconv.AppendInt(b, t.Docs, 10)
		b = append(b, '\t')
		b = docid.AppendFieldString(b, t.Text)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// ReadLines reads a lines file written by WriteLines (name is for errors)
// and returns a Result with its set, for a job that shingles under spec: the
// file must have been counted under spec's normalisation and hash (its
// canonical form without lines). Errors wrap ErrBadFile and name the file
// and line.
func ReadLines(r io.Reader, name string, spec shingle.Spec) (*Result, error) {
	spec.Boilerplate = nil
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrBadFile, name, line, fmt.Sprintf(format, args...))
	}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadFile, name, err)
		}
		return nil, bad(1, "empty; want the header %q", fileMagic)
	}
	head := sc.Text()
	if !strings.HasPrefix(head, fileMagic+" ") {
		return nil, bad(1, "header %q; want one beginning %q", trunc(head), fileMagic)
	}
	res := &Result{texts: map[uint64]string{}}
	var lines int64 = -1
	for _, kv := range strings.Fields(head[len(fileMagic):]) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "spec":
			if v != spec.String() {
				return nil, bad(1, "lines counted under the spec %s; this job shingles under %s", v, spec)
			}
		case "min_docs":
			res.MinDocs, err = strconv.Atoi(v)
		case "lines":
			lines, err = strconv.ParseInt(v, 10, 64)
		case "documents":
			res.Documents, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return nil, bad(1, "header field %q: %v", kv, err)
		}
	}
	var hashes []uint64
	n := 1
	for sc.Scan() {
		n++
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			return nil, bad(n, "%d fields; want hash, documents, text", len(f))
		}
		h, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || len(f[0]) != 16 {
			return nil, bad(n, "hash %q is not 16 hex digits", trunc(f[0]))
		}
		docs, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || docs < 0 {
			return nil, bad(n, "document count %q", trunc(f[1]))
		}
		text, err := docid.ParseField(f[2])
		if err != nil {
			return nil, bad(n, "text: %v", err)
		}
		if len(hashes) >= MaxLines {
			return nil, bad(n, "more than %d lines", MaxLines)
		}
		if _, dup := res.texts[h]; dup {
			return nil, bad(n, "hash %016x repeats", h)
		}
		hashes = append(hashes, h)
		res.texts[h] = text
		res.all = append(res.all, TopLine{Docs: docs, h: h})
		res.Dropped += docs
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s:%d: %w", ErrBadFile, name, n+1, err)
	}
	if lines >= 0 && lines != int64(len(hashes)) {
		return nil, bad(n, "%d lines; the header says %d (cut short?)", len(hashes), lines)
	}
	res.Set = shingle.NewBoilerplate(hashes)
	res.Lines = res.Set.Len()
	res.Reason = fmt.Sprintf("from %s: %d lines counted in at least %d of %d documents", name, res.Lines, res.MinDocs, res.Documents)
	sortLines(res.all)
	for _, t := range res.all[:min(DefaultTop, len(res.all))] {
		res.Top = append(res.Top, res.line(t))
	}
	return res, nil
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
