package lsh

import (
	"fmt"
	"math"
)

// Optimal returns the banding that minimises the weighted error
//
//	fpWeight·FalsePositiveArea(threshold) + fnWeight·FalseNegativeArea(threshold)
//
// over all Params{Bands: b, Rows: r} with b·r ≤ k (Probe 0): the rule of
// datasketch's MinHashLSH (_optimal_param), and with its tie-break: b is
// tried from 1 up and, for each b, r from 1 up, and a banding replaces the
// best so far only if its error is strictly smaller, so among equal errors
// the one with the fewest bands, then the fewest rows, wins. For
// threshold 0.8, k = 128 and weights 0.5/0.5 it returns 9 bands of 13 rows,
// as datasketch does.
//
// threshold must lie in (0, 1), k in 1..MaxSlots, and the weights must be
// finite, non-negative and not both zero; otherwise the error wraps
// ErrInvalidArgument. The result is deterministic. The search evaluates
// about k·ln k bandings with two integrals each: a few milliseconds for
// k = 128.
func Optimal(threshold float64, k int, fpWeight, fnWeight float64) (Params, error) {
	if err := checkThresholdK(threshold, k); err != nil {
		return Params{}, err
	}
	for _, w := range [2]float64{fpWeight, fnWeight} {
		if !(w >= 0) || math.IsInf(w, 0) {
			return Params{}, fmt.Errorf("%w: weight %v; weights must be finite and non-negative", ErrInvalidArgument, w)
		}
	}
	if fpWeight == 0 && fnWeight == 0 {
		return Params{}, fmt.Errorf("%w: both weights are zero; at least one must be positive", ErrInvalidArgument)
	}
	best, bestErr := Params{}, math.Inf(1)
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			p := Params{Bands: b, Rows: r}
			e := 0.0
			if fpWeight != 0 {
				e += fpWeight * p.FalsePositiveArea(threshold)
			}
			if fnWeight != 0 {
				e += fnWeight * p.FalseNegativeArea(threshold)
			}
			if e < bestErr {
				best, bestErr = p, e
			}
		}
	}
	return best, nil
}

// ForRecall returns the most precise banding that still catches pairs of
// similarity threshold with probability at least recall: among all
// Params{Bands: b, Rows: r} with b·r ≤ k (Probe 0) and
// Probability(threshold) ≥ recall, the one with the smallest
// FalsePositiveArea(threshold). Since P is increasing, pairs more similar
// than threshold are caught with probability above recall.
//
// Ties in the false-positive area (exact float64 equality) go to the banding
// using fewer slots b·r, then to fewer bands. For a given r the area grows
// strictly with b, so only the smallest b reaching the recall is a contender.
//
// threshold must lie in (0, 1), k in 1..MaxSlots and recall in (0, 1];
// otherwise the error wraps ErrInvalidArgument. If no banding reaches the
// recall the error wraps ErrNoParams. The result is deterministic.
func ForRecall(threshold float64, k int, recall float64) (Params, error) {
	if err := checkThresholdK(threshold, k); err != nil {
		return Params{}, err
	}
	if !(recall > 0 && recall <= 1) {
		return Params{}, fmt.Errorf("%w: recall %v; must be in (0, 1]", ErrInvalidArgument, recall)
	}
	best, bestFP := Params{}, math.Inf(1)
	for r := 1; r <= k; r++ {
		for b := 1; b*r <= k; b++ {
			p := Params{Bands: b, Rows: r}
			if p.Probability(threshold) < recall {
				continue
			}
			fp := p.FalsePositiveArea(threshold)
			if fp < bestFP || fp == bestFP && (p.Slots() < best.Slots() || p.Slots() == best.Slots() && b < best.Bands) {
				best, bestFP = p, fp
			}
			break // larger b only adds false positives
		}
	}
	if best.Bands == 0 {
		return Params{}, fmt.Errorf("%w: no b·r ≤ %d reaches recall %v at threshold %v", ErrNoParams, k, recall, threshold)
	}
	return best, nil
}

func checkThresholdK(threshold float64, k int) error {
	if !(threshold > 0 && threshold < 1) {
		return fmt.Errorf("%w: threshold %v; must be in (0, 1)", ErrInvalidArgument, threshold)
	}
	if k < 1 || k > MaxSlots {
		return fmt.Errorf("%w: k = %d; must be in 1..%d", ErrInvalidArgument, k, MaxSlots)
	}
	return nil
}
