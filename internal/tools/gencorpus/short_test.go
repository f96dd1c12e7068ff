package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/shingle"
)

// TestShort checks the -short corpus's shape: the same bytes for the same
// seed, the median length, copies only of originals in groups of at most
// -group documents, and a truth file whose every line is a pair of one
// group with its exact similarity.
func TestShort(t *testing.T) {
	words, err := loadWords("../../../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	o := shortOptions{docs: 20000, dup: 0.25, maxEdit: 0.1, group: 3, fragments: 5, seed: 5, truthSpec: "word:5"}
	var corpus, truth bytes.Buffer
	if err := generateShort(&corpus, &truth, words, o); err != nil {
		t.Fatal(err)
	}
	var again, truth2 bytes.Buffer
	if err := generateShort(&again, &truth2, words, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(corpus.Bytes(), again.Bytes()) || !bytes.Equal(truth.Bytes(), truth2.Bytes()) {
		t.Fatal("two runs with the same seed differ")
	}

	texts := map[string]string{}
	var lens []int
	sc := bufio.NewScanner(&corpus)
	for sc.Scan() {
		var rec struct{ ID, Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		texts[rec.ID] = rec.Text
		lens = append(lens, len(strings.Fields(rec.Text)))
	}
	if len(texts) != o.docs {
		t.Fatalf("%d documents; want %d", len(texts), o.docs)
	}
	slices.Sort(lens)
	// Originals: 3–5 fragments of 4–14 words, 36 words on average.
	if med := lens[len(lens)/2]; med < 28 || med > 40 {
		t.Errorf("median %d words; want about 33", med)
	}

	pf, err := eval.ReadPairFile(bytes.NewReader(truth.Bytes()), "truth")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shingle.Parse("word:5")
	if err != nil {
		t.Fatal(err)
	}
	sh := shingle.MustNew(spec)
	// Union-find over the pairs: every component is one group, a clique.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		return x
	}
	for _, p := range pf.Pairs {
		a := eval.Normalize(sh.AppendFeatures(nil, []byte(texts[p.A])))
		b := eval.Normalize(sh.AppendFeatures(nil, []byte(texts[p.B])))
		if j := eval.Jaccard(a, b); j != p.J {
			t.Fatalf("%s %s: truth says %v; exact Jaccard is %v", p.A, p.B, p.J, j)
		}
		ra, rb := find(p.A), find(p.B)
		if ra != rb {
			parent[ra] = rb
		}
	}
	size := map[string]int{}
	for id := range texts {
		size[find(id)]++
	}
	copies, pairs := 0, 0
	for _, n := range size {
		if n > o.group {
			t.Fatalf("a group of %d documents; want at most %d", n, o.group)
		}
		copies += n - 1
		pairs += n * (n - 1) / 2
	}
	if pairs != len(pf.Pairs) {
		t.Errorf("%d truth pairs; the groups make %d (not cliques)", len(pf.Pairs), pairs)
	}
	// Copies are a binomial count of o.docs trials at about o.dup.
	if frac := float64(copies) / float64(o.docs); frac < o.dup-0.02 || frac > o.dup+0.02 {
		t.Errorf("copies are %.3f of the documents; want %v", frac, o.dup)
	}
}

// TestShortFragments checks -fragments: originals of 3 to N fragments of
// 4–14 words have between 12 and 14·N words and on average 9·(3+N)/2, and
// fewer than 3 is refused.
func TestShortFragments(t *testing.T) {
	words, err := loadWords("../../../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, most := range []int{5, 7} {
		// No copies: every document is an original.
		o := shortOptions{docs: 5000, dup: 0, maxEdit: 0.1, group: 3, fragments: most, seed: 9, truthSpec: "word:5"}
		var corpus bytes.Buffer
		if err := generateShort(&corpus, nil, words, o); err != nil {
			t.Fatal(err)
		}
		sum, longest := 0, 0
		sc := bufio.NewScanner(&corpus)
		for sc.Scan() {
			var rec struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			n := len(strings.Fields(rec.Text))
			if n < 12 || n > 14*most {
				t.Fatalf("-fragments %d: a document of %d words; want 12 to %d", most, n, 14*most)
			}
			sum += n
			longest = max(longest, n)
		}
		// Words a document: E = E[fragments]·E[words a fragment] = (3+most)/2 · 9;
		// Var = E[f]·Var(w) + Var(f)·E[w]² with Var(w) = 10, Var(f) = ((most−2)²−1)/12.
		// The bound is 7 standard deviations of the mean of o.docs documents.
		ef := float64(3+most) / 2
		vf := (float64((most-2)*(most-2)) - 1) / 12
		mean, sd := ef*9, math.Sqrt((ef*10+vf*81)/float64(o.docs))
		if got := float64(sum) / float64(o.docs); math.Abs(got-mean) > 7*sd {
			t.Errorf("-fragments %d: %.2f words a document on average; want %.1f ± %.2f", most, got, mean, 7*sd)
		}
		if most == 7 && longest <= 14*5 {
			t.Errorf("-fragments 7: the longest document has %d words, no more than 5 fragments can make", longest)
		}
	}
	if err := runShort("../../../testdata/articles_1000.jsonl", "-", "", shortOptions{docs: 10, group: 3, fragments: 2, truthSpec: "word:5"}); err == nil || !strings.Contains(err.Error(), "-fragments 2") {
		t.Errorf("-fragments 2: error %v; want one naming it", err)
	}
}
