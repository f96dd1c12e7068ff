package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

func readReportJSON(t *testing.T, dir string) *dedup.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, dedup.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep dedup.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestDedupReportTopBuckets: report.json and report.html list the largest
// shared buckets whether or not any is over the cap; with the cap lowered
// so that some are, the capped ones lead the list, marked, and agree with
// report.json's "largest" (the capped buckets only).
func TestDedupReportTopBuckets(t *testing.T) {
	for _, c := range []struct {
		cap    string
		capped bool
	}{{"1000", false}, {"2", true}} {
		t.Run("cap="+c.cap, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "corpus.jsonl")
			writeDocs(t, in, editedCorpus(t, 300, 1200, 0.05, 5))
			out := filepath.Join(dir, "out")
			if code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", out, "--bucket-cap", c.cap, in); code != ExitOK {
				t.Fatalf("dedup: exit %d: %s", code, stderr)
			}
			rep := readReportJSON(t, out)
			b := rep.Buckets
			if (b.CappedBuckets > 0) != c.capped {
				t.Fatalf("%d capped buckets; want some: %v", b.CappedBuckets, c.capped)
			}
			if len(b.Top) != 10 || b.Top[0].Size < 3 {
				t.Fatalf("report.json top buckets %+v; want 10, the largest of 3 or more documents", b.Top)
			}
			for i, lb := range b.Top {
				if lb.Size < 2 || lb.First == "" || len(lb.Key) != 16 {
					t.Errorf("top bucket %d: %+v; want a shared bucket with a first member and a 16-digit key", i, lb)
				}
				if i > 0 && (lb.Size > b.Top[i-1].Size || lb.Size == b.Top[i-1].Size && lb.Key <= b.Top[i-1].Key) {
					t.Errorf("top buckets %d, %d: %+v, %+v; want size descending, then key ascending", i-1, i, b.Top[i-1], lb)
				}
			}
			nCapped := 0
			for _, lb := range b.Top {
				if lb.Size > rep.Config.BucketCap {
					nCapped++
				}
			}
			t.Logf("top buckets (%d capped over %d): %+v", nCapped, rep.Config.BucketCap, b.Top)
			if want := min(len(b.Largest), len(b.Top)); nCapped < want || !reflect.DeepEqual(b.Top[:want], b.Largest[:want]) {
				t.Errorf("top buckets %+v; want them to start with the capped ones, %+v", b.Top, b.Largest)
			}
			html, err := os.ReadFile(filepath.Join(out, dedup.HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			page := string(html)
			if !strings.Contains(page, "Largest buckets") || !strings.Contains(page, b.Top[0].Key) || !strings.Contains(page, b.Top[9].Key) {
				t.Errorf("report.html lacks the table of the largest buckets (%s … %s)", b.Top[0].Key, b.Top[9].Key)
			}
			if got := strings.Count(page, "over the cap</b>"); got != nCapped {
				t.Errorf("report.html marks %d buckets over the cap; want %d", got, nCapped)
			}
		})
	}
}
