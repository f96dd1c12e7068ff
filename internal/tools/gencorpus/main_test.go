package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onlyFiles fails unless dir holds exactly the named files.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("directory holds %q; want %q", got, names)
	}
}

// TestRun writes a small corpus and reads it back: -docs documents, one a
// line, and nothing else in the directory.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.jsonl")
	if err := run("../../../testdata/articles_1000.jsonl", out, 50, "", 0.3, 0.1, 4, 7); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct{ ID, Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.ID == "" || rec.Text == "" {
			t.Fatalf("line %d: %v, %+v", n+1, err, rec)
		}
		n++
	}
	if n != 50 {
		t.Errorf("%d documents; want 50", n)
	}
	onlyFiles(t, dir, "c.jsonl")
}

// TestFailedRunLeavesNoFile: when writing fails part way (here the walk of
// the Go tree meets an unreadable file after writing others), neither the
// output nor a temporary file is left.
func TestFailedRunLeavesNoFile(t *testing.T) {
	src := t.TempDir()
	for _, name := range []string{"a.go", "b.go", "c.go"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("package x // "+strings.Repeat("x", 1<<20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken := errors.New("disk full")
	dir := t.TempDir()
	out := filepath.Join(dir, "gosrc.jsonl")
	err := writeOutput(out, func(w io.Writer) error {
		if err := goroot(w, src); err != nil {
			return err
		}
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("got %v; want %v", err, broken)
	}
	onlyFiles(t, dir)

	// And a failing walk.
	if err := os.Chmod(filepath.Join(src, "c.go"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(src, "c.go")); err == nil {
		t.Skip("running as root: an unreadable file can be read")
	}
	if err := writeOutput(out, func(w io.Writer) error { return goroot(w, src) }); err == nil {
		t.Fatal("the walk of an unreadable file succeeded")
	}
	onlyFiles(t, dir)
}
