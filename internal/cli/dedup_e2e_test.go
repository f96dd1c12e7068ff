package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// runCLITerm runs the CLI with stderr reported as a terminal.
func runCLITerm(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb, ErrIsTerminal: true})
	return code, out.String(), errb.String()
}

// TestDedupProgressBar: on a terminal, dedup draws one progress line per
// stage on stderr (redrawn with \r, ended by \n), each counting its own
// unit (issue 10: candidates counted band keys as "docs", verify counted
// pairs, and every stage showed 0.0 MB/s): sign documents and bytes,
// candidates band keys, features documents, verify candidate pairs, write
// the documents kept, each of the last four to its total (100 %) and
// without a byte rate. --quiet silences it, and so does a stderr that is
// not a terminal.
func TestDedupProgressBar(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLITerm(t, "dedup", "-o", out, sample)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "verified pairs 10") {
		t.Errorf("stdout %q; want the summary", stdout)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep dedup.Report
	jsonUnmarshal(t, string(data), &rep)
	want := []struct {
		stage, unit string
		count       int64
	}{
		{"sign", "docs", 1000},
		{"candidates", "keys", rep.Buckets.Entries},
		{"features", "docs", rep.Counts.VerifiedDocs},
		{"verify", "pairs", rep.Counts.Candidates},
		{"write", "docs", rep.Counts.Kept},
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d progress lines; want %d:\n%s", len(lines), len(want), stderr)
	}
	for i, l := range lines {
		frames := strings.Split(strings.TrimPrefix(l, "\r"), "\r")
		final := frames[len(frames)-1]
		f := strings.Fields(final)
		w := want[i]
		if len(f) < 5 || f[0] != w.stage || f[1] != strconv.FormatInt(w.count, 10) || f[2] != w.unit || f[4] != w.unit+"/s" {
			t.Errorf("progress line %q; want %s counting %d %s", final, w.stage, w.count, w.unit)
			continue
		}
		if shown := strings.Contains(final, "MB/s"); shown != (w.stage == "sign") {
			t.Errorf("progress line %q: byte rate shown %v; want %v", final, shown, w.stage == "sign")
		}
		if w.stage != "sign" && !strings.Contains(final, "] 100%") {
			t.Errorf("progress line %q; want the bar at 100%%", final)
		}
	}
	for _, args := range [][]string{{"dedup", "--quiet", "-o", t.TempDir(), sample}, {"dedup", "-q", "-o", t.TempDir(), sample}} {
		if code, _, stderr := runCLITerm(t, args...); code != ExitOK || stderr != "" {
			t.Errorf("%q on a terminal: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "", "dedup", "-o", t.TempDir(), sample); code != ExitOK || stderr != "" {
		t.Errorf("stderr not a terminal: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}

// nearDups writes a JSONL corpus of the sample's first n articles, each
// followed by copies with about 1–6% of their words replaced.
func nearDups(t *testing.T, n, copies int) string {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	r := rand.New(rand.NewPCG(11, 12))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for i := 0; i < n && sc.Scan(); i++ {
		var d rec
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		enc.Encode(d)
		for c := 0; c < copies; c++ {
			words := strings.Fields(d.Text)
			rate := 0.01 + 0.05*r.Float64()
			for w := range words {
				if r.Float64() < rate {
					words[w] = fmt.Sprintf("edit%d", r.IntN(1e6))
				}
			}
			enc.Encode(rec{fmt.Sprintf("%s-%d", d.ID, c), strings.Join(words, " ")})
		}
	}
	path := filepath.Join(t.TempDir(), "neardups.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dedupOut runs dedup quietly and returns the output directory and report.
func dedupOut(t *testing.T, args ...string) (string, *dedup.Report) {
	t.Helper()
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", append([]string{"dedup", "-q", "-o", out}, args...)...)
	if code != ExitOK {
		t.Fatalf("dedup %q: exit %d: %s", args, code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep dedup.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return out, &rep
}

// pairLines returns pairs.tsv's lines split into fields.
func pairLines(t *testing.T, dir string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out
}

// TestDedupMultiProbeFlag: --multi-probe 1 keeps the bands, raises the
// expected recall and finds a superset of the pairs (8 × 8 bands: 0.77 at
// J = 0.8 without probing).
func TestDedupMultiProbeFlag(t *testing.T) {
	in := nearDups(t, 200, 3)
	plain, rp := dedupOut(t, "--bands", "8", "--rows", "8", in)
	probe, rq := dedupOut(t, "--bands", "8", "--rows", "8", "--multi-probe", "1", in)
	if rq.Config.Bands != 8 || rq.Config.Rows != 8 || rq.Config.Probe != 1 {
		t.Errorf("config %+v; want 8 × 8, probe 1", rq.Config)
	}
	if !(rq.ExpectedRecall > rp.ExpectedRecall) {
		t.Errorf("expected recall %.4f with --multi-probe 1; want more than %.4f", rq.ExpectedRecall, rp.ExpectedRecall)
	}
	set := map[string]bool{}
	for _, p := range pairLines(t, probe) {
		set[p[0]+"\t"+p[1]] = true
	}
	a := pairLines(t, plain)
	for _, p := range a {
		if !set[p[0]+"\t"+p[1]] {
			t.Errorf("pair %s %s found without --multi-probe, not with it", p[0], p[1])
		}
	}
	if len(set) <= len(a) {
		t.Errorf("%d pairs with --multi-probe 1; want more than %d", len(set), len(a))
	}
	// With bands chosen from --recall, the flag probes those bands.
	_, rd := dedupOut(t, "--multi-probe", "1", in)
	if rd.Config.Probe != 1 || rd.ExpectedRecall <= 0.99 {
		t.Errorf("default bands with --multi-probe 1: probe %d, expected recall %.4f; want 1 and > 0.99", rd.Config.Probe, rd.ExpectedRecall)
	}
}

// TestDedupVerifyFlag: pairs.tsv has four fields; the exact column is a
// number with --verify exact and "-" with estimate and none.
func TestDedupVerifyFlag(t *testing.T) {
	in := nearDups(t, 100, 2)
	for _, v := range []string{"exact", "estimate", "none"} {
		out, rep := dedupOut(t, "--verify", v, in)
		if rep.Config.Verify != v {
			t.Errorf("--verify %s: report says %q", v, rep.Config.Verify)
		}
		lines := pairLines(t, out)
		if len(lines) == 0 {
			t.Fatalf("--verify %s: no pairs", v)
		}
		for _, f := range lines {
			if len(f) != 4 || len(f[2]) != len("0.000000") {
				t.Fatalf("--verify %s: line %q; want idA, idB, a six-decimal estimate, exact", v, f)
			}
			if (f[3] == "-") != (v != "exact") {
				t.Errorf("--verify %s: exact column %q", v, f[3])
			}
		}
	}
}

// TestDedupKeepFlag: --keep longest and --keep field:NAME choose the kept
// record, which kept.jsonl copies untouched.
func TestDedupKeepFlag(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog while the cat watches from the old stone wall"
	lines := []string{
		`{"id":"a","text":"` + text + `","views":5}`,
		`{"id":"b","text":"` + text + ` today","views":50}`,
		`{"id":"c","text":"` + text + ` today again","views":7}`,
		`{"id":"d","text":"an unrelated document about something else entirely, long enough"}`,
	}
	in := filepath.Join(t.TempDir(), "keep.jsonl")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, tc := range []struct {
		keep string
		kept []string
	}{
		{"first", []string{lines[0], lines[3]}},
		{"longest", []string{lines[2], lines[3]}},
		{"field:views", []string{lines[1], lines[3]}},
	} {
		out, rep := dedupOut(t, "--threshold", "0.7", "--keep", tc.keep, in)
		if rep.Config.Keep != tc.keep || rep.Counts.Removed != 2 {
			t.Errorf("--keep %s: report keep %q, removed %d; want %q and 2", tc.keep, rep.Config.Keep, rep.Counts.Removed, tc.keep)
		}
		data, _ := os.ReadFile(filepath.Join(out, "kept.jsonl"))
		if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, tc.kept) {
			t.Errorf("--keep %s: kept.jsonl\ngot  %q\nwant %q", tc.keep, got, tc.kept)
		}
	}
}
