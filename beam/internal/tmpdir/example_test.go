//go:build !windows

package tmpdir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/beam/internal/tmpdir"
)

// Private is called first thing in main (or TestMain), and its cleanup last:
// whatever is left in the temporary directory in between, such as the
// beamloopbackworker-* files Beam leaves for each pipeline it runs, goes with
// the private directory.
func Example() {
	before := os.TempDir()
	cleanup, err := tmpdir.Private("neardup-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	dir := os.TempDir()
	fmt.Println("private directory inside the old one:", filepath.Dir(dir) == filepath.Clean(before),
		strings.HasPrefix(filepath.Base(dir), "neardup-example-"))

	// What Beam does: an empty file in os.TempDir, never removed.
	f, err := os.CreateTemp("", "beamloopbackworker-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	f.Close()
	fmt.Println("leftover in the private directory:", filepath.Dir(f.Name()) == dir)

	cleanup()
	_, err = os.Stat(f.Name())
	fmt.Println("leftover gone:", os.IsNotExist(err))
	fmt.Println("TMPDIR restored:", os.TempDir() == before)
	// Output:
	// private directory inside the old one: true true
	// leftover in the private directory: true
	// leftover gone: true
	// TMPDIR restored: true
}
