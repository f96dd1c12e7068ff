package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/neardup/neardup/internal/cli"
)

// Main runs a command line with injected standard streams and returns the
// exit code. Here, dedup reads three documents from standard input ("-"),
// finds the two duplicates (exact copies to the prose spec, which folds
// case and punctuation: found by the exact pass, without candidates) and
// writes its outputs into a directory.
func ExampleMain() {
	dir, err := os.MkdirTemp("", "neardup-cli-example-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	docs := `{"id":"a","text":"the quick brown fox jumps over the lazy dog by the river bank"}
{"id":"b","text":"The quick brown fox jumps over the lazy dog by the river bank!"}
{"id":"c","text":"an entirely different text about cooking pasta with garlic and olive oil"}
`
	var stdout, stderr bytes.Buffer
	stdio := cli.IO{In: strings.NewReader(docs), Out: &stdout, Err: &stderr}
	code := cli.Main(context.Background(), []string{"dedup", "-q", "-o", dir, "-"}, stdio)
	fmt.Println("exit", code)
	fmt.Print(stderr.String()) // empty on success

	// The summary's first line ends with the wall time, and its second
	// with the output directory: both vary from run to run.
	summary := regexp.MustCompile(` +in [0-9.]+s\n|; outputs in .*\n`).ReplaceAllString(stdout.String(), "\n")
	fmt.Print(summary)
	clusters, _ := os.ReadFile(filepath.Join(dir, "clusters.jsonl"))
	fmt.Print(string(clusters))
	// Output:
	// exit 0
	// documents 3 (empty 0, bad 0, exact copies 1)  candidates 0  verified pairs 1  clusters 1  removed 1  kept 2
	// bands 16 × 6 rows: recall 0.9923 at J = 0.80
	// {"cluster":0,"size":2,"kept":"a","members":["a","b"]}
}

// Errors go to the injected standard error, and the exit code says whose
// they are: 2 for bad flags or arguments.
func ExampleMain_usage() {
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"dedup", "-"}, cli.IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	fmt.Print(stderr.String())
	fmt.Println("exit", code, "usage:", code == cli.ExitUsage)
	// Output:
	// neardup: --out is required
	// exit 2 usage: true
}
