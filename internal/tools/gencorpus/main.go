// Command gencorpus writes a synthetic but realistic JSONL corpus for
// benchmarks and scale tests: documents are made of real English sentences
// (from the bundled news sample) shuffled into new articles, and a fraction of
// them are planted near duplicates of earlier ones with word-level edits.
// The output depends only on the flags. A file given with -o appears only
// when it is complete (it is written under a temporary name and renamed).
//
//	go run ./internal/tools/gencorpus -size 1GB -o /tmp/big.jsonl
//	go run ./internal/tools/gencorpus -docs 10000 -dup 0.3 -o corpus.jsonl
//
// With -short it writes instead millions of short web-like documents (median
// about 33 words), -dup of them edited copies of earlier originals in groups
// of at most -group documents, and with -truth the exact Jaccard similarity
// of every planted pair (issue 12's shape):
//
//	go run ./internal/tools/gencorpus -short -docs 5000000 -dup 0.25 -o /tmp/short.jsonl -truth /tmp/short.truth
//
// -fragments makes the originals longer (3 to N fragments instead of 3 to 5),
// for a corpus of a given size with fewer documents.
//
// With -goroot it writes instead the real corpus the dedup benchmarks use:
// every .go file under GOROOT/src as {"id": path, "text": source}, in
// lexical path order (the same bytes as dedup's GoSourceCorpus).
//
//	go run ./internal/tools/gencorpus -goroot -o /tmp/gosrc.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/bytesize"
)

func main() {
	src := flag.String("source", "testdata/articles_1000.jsonl", "JSONL whose texts supply the sentences")
	out := flag.String("o", "-", "output file, - for standard output")
	docs := flag.Int("docs", 0, "number of documents (or use -size)")
	size := flag.String("size", "", "approximate output size, e.g. 1GB (instead of -docs)")
	dup := flag.Float64("dup", 0.2, "fraction of documents that are near duplicates of an earlier one")
	maxEdit := flag.Float64("max-edit", 0.1, "largest fraction of words edited in a near duplicate")
	sentences := flag.Int("sentences", 12, "mean sentences per document")
	seed := flag.Uint64("seed", 1, "random seed")
	short := flag.Bool("short", false, "short web-like documents (3–5 fragments of 4–14 words, median about 33 words) with copies of originals only, in small groups; needs -docs")
	group := flag.Int("group", 3, "with -short: largest planted group, an original and its copies")
	fragments := flag.Int("fragments", 5, "with -short: most fragments an original has, at least 3 (5: median about 33 words, 255 bytes a record; 7: about 45 words, 310 bytes)")
	truth := flag.String("truth", "", "with -short: also write every planted pair and its exact Jaccard similarity to this file (for neardup eval score)")
	truthSpec := flag.String("truth-spec", "word:5", "with -short: the shingle spec of the truth's similarities")
	goroot := flag.Bool("goroot", false, "write every .go file under GOROOT/src instead (the benchmarks' Go source corpus)")
	flag.Parse()
	if *goroot {
		if err := writeGoroot(*out); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		return
	}
	if *short {
		o := shortOptions{docs: *docs, dup: *dup, maxEdit: *maxEdit, group: *group, fragments: *fragments, seed: *seed, truthSpec: *truthSpec}
		if err := runShort(*src, *out, *truth, o); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*src, *out, *docs, *size, *dup, *maxEdit, *sentences, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(src, out string, docs int, size string, dup, maxEdit float64, meanSent int, seed uint64) error {
	pool, err := loadSentences(src)
	if err != nil {
		return err
	}
	var limit int64
	if size != "" {
		if limit, err = bytesize.Parse(size); err != nil {
			return err
		}
	}
	if docs <= 0 && limit <= 0 {
		return fmt.Errorf("give -docs or -size")
	}
	return writeOutput(out, func(w io.Writer) error {
		return generate(w, pool, docs, limit, dup, maxEdit, meanSent, seed)
	})
}

// writeOutput runs fill on out ("-": standard output) through a buffer. A
// file is written under a temporary name in its directory and renamed only
// when fill and the writes succeed, so a failed or interrupted run leaves no
// partial corpus that looks complete.
func writeOutput(out string, fill func(w io.Writer) error) error {
	if out == "-" {
		bw := bufio.NewWriterSize(os.Stdout, 1<<20)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// generate writes the synthetic corpus to w.
func generate(w io.Writer, pool []string, docs int, limit int64, dup, maxEdit float64, meanSent int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	// Keep a window of recent originals to copy from, so memory stays flat.
	const window = 4096
	recent := make([]string, 0, window)
	var written int64
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := 0; (docs > 0 && i < docs) || (docs <= 0 && written < limit); i++ {
		var text string
		if len(recent) > 0 && r.Float64() < dup {
			text = mutate(r, recent[r.IntN(len(recent))], r.Float64()*maxEdit)
		} else {
			n := 1 + r.IntN(2*meanSent)
			parts := make([]string, n)
			for j := range parts {
				parts[j] = pool[r.IntN(len(pool))]
			}
			text = strings.Join(parts, " ")
			if len(recent) < window {
				recent = append(recent, text)
			} else {
				recent[r.IntN(window)] = text
			}
		}
		rec := struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}{fmt.Sprintf("g%09d", i), text}
		if err := enc.Encode(rec); err != nil {
			return err
		}
		written += int64(len(text) + len(rec.ID) + 22)
	}
	return nil
}

func loadSentences(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pool []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, err
		}
		for _, s := range strings.SplitAfter(rec.Text, ". ") {
			if s = strings.TrimSpace(s); len(s) > 20 {
				pool = append(pool, s)
			}
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("%s: no sentences", path)
	}
	return pool, sc.Err()
}

// mutate edits about rate of the words: replace, delete or insert.
func mutate(r *rand.Rand, text string, rate float64) string {
	words := strings.Fields(text)
	out := make([]string, 0, len(words)+8)
	for _, w := range words {
		if r.Float64() >= rate {
			out = append(out, w)
			continue
		}
		switch r.IntN(3) {
		case 0:
			out = append(out, fmt.Sprintf("edit%d", r.IntN(1e6)))
		case 1:
		default:
			out = append(out, w, fmt.Sprintf("ins%d", r.IntN(1e6)))
		}
	}
	return strings.Join(out, " ")
}

// writeGoroot writes every .go file under GOROOT/src as a JSONL document.
func writeGoroot(out string) error {
	return writeOutput(out, func(w io.Writer) error {
		return goroot(w, filepath.Join(runtime.GOROOT(), "src"))
	})
}

// goroot writes every .go file under root as a JSONL document, its id the
// path relative to root.
func goroot(w io.Writer, root string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return enc.Encode(struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}{filepath.ToSlash(rel), string(data)})
	})
}
