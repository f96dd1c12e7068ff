package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/internal/atomicfile"
)

func Example() {
	dir, _ := os.MkdirTemp("", "atomicfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pairs.tsv")

	f, err := atomicfile.Create(path)
	if err != nil {
		panic(err)
	}
	defer f.Abort() // removes the temporary file unless committed
	fmt.Fprintln(f, "a\tb\t0.9")
	_, err = os.Stat(path)
	fmt.Println("visible before commit:", err == nil)
	if err := f.Commit(); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Printf("after commit: %q\n", b)
	// Output:
	// visible before commit: false
	// after commit: "a\tb\t0.9\n"
}
