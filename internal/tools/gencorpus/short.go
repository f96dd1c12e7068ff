package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/shingle"
)

// shortOptions shape the -short corpus: short web-like documents, a fraction
// of them edited copies of earlier originals in small groups, with the exact
// similarity of every planted pair written to a truth file.
type shortOptions struct {
	docs      int
	dup       float64 // fraction of documents that are copies
	maxEdit   float64 // largest fraction of words edited in a copy
	group     int     // largest group: an original and group−1 copies
	fragments int     // most fragments an original has (at least 3; 5 by default)
	seed      uint64
	truthSpec string // shingle spec of the truth's similarities
}

// shortGroup is an original and its copies so far.
type shortGroup struct {
	ids   []int
	texts []string
}

// generateShort writes o.docs short documents to w and, if truth is not
// nil, every pair of documents of one planted group (an original and its
// copies, and the copies with each other) with their exact Jaccard
// similarity over o.truthSpec's features, one "idA<TAB>idB<TAB>J" line each.
//
// Originals are 3 to o.fragments (5 by default) fragments of 4–14
// consecutive words from random places of the source's words (median about
// 33 words at 5), so two originals share
// whole fragments at most, never most of their text: the planted groups are
// the only near duplicates, and they stay small (no chains, no hubs), since
// copies are made of originals only and a group stops taking copies once it
// holds o.group documents.
func generateShort(w, truth io.Writer, words []string, o shortOptions) error {
	spec, err := shingle.Parse(o.truthSpec)
	if err != nil {
		return err
	}
	sh, err := shingle.New(spec)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(o.seed, 0x9e3779b97f4a7c15))
	var tw *bufio.Writer
	if truth != nil {
		tw = bufio.NewWriterSize(truth, 1<<20)
		// No threshold: the file lists the planted pairs, whatever their
		// similarity, not every pair above one.
		if _, err := fmt.Fprintf(tw, "# gencorpus -short planted pairs documents=%d spec=%s\n", o.docs, spec.String()); err != nil {
			return err
		}
	}
	var line []byte
	var fa, fb []uint64
	feats := make([][]uint64, 0, o.group)
	flush := func(g *shortGroup) error {
		if tw == nil || len(g.ids) < 2 {
			return nil
		}
		feats = feats[:0]
		for _, t := range g.texts {
			feats = append(feats, eval.Normalize(sh.AppendFeatures(nil, []byte(t))))
		}
		for i := range g.ids {
			for j := i + 1; j < len(g.ids); j++ {
				fa, fb = feats[i], feats[j]
				line = eval.AppendPairLine(line[:0], shortID(g.ids[i]), shortID(g.ids[j]), eval.Jaccard(fa, fb))
				if _, err := tw.Write(line); err != nil {
					return err
				}
			}
		}
		return nil
	}

	// A window of recent originals still taking copies keeps memory flat.
	const window = 4096
	open := make([]*shortGroup, 0, window)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := 0; i < o.docs; i++ {
		var text string
		if len(open) > 0 && r.Float64() < o.dup {
			k := r.IntN(len(open))
			g := open[k]
			text = mutate(r, g.texts[0], r.Float64()*o.maxEdit)
			g.ids, g.texts = append(g.ids, i), append(g.texts, text)
			if len(g.ids) >= o.group {
				if err := flush(g); err != nil {
					return err
				}
				open[k] = open[len(open)-1]
				open = open[:len(open)-1]
			}
		} else {
			text = shortText(r, words, o.fragments)
			g := &shortGroup{ids: []int{i}, texts: []string{text}}
			if len(open) < window {
				open = append(open, g)
			} else {
				k := r.IntN(window)
				if err := flush(open[k]); err != nil {
					return err
				}
				open[k] = g
			}
		}
		rec := struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}{shortID(i), text}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	for _, g := range open {
		if err := flush(g); err != nil {
			return err
		}
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

func shortID(i int) string { return fmt.Sprintf("s%09d", i) }

// shortText joins 3 to most (at least 3) fragments of 4–14 consecutive
// words from random places of words.
func shortText(r *rand.Rand, words []string, most int) string {
	var b strings.Builder
	n := 3 + r.IntN(most-2)
	for f := 0; f < n; f++ {
		l := 4 + r.IntN(11)
		at := r.IntN(len(words) - l)
		for _, w := range words[at : at+l] {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// loadWords returns the words of the texts of the JSONL file at path, in order.
func loadWords(path string) ([]string, error) {
	pool, err := loadSentences(path)
	if err != nil {
		return nil, err
	}
	var words []string
	for _, s := range pool {
		words = append(words, strings.Fields(s)...)
	}
	if len(words) < 100 {
		return nil, fmt.Errorf("%s: %d words; want at least 100", path, len(words))
	}
	return words, nil
}

// runShort writes the -short corpus to out and its truth to truthOut (none
// if empty), each under a temporary name renamed when both are complete.
func runShort(src, out, truthOut string, o shortOptions) error {
	if o.docs <= 0 {
		return fmt.Errorf("-short needs -docs")
	}
	if o.group < 2 {
		return fmt.Errorf("-group %d; want at least 2", o.group)
	}
	if o.fragments < 3 {
		return fmt.Errorf("-fragments %d; want at least 3", o.fragments)
	}
	words, err := loadWords(src)
	if err != nil {
		return err
	}
	if truthOut == "" {
		return writeOutput(out, func(w io.Writer) error { return generateShort(w, nil, words, o) })
	}
	tf, err := atomicfile.Create(truthOut)
	if err != nil {
		return err
	}
	defer tf.Abort()
	if err := writeOutput(out, func(w io.Writer) error { return generateShort(w, tf, words, o) }); err != nil {
		return err
	}
	return tf.Commit()
}
