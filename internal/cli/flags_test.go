package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// badValues lists, for every flag of a command, values it must refuse up
// front (exit 2, the flag named in the message). A flag with no bad value
// (a bool, a free-form string) is listed with none, so that a new flag
// without an entry fails TestEveryFlagRefused.
type badValues map[string][]string

// checkEveryFlag runs cmd with each bad value of each flag (after base
// arguments that are valid on their own) and checks exit 2 and the flag's
// name in the message; every flag of the command must be listed.
func checkEveryFlag(t *testing.T, cmd string, base []string, bad badValues) {
	t.Helper()
	root := NewRoot(IO{})
	c, _, err := root.Find([]string{cmd})
	if err != nil {
		t.Fatal(err)
	}
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if _, ok := bad[f.Name]; !ok && f.Name != "help" {
			t.Errorf("%s --%s: no entry in the table", cmd, f.Name)
		}
	})
	for name, values := range bad {
		if c.Flags().Lookup(name) == nil {
			t.Errorf("%s --%s: no such flag", cmd, name)
			continue
		}
		for _, v := range values {
			args := append([]string{cmd}, base...)
			args = append(args, "--"+name+"="+v)
			if cmd == "dedup" {
				args = append(args, sample)
			}
			code, _, stderr := runCLI(t, "", args...)
			if code != ExitUsage || !strings.Contains(stderr, "--"+name) && !(name == "out" && strings.Contains(stderr, "--out")) {
				t.Errorf("%s --%s=%q: exit %d, %q; want exit 2 naming --%s", cmd, name, v, code, strings.TrimSpace(stderr), name)
			}
		}
	}
}

// TestEveryDedupFlagRefused: issue 10 item 8. Each value here ran before
// with a default in its place (--threshold 0, --recall 0, --bucket-cap 0,
// --memory 0 or 1e30GiB), failed later with exit 1 (--threshold 1, a
// missing --tmp-dir) or was ignored (a negative --bands, --multi-probe or
// --workers).
func TestEveryDedupFlagRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	checkEveryFlag(t, "dedup", []string{"-q", "-o", t.TempDir()}, badValues{
		"out": {sample}, "threshold": {"0", "1", "-0.1", "NaN"}, "recall": {"0", "1", "1.5"}, "bands": {"-1", "4"}, "rows": {"-2", "3"},
		"multi-probe": {"-1", "3"}, "bucket-cap": {"0", "1", "-1", "1000000"}, "verify": {"maybe"}, "cluster": {"ring"},
		"keep": {"last"}, "workers": {"-1", "100000"}, "memory": {"0", "1e30GiB", "-4GiB", "1MiB", "x"}, "tmp-dir": {missing},
		"quiet": {}, "golden": {missing}, "shingle": {"word:0"}, "scheme": {"nope"}, "num-perm": {"0", "-3"}, "bits": {"0", "7"},
		"seed": {"-1"}, "key-file": {missing, sample}, "format": {"xml"}, "id-field": {"", "text"}, "text-field": {""}, "skip-bad": {}, "max-record-bytes": {"0", "-1"},
		"sketch": {"lsh", ""}, "weight": {"bm25", "tfidf"}, "hamming": {"9", "-1", "3"}, "blocks": {"-1", "8"},
		"html": {}, "exact-pass": {}, "boilerplate": {"0", "1", "-1", "x", "always"}, "boilerplate-lines": {missing},
		"against": {"", "-", missing}, "signatures": {"-", missing}, "signatures-out": {t.TempDir(), filepath.Join(missing, "sigs.ndsf")},
		"bad-out": {"x", "-"},
	})
}

// TestDedupSimHashFlagsRefused: under --sketch simhash its own flags are
// checked against their ranges, and the minhash flags it would ignore are
// refused, as are the simhash flags under minhash (the table above).
func TestDedupSimHashFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--weight", "bm25"}, {"--hamming", "9"}, {"--hamming", "-1"}, {"--blocks", "-1"}, {"--blocks", "3", "--hamming", "3"},
		{"--blocks", "17"}, {"--num-perm", "64"}, {"--scheme", "khash"}, {"--bits", "16"}, {"--seed", "3"},
		{"--bands", "4", "--rows", "4"}, {"--multi-probe", "1"}, {"--verify", "estimate"},
	} {
		all := append([]string{"dedup", "-q", "-o", dir, "--sketch", "simhash"}, args...)
		code, _, stderr := runCLI(t, "", append(all, sample)...)
		name := args[0]
		if name == "--blocks" && len(args) > 2 {
			name = "blocks"
		}
		if code != ExitUsage || !strings.Contains(stderr, name) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s", args, code, strings.TrimSpace(stderr), name)
		}
	}
}

// TestEveryPlanFlagRefused: the same for plan; --documents 1e30 printed a
// negative number, and zeros ran with defaults.
func TestEveryPlanFlagRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	checkEveryFlag(t, "plan", []string{"--documents", "1e6", "--features", "300"}, badValues{
		"documents": {"1e30", "-5", "2.5", "1", "NaN"}, "features": {"0.5", "1e30", "-1", "Inf"}, "doc-bytes": {"-1", "1e30", "0.5"},
		"threshold": {"0", "1", "2"}, "recall": {"0", "1.01"}, "precision": {"0", "1.5", "NaN"}, "fp-weight": {"-1", "Inf"},
		"fn-weight": {"-1", "NaN"}, "memory": {"0", "1e30GiB", "-1MB", "lots"}, "docs-per-second": {"-1", "Inf"},
		"background": {"0", "-0.1", "0.9"}, "duplicates": {"0", "-1", "1e7"}, "key-bits": {"0", "8", "65"},
		"num-perm": {"-1", "100000"}, "bits": {"3", "-1"}, "scheme": {"nope"}, "sample": {missing},
		"sample-floor": {}, "sample-draws": {}, "shingle": {}, "workers": {"-1", "5000"}, "json": {},
		"format": {}, "id-field": {}, "text-field": {}, "skip-bad": {}, "max-record-bytes": {}, "html": {},
		"sketch": {"lsh"}, "weight": {"tfidf"}, "hamming": {"3"}, "blocks": {"5"},
	})
	// The sample's flags matter with --sample only.
	checkEveryFlag(t, "plan", []string{"--sample", sample}, badValues{
		"documents": {"1"}, "features": {"0.5"}, "doc-bytes": {}, "threshold": {}, "recall": {}, "precision": {}, "fp-weight": {},
		"fn-weight": {}, "memory": {}, "docs-per-second": {}, "background": {}, "duplicates": {}, "key-bits": {},
		"num-perm": {}, "bits": {}, "scheme": {}, "sample": {}, "json": {},
		"sample-floor": {"0", "0.9", "-1"}, "sample-draws": {"0", "-5"}, "shingle": {"word:0"}, "workers": {"-1"},
		"format": {"xml"}, "id-field": {""}, "text-field": {"id"}, "skip-bad": {}, "max-record-bytes": {"0"}, "html": {},
		"sketch": {"lsh"}, "weight": {"tfidf"}, "hamming": {"3"}, "blocks": {"5"},
	})
}
