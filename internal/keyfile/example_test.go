package keyfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/internal/keyfile"
	"github.com/neardup/neardup/shingle"
)

func Example() {
	path := filepath.Join(os.TempDir(), "neardup-example-key")
	os.WriteFile(path, []byte("000102030405060708090a0b0c0d0e0f\n"), 0o600)
	defer os.Remove(path)
	key, err := keyfile.Read(path, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := shingle.Prose
	spec.Key = key
	fmt.Println(spec) // the key's id, never the key
	_, err = keyfile.Parse([]byte("0102"), "short.key")
	fmt.Println(err)
	// Output:
	// v1/word:5/nfkc,casefold,punct,space/siphash:bd6ba0c49d4ac267/unicode:15.0.0
	// keyfile: invalid key file: short.key: 4 bytes; want 32 hexadecimal digits (a line break may follow) or 16 raw bytes
}
