package keyfile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/shingle"
)

var testKey = shingle.Key{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}

func TestParse(t *testing.T) {
	hexKey := hex.EncodeToString(testKey[:])
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"hex", hexKey, true},
		{"hex newline", hexKey + "\n", true},
		{"hex crlf", hexKey + "\r\n", true},
		{"hex upper", strings.ToUpper(hexKey) + "\n", true},
		{"raw", string(testKey[:]), true},
		{"empty", "", false},
		{"short hex", hexKey[:30] + "\n", false},
		{"long hex", hexKey + "00", false},
		{"two newlines", hexKey + "\n\n", false},
		{"space after", hexKey + " ", false},
		{"not hex", "zz" + hexKey[2:], false},
		{"15 raw bytes", string(testKey[:15]), false},
		{"17 raw bytes", string(testKey[:]) + "x", false},
		{"zero raw", string(make([]byte, 16)), false},
		{"zero hex", strings.Repeat("0", 32) + "\n", false},
		{"64 hex digits", hexKey + hexKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Parse([]byte(tc.data), "key.txt")
			switch {
			case tc.ok && err != nil:
				t.Fatalf("got error %v; want the key", err)
			case tc.ok && *k != testKey:
				t.Fatalf("got key %x; want %x", k[:], testKey[:])
			case !tc.ok && !errors.Is(err, ErrKeyFile):
				t.Fatalf("got %v, %v; want an error wrapping ErrKeyFile", k, err)
			case !tc.ok && !strings.Contains(err.Error(), "key.txt"):
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestReadWarnsWorldReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(testKey[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	k, err := Read(path, &warn)
	if err != nil || *k != testKey {
		t.Fatalf("Read: %v, %v", k, err)
	}
	if warn.Len() != 0 {
		t.Errorf("warning for mode 0600: %q", warn.String())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, &warn); err != nil {
		t.Fatal(err)
	}
	if w := warn.String(); !strings.Contains(w, "readable by every user") || !strings.Contains(w, "0644") || !strings.Contains(w, path) {
		t.Errorf("warning %q; want one naming the file and mode 0644", w)
	}
	if _, err := Read(dir, nil); !errors.Is(err, ErrKeyFile) {
		t.Errorf("Read of a directory: %v; want ErrKeyFile", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read of a missing file: %v; want ErrNotExist", err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, bytes.Repeat([]byte("a"), 1<<20), 0o600)
	if _, err := Read(big, nil); !errors.Is(err, ErrKeyFile) {
		t.Errorf("Read of a 1 MiB file: %v; want ErrKeyFile", err)
	}
}

// FuzzParse checks that Parse accepts exactly the two formats, that a key
// read back from either of its encodings is the same key, and that no error
// message shows the file's bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(hex.EncodeToString(testKey[:]) + "\n"))
	f.Add(testKey[:])
	f.Add([]byte("not a key"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := Parse(data, "f")
		if err != nil {
			if !errors.Is(err, ErrKeyFile) {
				t.Fatalf("error %v does not wrap ErrKeyFile", err)
			}
			if len(data) >= 8 && bytes.Contains([]byte(err.Error()), data) {
				t.Fatalf("error %q shows the file's bytes", err)
			}
			return
		}
		if len(data) != 16 && (len(data) < 32 || len(data) > 34) {
			t.Fatalf("accepted %d bytes", len(data))
		}
		for _, enc := range [][]byte{k[:], []byte(hex.EncodeToString(k[:])), []byte(hex.EncodeToString(k[:]) + "\r\n")} {
			k2, err := Parse(enc, "f")
			if err != nil || *k2 != *k {
				t.Fatalf("re-encoded key %q: %v, %v; want %x", enc, k2, err, k[:])
			}
		}
	})
}
