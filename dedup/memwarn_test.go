package dedup

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/neardup/neardup/cluster"
)

// TestWarnMemory: a run whose per-document bookkeeping (outside the budget)
// passes a quarter of the budget says so in the report, naming a budget that
// keeps it within a quarter; under that budget, and under a larger one, the
// run does not warn; and the outputs are the same whether it warns or not.
func TestWarnMemory(t *testing.T) {
	const n = 170_000
	docs := make([]doc, n)
	for i := range docs {
		docs[i] = doc{ID: fmt.Sprintf("d%06d", i), Text: fmt.Sprintf("alpha %d beta %d gamma", i, i%7)}
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)

	// About n·(21 + 7) bytes = 4.8 MB of bookkeeping: past a quarter of 16 MiB.
	want := int64(n)*bookkeepingBytes(cluster.KeepFirst, true) + int64(n)*7
	if want*4 <= 16<<20 {
		t.Fatalf("test corpus too small: %d bytes of bookkeeping", want)
	}
	outSmall, rep := runDedup(t, []string{in}, &Options{Memory: 16 << 20})
	if len(rep.Warnings) != 1 {
		t.Fatalf("16 MiB: warnings %q; want one on memory", rep.Warnings)
	}
	m := regexp.MustCompile(`^(\d+) documents keep about (\d+) MiB .* --memory (\d+)MiB or more`).FindStringSubmatch(rep.Warnings[0])
	if m == nil {
		t.Fatalf("16 MiB: warning %q does not name the documents, the bookkeeping and a budget", rep.Warnings[0])
	}
	if m[1] != strconv.Itoa(n) {
		t.Errorf("warning counts %s documents; want %d", m[1], n)
	}
	if got, _ := strconv.ParseInt(m[2], 10, 64); got != (want+1<<20-1)>>20 {
		t.Errorf("warning says %d MiB of bookkeeping; want %d", got, (want+1<<20-1)>>20)
	}
	suggested, _ := strconv.ParseInt(m[3], 10, 64)
	if suggested*(1<<20) < 4*want || suggested*(1<<20) >= 4*want+1<<20 {
		t.Errorf("warning suggests --memory %dMiB; want the least MiB at or past %d bytes", suggested, 4*want)
	}
	for _, mem := range []int64{suggested << 20, 256 << 20} {
		out, rep := runDedup(t, []string{in}, &Options{Memory: mem})
		if len(rep.Warnings) != 0 {
			t.Errorf("--memory %d MiB: warnings %q; want none", mem>>20, rep.Warnings)
		}
		sameOutputs(t, outSmall, out)
	}
}
