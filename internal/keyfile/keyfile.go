// Package keyfile reads the secret key of a keyed shingle spec
// (shingle.Spec.Key, SipHash-2-4) from a file, for the --key-file flag of
// every command that signs. It is not a key store: the file holds one key,
// and this package only parses it and warns about its permissions. The key
// never leaves the process through this package: errors name the file and
// its size, never its bytes.
//
// # Format
//
// A key file holds 128 bits, either as 32 hexadecimal digits (upper or lower
// case) optionally followed by one line break ("\n" or "\r\n"), as
// `openssl rand -hex 16 > key` writes it, or as exactly 16 raw bytes
// (`head -c 16 /dev/urandom > key`). Anything else is refused: a file of
// another length, hex digits with other characters, a key of all zero bytes
// (never a secret: a file filled by mistake). Make it readable by its owner
// only (chmod 600); Read warns when every user may read it.
package keyfile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/neardup/neardup/shingle"
)

// ErrKeyFile reports a key file that is not in the format above; check with
// errors.Is. The error names the file and what is wrong with it, never the
// key.
var ErrKeyFile = errors.New("keyfile: invalid key file")

// maxRead is how much of a file Read reads: more than any valid key file, so
// that a large file is refused by its size without reading it all.
const maxRead = 64

// Parse reads a key from the contents of a key file; name is used in error
// messages only. Errors wrap ErrKeyFile.
func Parse(data []byte, name string) (*shingle.Key, error) {
	var k shingle.Key
	switch n := len(data); {
	case n == len(k):
		copy(k[:], data)
	case n >= 2*len(k) && n <= 2*len(k)+2:
		digits, rest := data[:2*len(k)], string(data[2*len(k):])
		if rest != "" && rest != "\n" && rest != "\r\n" {
			return nil, fmt.Errorf("%w: %s: %d bytes after 32 characters that are not one line break; want 32 hexadecimal digits (a line break may follow) or 16 raw bytes", ErrKeyFile, name, len(rest))
		}
		if _, err := hex.Decode(k[:], digits); err != nil {
			return nil, fmt.Errorf("%w: %s: 32 characters that are not all hexadecimal digits; want 32 hexadecimal digits (a line break may follow) or 16 raw bytes", ErrKeyFile, name)
		}
	default:
		return nil, fmt.Errorf("%w: %s: %d bytes; want 32 hexadecimal digits (a line break may follow) or 16 raw bytes", ErrKeyFile, name, n)
	}
	if k == (shingle.Key{}) {
		return nil, fmt.Errorf("%w: %s: the key is all zero bytes, which is no secret", ErrKeyFile, name)
	}
	return &k, nil
}

// Read reads the key in the file at path. If every user may read the file
// (its mode has the "other read" bit), a one-line warning naming the file and
// its mode goes to warn (nil: no warning). Errors wrap ErrKeyFile or the
// file system's error.
func Read(path string, warn io.Writer) (*shingle.Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrKeyFile, path, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRead+1))
	if err != nil {
		return nil, fmt.Errorf("keyfile: %s: %w", path, err)
	}
	k, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	if WorldReadable(st.Mode()) && warn != nil {
		fmt.Fprintf(warn, "warning: key file %s is readable by every user (mode %04o); make it private: chmod 600 %s\n", path, st.Mode().Perm(), path)
	}
	return k, nil
}

// WorldReadable reports whether a file of mode m may be read by every user.
func WorldReadable(m fs.FileMode) bool { return m.Perm()&0o004 != 0 }

// ID returns the key's id as specs show it (shingle.Spec.String writes
// "siphash:" and this): the hexadecimal form of its fingerprint,
// shingle.Key.Fingerprint, which reveals nothing useful about the key.
func ID(k *shingle.Key) string { return fmt.Sprintf("%x", k.Fingerprint()) }
