//go:build linux

// Command signratio measures issue 12 item 1's figures: the wall time of
// `neardup dedup` against that of `neardup sign` of the same file, each
// build's runs interleaved with the others' round by round (the machine's
// speed drifts by a quarter from one hour to the next, so only runs made
// side by side compare), with CPU (user + sys), system time's share, peak
// RSS and report.json's stage times, and whether every build and budget
// wrote the same pairs.tsv, clusters.jsonl and kept.jsonl.
//
//	go build -o /tmp/nd-before ./cmd/neardup     # at the commit before
//	go build -o /tmp/nd-after ./cmd/neardup      # at the commit after
//	go run ./internal/tools/signratio -rounds 8 -corpus /tmp/s5m.jsonl /tmp/nd-before /tmp/nd-after
//
// Each round runs, for each build in the order given (reversed in even
// rounds: see roundOrder), `sign --shingle S -o
// /dev/null CORPUS` and `dedup -q --shingle S --memory M -o DIR CORPUS` for
// each budget M of -memory (1GiB,16GiB by default). It prints a line a run
// as it goes, then, for each build and run, the median, mean and range of
// the wall times, and the ratio of dedup at the first budget to sign: of
// the medians, and round by round (each dedup against its own round's
// sign), with how many rounds were within -target. The corpus the issue
// names is gencorpus's -short corpus of 5M documents.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 8, "interleaved rounds")
	corpus := flag.String("corpus", "", "the corpus (JSONL) both commands read")
	shingle := flag.String("shingle", "word:5", "the --shingle of both commands")
	memory := flag.String("memory", "1GiB,16GiB", "dedup's budgets, comma-separated; the first is the one set against sign")
	target := flag.Float64("target", 1.6, "the ratio dedup / sign to count rounds within")
	tmp := flag.String("tmp", "", "directory for dedup's outputs (default: a new one under os.TempDir)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: signratio [flags] -corpus FILE BINARY...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*rounds, *corpus, *shingle, strings.Split(*memory, ","), *target, *tmp, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "signratio:", err)
		os.Exit(1)
	}
}

func run(rounds int, corpus, shingle string, budgets []string, target float64, tmp string, bins []string, w io.Writer) error {
	if corpus == "" || len(bins) == 0 || rounds < 1 || len(budgets) == 0 {
		return errors.New("want -corpus, -rounds ≥ 1, a -memory and at least one binary")
	}
	if tmp == "" {
		d, err := os.MkdirTemp("", "signratio")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		tmp = d
	}
	var runs []Run
	digests := map[string]string{} // "build budget" → digest of the first round's outputs
	for r := 1; r <= rounds; r++ {
		for _, b := range roundOrder(r, len(bins)) {
			bin := bins[b]
			res, err := measure(bin, "sign", "--shingle", shingle, "-o", os.DevNull, corpus)
			if err != nil {
				return err
			}
			res.Round, res.Build, res.Kind = r, b, "sign"
			runs = append(runs, res)
			fmt.Fprintln(w, res.line(bins))
			for _, m := range budgets {
				out := filepath.Join(tmp, "out")
				if err := os.RemoveAll(out); err != nil {
					return err
				}
				res, err := measure(bin, "dedup", "-q", "--shingle", shingle, "--memory", m, "-o", out, corpus)
				if err != nil {
					return err
				}
				res.Round, res.Build, res.Kind = r, b, m
				if res.Stages, err = readStages(filepath.Join(out, "report.json")); err != nil {
					return err
				}
				if r == 1 {
					if digests[fmt.Sprint(b, " ", m)], err = digestOutputs(out); err != nil {
						return err
					}
				}
				runs = append(runs, res)
				fmt.Fprintln(w, res.line(bins))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, Summarize(runs, bins, budgets, target))
	first := ""
	same := true
	for _, d := range digests {
		if first == "" {
			first = d
		}
		same = same && d == first
	}
	if same {
		fmt.Fprintln(w, "outputs (pairs.tsv, clusters.jsonl, kept.jsonl) identical across builds and budgets (first round)")
	} else {
		fmt.Fprintln(w, "OUTPUTS DIFFER across builds or budgets (first round):")
		for k, d := range digests {
			fmt.Fprintf(w, "  build %s: %s\n", k, d[:16])
		}
	}
	return nil
}

// roundOrder returns the order in which round r (from 1) runs the builds:
// as given in odd rounds, reversed in even ones. Run in the same order
// every round, the later build ran slower on the test machine: two builds
// whose 16 GiB dedup sign stages do the same work (2026-11-27), the second
// 0.6 s slower in five rounds of six, and no slower when run first.
func roundOrder(r, builds int) []int {
	order := make([]int, builds)
	for i := range order {
		order[i] = i
		if r%2 == 0 {
			order[i] = builds - 1 - i
		}
	}
	return order
}

// Run is one measured command.
type Run struct {
	Round, Build int
	Kind         string  // "sign", or dedup's budget
	Wall         float64 // seconds
	User, Sys    float64 // CPU seconds
	RSS          int64   // peak, KiB
	Stages       []Stage // dedup's, from report.json
}

// Stage is one of report.json's timings.
type Stage struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

func (r Run) line(bins []string) string {
	s := fmt.Sprintf("%d %s %s %.2f %.2f %.2f %d", r.Round, filepath.Base(bins[r.Build]), r.Kind, r.Wall, r.User, r.Sys, r.RSS)
	for i, st := range r.Stages {
		sep := " "
		if i > 0 {
			sep = "/"
		}
		s += fmt.Sprintf("%s%.2f", sep, st.Seconds)
	}
	return s
}

// measure runs bin with args and returns its wall time and resource use.
func measure(bin string, args ...string) (Run, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t).Seconds()
	if err != nil {
		return Run{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Run{}, errors.New("no resource usage from the child")
	}
	return Run{
		Wall: wall,
		User: time.Duration(ru.Utime.Nano()).Seconds(),
		Sys:  time.Duration(ru.Stime.Nano()).Seconds(),
		RSS:  ru.Maxrss, // KiB on Linux
	}, nil
}

func readStages(path string) ([]Stage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Timings []Stage `json:"timings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return rep.Timings, nil
}

// digestOutputs returns a digest of the three outputs that must not change.
func digestOutputs(dir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"pairs.tsv", "clusters.jsonl", "kept.jsonl"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\x00%s\x00", name)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
