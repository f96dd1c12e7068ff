package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/atomicfile"
)

func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	// Before Commit the final name still holds the old content.
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("before commit: got %q; want %q", b, "old")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("after commit: got %q; want %q", b, "new")
	}
	if err := f.Commit(); !errors.Is(err, atomicfile.ErrDone) {
		t.Fatalf("second commit: got %v; want ErrDone", err)
	}
	if err := f.Abort(); err != nil {
		t.Fatalf("abort after commit: %v", err)
	}
	assertOnly(t, dir, "out.txt")
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	f, err := atomicfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("final name after abort: %v; want not exist", err)
	}
	assertOnly(t, dir)
}

func TestModeFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	g, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	path := filepath.Join(dir, "out")
	f, err := atomicfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(ref)
	b, _ := os.Stat(path)
	if a.Mode() != b.Mode() {
		t.Fatalf("mode %v; want %v (as os.Create)", b.Mode(), a.Mode())
	}
}

func TestCreateInMissingDir(t *testing.T) {
	_, err := atomicfile.Create(filepath.Join(t.TempDir(), "no", "such", "out"))
	if err == nil {
		t.Fatal("created a file in a missing directory")
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("directory holds %q; want %q", got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("directory holds %q; want %q", got, names)
		}
	}
}

// TestWriteFile: WriteFile replaces the file whole and leaves no temporary
// file; into a missing directory it fails and leaves nothing.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	for _, data := range []string{"first", "second, longer", ""} {
		if err := atomicfile.WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != data {
			t.Fatalf("after WriteFile(%q): got %q, %v", data, b, err)
		}
		assertOnly(t, dir, "report.json")
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "missing", "x"), []byte("x")); err == nil {
		t.Fatal("WriteFile into a missing directory: no error")
	}
	assertOnly(t, dir, "report.json")
}
