//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Summarize returns the table of runs: for each build (bins, by index) and
// kind of run ("sign", then each budget), the wall times' median, mean and
// range, the mean CPU, system time's share of CPU and peak RSS ranges and
// dedup's stage medians; then for each build the ratio of dedup at the
// first budget to sign, of the medians and round by round (a round's dedup
// against the same build's sign of that round), how many rounds were
// within target, and the larger budgets' wall minus the first's, round by
// round. Rounds missing a run are left out of the round-by-round figures.
func Summarize(runs []Run, bins, budgets []string, target float64) string {
	var b strings.Builder
	kinds := append([]string{"sign"}, budgets...)
	for bi, bin := range bins {
		name := filepath.Base(bin)
		for _, k := range kinds {
			rs := pick(runs, bi, k)
			if len(rs) == 0 {
				continue
			}
			walls := collect(rs, func(r Run) float64 { return r.Wall })
			cpus := collect(rs, func(r Run) float64 { return r.User + r.Sys })
			sys := collect(rs, func(r Run) float64 { return share(r.Sys, r.User+r.Sys) })
			rss := collect(rs, func(r Run) float64 { return float64(r.RSS) / 1024 })
			fmt.Fprintf(&b, "%s %s: n=%d wall median %.2f mean %.2f [%.2f-%.2f] s | CPU mean %.2f s | sys %.1f-%.1f %% | RSS %.0f-%.0f MiB",
				name, k, len(rs), Median(walls), mean(walls), slices.Min(walls), slices.Max(walls), mean(cpus),
				100*slices.Min(sys), 100*slices.Max(sys), slices.Min(rss), slices.Max(rss))
			if st := stageMedians(rs); st != "" {
				fmt.Fprintf(&b, " | stages %s", st)
			}
			b.WriteByte('\n')
		}
		sign, first := byRound(runs, bi, "sign"), byRound(runs, bi, budgets[0])
		if len(sign) == 0 || len(first) == 0 {
			continue
		}
		med := Median(collect(pick(runs, bi, budgets[0]), func(r Run) float64 { return r.Wall })) /
			Median(collect(pick(runs, bi, "sign"), func(r Run) float64 { return r.Wall }))
		var ratios []float64
		for _, r := range sortedRounds(first) {
			if s, ok := sign[r]; ok {
				ratios = append(ratios, first[r].Wall/s.Wall)
			}
		}
		within := 0
		for _, x := range ratios {
			if x <= target {
				within++
			}
		}
		fmt.Fprintf(&b, "%s: dedup %s / sign %.3f by medians; by round %s (median %.3f; %d of %d within %.2f)\n",
			name, budgets[0], med, floats(ratios), Median(ratios), within, len(ratios), target)
		for _, m := range budgets[1:] {
			other := byRound(runs, bi, m)
			var diffs []float64
			for _, r := range sortedRounds(first) {
				if o, ok := other[r]; ok {
					diffs = append(diffs, o.Wall-first[r].Wall)
				}
			}
			slower := 0
			for _, d := range diffs {
				if d > 0 {
					slower++
				}
			}
			fmt.Fprintf(&b, "%s: dedup %s minus %s by round %s s (slower in %d of %d)\n",
				name, m, budgets[0], signed(diffs), slower, len(diffs))
		}
	}
	return b.String()
}

// Median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func share(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole
}

func pick(runs []Run, build int, kind string) []Run {
	var out []Run
	for _, r := range runs {
		if r.Build == build && r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

func byRound(runs []Run, build int, kind string) map[int]Run {
	m := map[int]Run{}
	for _, r := range pick(runs, build, kind) {
		m[r.Round] = r
	}
	return m
}

func sortedRounds(m map[int]Run) []int {
	var rs []int
	for r := range m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

func collect(rs []Run, f func(Run) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// stageMedians returns the medians of the runs' stage times, in the first
// run's stage order, "sign 7.33 / candidates 0.69 / ...".
func stageMedians(rs []Run) string {
	if len(rs[0].Stages) == 0 {
		return ""
	}
	var parts []string
	for _, st := range rs[0].Stages {
		var xs []float64
		for _, r := range rs {
			for _, s := range r.Stages {
				if s.Stage == st.Stage {
					xs = append(xs, s.Seconds)
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", st.Stage, Median(xs)))
	}
	return strings.Join(parts, " / ")
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}

func signed(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%+.2f", x)
	}
	return strings.Join(parts, ", ")
}
