package eval

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func lp(a, b string, j float64) LabeledPair { return LabeledPair{A: a, B: b, J: j} }

// TestScorePairsHand checks ScorePairs against counts worked out by hand.
func TestScorePairsHand(t *testing.T) {
	nan := math.NaN()
	truth := SortPairs([]LabeledPair{
		lp("a", "b", 0.9), lp("c", "a", 0.85), lp("d", "e", 0.95),
		lp("f", "g", 0.7), // below the threshold: does not count
		lp("h", "i", nan), // no similarity: counts, in no band
	})
	pred := SortPairs([]LabeledPair{lp("b", "a", nan), lp("d", "e", 0.96), lp("x", "y", 0.81), lp("h", "i", nan), lp("a", "b", nan)})
	s := ScorePairs(truth, pred, ScoreOptions{Threshold: 0.8, Curve: func(j float64) float64 { return j }})
	// Truth: ab, ac, de, hi. Predicted: ab, de, hi, xy.
	want := PairScore{Threshold: 0.8, Truth: 4, Predicted: 4, TruePositives: 3, FalsePositives: 1, FalseNegatives: 1,
		Precision: 0.75, Recall: 0.75, F1: 0.75}
	if s.Truth != want.Truth || s.Predicted != want.Predicted || s.TruePositives != want.TruePositives ||
		s.FalsePositives != want.FalsePositives || s.FalseNegatives != want.FalseNegatives ||
		s.Precision != want.Precision || s.Recall != want.Recall || s.F1 != want.F1 {
		t.Errorf("got %+v; want %+v", s, want)
	}
	wantBands := []struct {
		lo           float64
		truth, found int64
		pred         float64
	}{{0.8, 0, 0, -1}, {0.85, 1, 0, 0.85}, {0.9, 1, 1, 0.9}, {0.95, 1, 1, 0.95}}
	if len(s.Bands) != len(wantBands) {
		t.Fatalf("%d bands; want %d", len(s.Bands), len(wantBands))
	}
	for i, w := range wantBands {
		b := s.Bands[i]
		if math.Abs(b.Lo-w.lo) > 1e-12 || b.Truth != w.truth || b.Found != w.found {
			t.Errorf("band %d: got %+v; want lo %v truth %d found %d", i, b, w.lo, w.truth, w.found)
		}
		if w.pred < 0 && b.Predicted != nil || w.pred >= 0 && (b.Predicted == nil || math.Abs(*b.Predicted-w.pred) > 1e-12) {
			t.Errorf("band %d: predicted %v; want %v", i, b.Predicted, w.pred)
		}
	}
	if s.Bands[2].MeanJ != 0.9 || s.Bands[0].MeanJ != 0 {
		t.Errorf("band mean similarities %v, %v; want 0.9 and 0 (empty)", s.Bands[2].MeanJ, s.Bands[0].MeanJ)
	}
	if s.Bands[3].Hi != 1 {
		t.Errorf("last band ends at %v; want 1", s.Bands[3].Hi)
	}
	if p := s.PredictedRecall; p == nil || math.Abs(*p-0.9) > 1e-12 {
		t.Errorf("predicted recall %v; want (0.85+0.9+0.95)/3 = 0.9", p)
	}
	// Nothing predicted, nothing true.
	e := ScorePairs(nil, nil, ScoreOptions{Threshold: 0.5})
	if e.Precision != 1 || e.Recall != 1 || e.F1 != 1 || e.Bands != nil {
		t.Errorf("empty: %+v; want precision = recall = F1 = 1, no bands", e)
	}
}

// TestAdjustedRandHand checks the ARI and pair F1 against values worked out
// by hand (and published by scikit-learn for the same labels).
func TestAdjustedRandHand(t *testing.T) {
	for _, tc := range []struct {
		name        string
		truth, pred []int64
		n           int64
		ari, pairF1 float64
	}{
		// Index 2, row pairs 6, column pairs 3, all 15: (2-1.2)/(4.5-1.2).
		{"sklearn-6", []int64{0, 0, 0, 1, 1, 1}, []int64{0, 0, 1, 1, 2, 2}, 6, 0.8 / 3.3, 4.0 / 9},
		// Index 1, rows 2, columns 1, all 6: (1-1/3)/(1.5-1/3) = 4/7.
		{"sklearn-4", []int64{0, 0, 1, 1}, []int64{0, 0, 1, 2}, 4, 4.0 / 7, 2.0 / 3},
		{"identical", []int64{0, 0, 1, 1, 2}, []int64{5, 5, 7, 7, 9}, 5, 1, 1},
		{"all-singletons", []int64{0, 1, 2}, []int64{3, 4, 5}, 3, 1, 1},
		{"one-cluster", []int64{0, 0, 0}, []int64{1, 1, 1}, 3, 1, 1},
		// Unlisted singletons change only C(n, 2): 2 listed pairs agree
		// fully, so ARI stays 1 whatever n is.
		{"singletons-beyond", []int64{0, 0}, []int64{1, 1}, 100, 1, 1},
	} {
		s := CompareClusterings(tc.truth, tc.pred, tc.n)
		if math.Abs(s.ARI-tc.ari) > 1e-12 || math.Abs(s.PairF1-tc.pairF1) > 1e-12 {
			t.Errorf("%s: ARI %.6f, pair F1 %.6f; want %.6f, %.6f", tc.name, s.ARI, s.PairF1, tc.ari, tc.pairF1)
		}
	}
}

// TestScoreClustersHand: truth components {a,b,c} {d,e}, predicted {a,b}
// {c,d,e}, 10 documents. Cells ab|c|de: index 2, rows 3+1, columns 1+3,
// all 45; ARI (2-16/45)/(4-16/45).
func TestScoreClustersHand(t *testing.T) {
	truth := SortPairs([]LabeledPair{lp("a", "b", 0.9), lp("b", "c", 0.9), lp("d", "e", 1), lp("a", "z", 0.5)})
	s := ScoreClusters(truth, 0.8, [][]string{{"a", "b"}, {"c", "d", "e"}}, 10)
	want := (2 - 16.0/45) / (4 - 16.0/45)
	if math.Abs(s.ARI-want) > 1e-12 || s.PairPrecision != 0.5 || s.PairRecall != 0.5 || s.PairF1 != 0.5 {
		t.Errorf("got %+v; want ARI %.6f and pair precision = recall = F1 = 0.5", s, want)
	}
	if s.Documents != 10 || s.TruthClusters != 2 || s.PredictedClusters != 2 || s.SameBoth != 2 {
		t.Errorf("got %+v; want 10 documents, 2 and 2 clusters, 2 pairs in both", s)
	}
	if !strings.Contains((&Score{Pairs: ScorePairs(truth, nil, ScoreOptions{Threshold: 0.8}), Clusters: &s}).String(), "adjusted Rand index 0.4512") {
		t.Error("String does not show the ARI")
	}
}

// TestAddPredicted: scoring the predicted pairs among the truth and adding
// the count of the others gives the score of the whole list.
func TestAddPredicted(t *testing.T) {
	truth := []LabeledPair{{A: "a", B: "b", J: 0.9}, {A: "a", B: "c", J: 0.95}, {A: "b", B: "c", J: 0.3}, {A: "c", B: "d", J: 0.85}}
	pred := []LabeledPair{{A: "a", B: "b"}, {A: "a", B: "x"}, {A: "b", B: "c"}, {A: "b", B: "y"}, {A: "c", B: "d"}, {A: "x", B: "y"}}
	opts := ScoreOptions{Threshold: 0.8}
	want := ScorePairs(truth, pred, opts)
	var among []LabeledPair
	for _, p := range pred {
		for _, q := range truth {
			if p.A == q.A && p.B == q.B {
				among = append(among, p)
			}
		}
	}
	got := ScorePairs(truth, among, opts)
	got.AddPredicted(int64(len(pred) - len(among)))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if want.FalsePositives != 4 {
		t.Errorf("FalsePositives = %d; want 4 (the test must add pairs beyond the truth)", want.FalsePositives)
	}
}
