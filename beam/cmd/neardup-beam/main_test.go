package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/neardup/neardup/beam/internal/tmpdir"
	"github.com/neardup/neardup/dedup"
)

func TestMain(m *testing.M) {
	beamlog.LogLevel = "warn"
	beam.Init()
	cleanup, err := tmpdir.Private("neardup-beam-test-") // Beam's leftovers go with it
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const sample = "../../../testdata/articles_1000.jsonl"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestSameOutputsAsNeardup runs both commands on the bundled sample.
func TestSameOutputsAsNeardup(t *testing.T) {
	want, got := t.TempDir(), t.TempDir()
	rep, err := dedup.Run(context.Background(), []string{sample}, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--single-file", "-q", "-o", got, sample)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c := rep.Counts
	summary := fmt.Sprintf("documents %d (empty %d, bad %d)  candidates %d  verified pairs %d  clusters %d  removed %d  kept %d  in ",
		c.Documents, c.Empty, c.Bad, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, c.Kept)
	if !strings.HasPrefix(stdout, summary) {
		t.Errorf("summary %q; want %q…", stdout, summary)
	}
	for _, name := range []string{"pairs.tsv", "clusters.jsonl", "kept.jsonl"} {
		w, _ := os.ReadFile(filepath.Join(want, name))
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil || !bytes.Equal(w, g) {
			t.Errorf("%s differs from neardup dedup's (%v)", name, err)
		}
	}
}

// TestMemoryLimit: --memory is the process's memory limit while the job
// runs (a local run's workers are this process), never above a tighter
// limit the process had (GOMEMLIMIT), and the limit before is restored.
func TestMemoryLimit(t *testing.T) {
	defer func(f func(int64) int64) { setMemoryLimit = f }(setMemoryLimit)
	for _, c := range []struct {
		prior int64
		flag  string
		want  int64
	}{
		{math.MaxInt64, "100MiB", 100 << 20},
		{50 << 20, "100MiB", 50 << 20},
	} {
		limit, set := c.prior, []int64{}
		setMemoryLimit = func(l int64) int64 {
			old := limit
			if l >= 0 {
				limit = l
				set = append(set, l)
			}
			return old
		}
		code, _, stderr := runCLI(t, "--memory", c.flag, "-q", "-o", t.TempDir(), sample)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if want := []int64{c.want, c.prior}; !slices.Equal(set, want) {
			t.Errorf("limit %d, --memory %s: limits set %v; want %v", c.prior, c.flag, set, want)
		}
	}
}

// TestLocalGCPercent: a local run collects at GOGC 50 unless GOGC is set,
// and restores the prior percentage; runs on a job service do not.
func TestLocalGCPercent(t *testing.T) {
	defer func(f func(int) int, g func(string) string) { setGCPercent, getenv = f, g }(setGCPercent, getenv)
	for _, env := range []string{"", "100"} {
		pct, set := 100, []int{}
		setGCPercent = func(p int) int {
			old := pct
			pct = p
			set = append(set, p)
			return old
		}
		getenv = func(k string) string {
			if k == "GOGC" {
				return env
			}
			return os.Getenv(k)
		}
		code, _, stderr := runCLI(t, "-q", "-o", t.TempDir(), sample)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		want := []int{localGCPercent, 100}
		if env != "" {
			want = []int{}
		}
		if !slices.Equal(set, want) {
			t.Errorf("GOGC=%q: percentages set %v; want %v", env, set, want)
		}
	}
	// (Prism sets --environment_type=LOOPBACK when it runs in-process.)
	defer func(r, e, env string) { *runners.Runner, *jobopts.Endpoint, *jobopts.EnvironmentType = r, e, env }(
		*runners.Runner, *jobopts.Endpoint, *jobopts.EnvironmentType)
	for _, c := range []struct {
		runner, endpoint, env string
		local                 bool
	}{
		{"", "", "", true}, {"prism", "", "", true}, {"direct", "", "", true},
		{"prism", "localhost:8073", "", false}, {"flink", "localhost:8099", "", false}, {"dataflow", "", "", false},
		{"flink", "localhost:8099", "LOOPBACK", true},
	} {
		*runners.Runner, *jobopts.Endpoint, *jobopts.EnvironmentType = c.runner, c.endpoint, c.env
		if got := localRun(); got != c.local {
			t.Errorf("--runner=%q --endpoint=%q --environment_type=%q: local %v; want %v", c.runner, c.endpoint, c.env, got, c.local)
		}
	}
}

func TestExitCodes(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-o", out}, exitUsage, "requires at least 1 arg"},
		{[]string{sample}, exitUsage, "--out is required"},
		{[]string{"--verify", "maybe", "-o", out, sample}, exitUsage, "verify"},
		{[]string{"--no-such-flag", "-o", out, sample}, exitUsage, "unknown flag"},
		{[]string{"-o", out, "-"}, exitFailure, "standard input"},
		{[]string{"-o", out, filepath.Join(out, "missing.jsonl")}, exitFailure, "missing.jsonl"},
		{[]string{"-o", out, filepath.Join(out, "*.jsonl")}, exitFailure, "matches no file"},
		{[]string{"--async", "-o", out, sample}, exitUsage, "--async"},
		// Every value out of range is refused before any pipeline runs: the
		// flags shared with neardup dedup (one flag set) and the job's own,
		// whose zeros job.Options would read as defaults.
		{[]string{"--threshold", "0", "-o", out, sample}, exitUsage, "--threshold 0"},
		{[]string{"--memory", "1e30GiB", "-o", out, sample}, exitUsage, "--memory"},
		{[]string{"--bucket-cap", "0", "-o", out, sample}, exitUsage, "--bucket-cap 0"},
		{[]string{"--shard-lines", "0", "-o", out, sample}, exitUsage, "--shard-lines 0"},
		{[]string{"--shard-lines", "-5", "-o", out, sample}, exitUsage, "--shard-lines -5"},
		{[]string{"--partitions", "3", "-o", out, sample}, exitUsage, "--partitions 3"},
		{[]string{"--partitions", "-2", "-o", out, sample}, exitUsage, "--partitions -2"},
		{[]string{"--partitions", "131072", "-o", out, sample}, exitUsage, "--partitions 131072"},
		{[]string{"--cc-rounds", "0", "-o", out, sample}, exitUsage, "--cc-rounds 0"},
		{[]string{"--cc-rounds", "65", "-o", out, sample}, exitUsage, "--cc-rounds 65"},
		{[]string{"--against", sample, "-o", out, sample}, exitUsage, "--against is not supported by neardup-beam: deduplicate against reference documents with neardup dedup --against"},
		{[]string{"--signatures", sample, "-o", out, sample}, exitUsage, "--signatures is not supported by neardup-beam"},
		{[]string{"--golden", sample, "-o", out, sample}, exitUsage, "--golden is not supported"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--threshold", "--single-file", "Beam runner flags", "--environment_type", "EXIT STATUS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(stdout, "control_endpoint") {
		t.Errorf("help lists worker-only flags")
	}
}

func TestWorkerMode(t *testing.T) {
	for args, want := range map[string]bool{"--worker": true, "-worker=true": true, "--worker=false": false, "--workers=2": false, "worker": false} {
		if got := workerMode(strings.Fields(args)); got != want {
			t.Errorf("workerMode(%q) = %v; want %v", args, got, want)
		}
	}
}
