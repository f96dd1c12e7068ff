//go:build linux

package main

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), tc.xs...)
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v; want %v", in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.xs[i] {
				t.Fatalf("Median reordered its argument: %v, was %v", tc.xs, in)
			}
		}
	}
}

// TestSummarize: three rounds of one build; the ratios are each round's
// dedup over that round's sign (not the medians'), the budget differences
// round by round, and a round with a missing sign is left out of both.
func TestSummarize(t *testing.T) {
	var runs []Run
	add := func(round int, kind string, wall, user, sys float64, stages ...Stage) {
		runs = append(runs, Run{Round: round, Kind: kind, Wall: wall, User: user, Sys: sys, RSS: 100 << 10, Stages: stages})
	}
	st := func(sign, cand float64) []Stage { return []Stage{{"sign", sign}, {"candidates", cand}} }
	add(1, "sign", 6, 11, 1)
	add(1, "1GiB", 9, 17, 2, st(7, 0.5)...)
	add(1, "16GiB", 8.5, 17, 2, st(6.5, 0.4)...)
	add(2, "sign", 5, 9, 1)
	add(2, "1GiB", 9, 17, 2, st(7.2, 0.7)...)
	add(2, "16GiB", 9.5, 17, 2, st(7.4, 0.6)...)
	add(3, "1GiB", 10, 17, 3, st(8, 0.6)...) // its sign is missing
	add(3, "16GiB", 10, 17, 3, st(8, 0.5)...)
	got := Summarize(runs, []string{"/x/nd"}, []string{"1GiB", "16GiB"}, 1.6)
	for _, want := range []string{
		"nd sign: n=2 wall median 5.50 mean 5.50 [5.00-6.00] s | CPU mean 11.00 s | sys 8.3-10.0 % | RSS 100-100 MiB\n",
		"nd 1GiB: n=3 wall median 9.00 mean 9.33 [9.00-10.00] s",
		"stages sign 7.20 / candidates 0.60\n",
		// medians 9 / 5.5; rounds 9/6 = 1.50 and 9/5 = 1.80 (round 3 has no sign)
		"nd: dedup 1GiB / sign 1.636 by medians; by round 1.50, 1.80 (median 1.650; 1 of 2 within 1.60)\n",
		"nd: dedup 16GiB minus 1GiB by round -0.50, +0.50, +0.00 s (slower in 1 of 3)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

// TestRoundOrder: each build runs first in as many rounds as the others
// (of an even number), and every round runs every build once.
func TestRoundOrder(t *testing.T) {
	for _, builds := range []int{1, 2, 3} {
		first := make([]int, builds)
		for r := 1; r <= 4; r++ {
			o := roundOrder(r, builds)
			seen := make([]bool, builds)
			for _, b := range o {
				if b < 0 || b >= builds || seen[b] {
					t.Fatalf("%d builds, round %d: order %v", builds, r, o)
				}
				seen[b] = true
			}
			first[o[0]]++
		}
		if builds == 2 && (first[0] != 2 || first[1] != 2) {
			t.Errorf("2 builds, 4 rounds: first %v times each; want 2 and 2", first)
		}
	}
}
