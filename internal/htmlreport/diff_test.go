package htmlreport

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lcs is the length of a longest common subsequence, by dynamic programming.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TestDiffTokens: on random word sequences, the edit script is valid (it
// rebuilds both sides) and shortest (its equal steps are an LCS).
func TestDiffTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d", "e"}
	for iter := range 2000 {
		a := make([]string, rng.IntN(12))
		b := make([]string, rng.IntN(12))
		for i := range a {
			a[i] = words[rng.IntN(len(words))]
		}
		for i := range b {
			b[i] = words[rng.IntN(len(words))]
		}
		ops, ok := diffTokens(a, b, 100)
		if !ok {
			t.Fatal("gave up")
		}
		var ra, rb []string
		eq := 0
		for _, o := range ops {
			switch o.kind {
			case opEqual:
				if a[o.i] != b[o.j] {
					t.Fatalf("%d: equal step on %q, %q", iter, a[o.i], b[o.j])
				}
				ra, rb = append(ra, a[o.i]), append(rb, b[o.j])
				eq++
			case opDelete:
				ra = append(ra, a[o.i])
			case opInsert:
				rb = append(rb, b[o.j])
			}
		}
		if strings.Join(ra, " ") != strings.Join(a, " ") || strings.Join(rb, " ") != strings.Join(b, " ") {
			t.Fatalf("%d: script rebuilds %q / %q; want %q / %q", iter, ra, rb, a, b)
		}
		if want := lcs(a, b); eq != want {
			t.Fatalf("%d: %d equal steps; want the LCS length %d (a=%q b=%q)", iter, eq, want, a, b)
		}
	}
}

func TestCompare(t *testing.T) {
	a := "the quick brown fox jumps over the lazy dog and then sleeps all day long in the sun"
	b := "the quick red fox jumps over the lazy dog and then sleeps all day long in the shade"
	c := Compare(a, b, 3, 1000)
	var da, db []string
	for _, s := range c.A {
		if s.Kind == "diff" {
			da = append(da, s.Text)
		}
	}
	for _, s := range c.B {
		if s.Kind == "diff" {
			db = append(db, s.Text)
		}
	}
	if strings.Join(da, "|") != "brown|sun" || strings.Join(db, "|") != "red|shade" || c.Changed != 4 {
		t.Errorf("diffs %q / %q (changed %d); want brown|sun / red|shade (4)", da, db, c.Changed)
	}
	gap := false
	for _, s := range c.A {
		gap = gap || s.Kind == "gap" && strings.Contains(s.Text, "shared words")
	}
	if !gap {
		t.Errorf("no gap in a long shared run: %+v", c.A)
	}
	if c := Compare(strings.Repeat("x ", 50), strings.Repeat("x ", 60), 3, 20); !c.Truncated {
		t.Error("not truncated at maxWords")
	}
}
