package simhash

import (
	"errors"
	"math"
	"testing"
)

// TestChooseBlocks: the choice is the B of least cost among all valid ones
// (the early stop loses nothing), more documents never ask for fewer
// blocks, and bad arguments are refused.
func TestChooseBlocks(t *testing.T) {
	for k := ExactMatch; k <= MaxMaxDistance; k++ {
		if k == 0 {
			continue
		}
		prev := 0
		for _, n := range []int64{0, 2, 1e4, 1e6, 1e8, 1e10} {
			for _, docBits := range []uint{20, 32} {
				got, err := ChooseBlocks(k, n, docBits, DefaultEntryCost)
				if err != nil {
					t.Fatal(err)
				}
				want, wantCost := 0, math.Inf(1)
				for b := 1; b <= MaxBlocks; b++ {
					l, err := NewLayout(Options{MaxDistance: k, Blocks: b})
					if err != nil {
						continue
					}
					if c := float64(l.Tables())*DefaultEntryCost + l.ModelComparisons(n, docBits); c < wantCost {
						want, wantCost = b, c
					}
				}
				if got != want {
					t.Errorf("ChooseBlocks(%d, %d, %d) = %d; want %d", k, n, docBits, got, want)
				}
				if docBits == 32 {
					if got < prev {
						t.Errorf("k %d: %d documents choose %d blocks, fewer than %d for fewer documents", k, n, got, prev)
					}
					prev = got
				}
			}
		}
	}
	// The figures the batch default rests on (k = 6, 32 document bits).
	for _, c := range []struct {
		n    int64
		want int
	}{{1e5, 7}, {1e6, 8}, {1e7, 9}} {
		if got, _ := ChooseBlocks(6, c.n, 32, DefaultEntryCost); got != c.want {
			t.Errorf("ChooseBlocks(6, %d) = %d; want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		k       int
		n       int64
		docBits uint
		cost    float64
		want    error
	}{
		{9, 10, 32, 64, ErrInvalidOptions},
		{-2, 10, 32, 64, ErrInvalidOptions},
		{3, 10, 0, 64, ErrInvalidArgument},
		{3, 10, 33, 64, ErrInvalidArgument},
		{3, 10, 32, 0, ErrInvalidArgument},
		{3, 10, 32, math.Inf(1), ErrInvalidArgument},
		{3, -1, 32, 64, ErrInvalidArgument},
	} {
		if _, err := ChooseBlocks(c.k, c.n, c.docBits, c.cost); !errors.Is(err, c.want) {
			t.Errorf("ChooseBlocks(%d, %d, %d, %v): %v; want %v", c.k, c.n, c.docBits, c.cost, err, c.want)
		}
	}
}
