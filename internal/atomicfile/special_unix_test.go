//go:build unix

package atomicfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/neardup/neardup/internal/atomicfile"
)

// A named pipe (like /dev/null or /dev/stdout, a file that is not a regular
// file) is written in place: renaming a temporary file over it replaced it
// with a regular file holding the output (`neardup sign -o /dev/null` turned
// /dev/null into a file on /dev's tmpfs).
func TestCreateWritesSpecialFileInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A reader that does not wait for a writer, so that a Create that
	// never opens the pipe fails the test rather than hanging it.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, finish := range []string{"commit", "abort"} {
		f, err := atomicfile.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(finish); err != nil {
			t.Fatal(err)
		}
		if finish == "commit" {
			err = f.Commit()
		} else {
			err = f.Abort()
		}
		if err != nil {
			t.Fatalf("%s: %v", finish, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != os.ModeNamedPipe {
			t.Fatalf("after %s: %s is %v; want a named pipe", finish, path, fi.Mode())
		}
		buf := make([]byte, 64)
		n, _ := r.Read(buf)
		if got := string(buf[:n]); got != finish {
			t.Fatalf("after %s: the pipe gave %q; want %q", finish, got, finish)
		}
		assertOnly(t, dir, "pipe")
	}
}
