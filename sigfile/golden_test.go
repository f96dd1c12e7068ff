package sigfile_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/goldentext"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/golden")

const goldenDir = "../testdata/golden"

// goldenFile describes one golden signature file for readers in other
// languages: its header fields and, per record, the signature bytes, the
// slots widened to one value each, and (MinHash) the band keys under Bands
// and the batch driver's entries for the record's document index.
type goldenFile struct {
	File              string         `json:"file"`
	Sketch            string         `json:"sketch"`
	Spec              string         `json:"spec"`
	SpecFingerprint   string         `json:"spec_fingerprint"`
	Params            string         `json:"params"`
	ParamsFingerprint string         `json:"params_fingerprint"`
	BlockBytes        int            `json:"block_bytes"`
	Shard             int            `json:"shard"`
	Shards            int            `json:"shards"`
	Bands             string         `json:"bands,omitempty"`
	Records           []goldenRecord `json:"records"`
}

type goldenRecord struct {
	ID        string   `json:"id"`
	Text      string   `json:"text"`
	Signature string   `json:"signature"` // the record's signature bytes, hex
	Slots     []string `json:"slots"`     // hex; SimHash: the fingerprint
	BandKeys  []string `json:"band_keys,omitempty"`
	Entries   []string `json:"entries,omitempty"` // key with its low 32 bits replaced by the document index
}

// goldenCase is one golden file: a header and how to sign a text under it.
type goldenCase struct {
	file  string
	h     sigfile.Header
	bands lsh.Params
}

func goldenCases() []goldenCase {
	mh := func(p minhash.Params, bb int) sigfile.Header {
		h := sigfile.MinHashHeader(shingle.Prose, p)
		h.BlockBytes = bb
		return h
	}
	sh := sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{})
	sh.BlockBytes, sh.Shard, sh.Shards = 64, 1, 2
	return []goldenCase{
		{"sigfile-minhash.ndsf", mh(minhash.Params{K: 16, Bits: 32, Seed: 42}, 160), lsh.Params{Bands: 4, Rows: 4}},
		{"sigfile-minhash-b4.ndsf", mh(minhash.Params{K: 13, Bits: 4, Scheme: minhash.KHash}, 64), lsh.Params{Bands: 3, Rows: 4}},
		{"sigfile-simhash.ndsf", sh, lsh.Params{}},
	}
}

// TestGolden pins the bytes of small signature files of the golden texts
// (docs/signature-format.md §6) and checks that they read back as the
// records they were made from.
func TestGolden(t *testing.T) {
	var desc []goldenFile
	for _, c := range goldenCases() {
		h := c.h
		spec, err := h.ShingleSpec(nil)
		if err != nil {
			t.Fatal(err)
		}
		shingler := shingle.MustNew(spec)
		g := goldenFile{File: c.file, Sketch: h.Sketch.String(), Spec: h.Spec, SpecFingerprint: fmt.Sprintf("%016x", h.SpecFingerprint()),
			Params: h.Params(), ParamsFingerprint: fmt.Sprintf("%016x", h.ParamsFingerprint()), BlockBytes: h.BlockBytes, Shard: h.Shard, Shards: h.Shards}
		if c.bands != (lsh.Params{}) {
			g.Bands = c.bands.String()
		}
		var recs []record
		for i, text := range goldentext.Texts {
			var sig, slots []uint64
			if h.Sketch == sigfile.MinHash {
				sig = minhash.MustNewHasher(h.MinHash).SignText(nil, shingler, []byte(text.Text))
				slots = h.MinHash.AppendSlots(nil, sig)
			} else {
				sig = []uint64{simhash.Fingerprint(shingler.AppendFeatures(nil, []byte(text.Text)))}
				slots = sig
			}
			id := "doc-" + text.Name
			recs = append(recs, record{[]byte(id), sig})
			one := encode(t, h, []record{{[]byte(id), sig}})
			// The signature's bytes are the last of the record: before the
			// block checksum (8) and the trailer (24).
			sigBytes := one[len(one)-32-h.SignatureBytes() : len(one)-32]
			gr := goldenRecord{ID: id, Text: text.Name, Signature: hex.EncodeToString(sigBytes), Slots: hexes(slots)}
			if c.bands != (lsh.Params{}) {
				keys := c.bands.AppendKeys(nil, slots)
				gr.BandKeys = hexes(keys)
				gr.Entries = hexes(lsh.AppendEntries(nil, keys, uint32(i), 32))
			}
			g.Records = append(g.Records, gr)
		}
		data := encode(t, h, recs)
		path := filepath.Join(goldenDir, c.file)
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update once to create it)", err)
		}
		if !bytes.Equal(data, want) {
			i := 0
			for i < min(len(data), len(want)) && data[i] == want[i] {
				i++
			}
			t.Fatalf("%s: bytes changed from offset %d (%d bytes now, %d pinned)", c.file, i, len(data), len(want))
		}
		r, err := sigfile.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		gotH, got, err := drain(r)
		if err != nil {
			t.Fatal(err)
		}
		if gotH != h {
			t.Fatalf("%s: header %+v; want %+v", c.file, gotH, h)
		}
		equalRecords(t, got, recs)
		desc = append(desc, g)
	}
	data, _ := json.MarshalIndent(desc, "", " ")
	data = append(data, '\n')
	path := filepath.Join(goldenDir, "sigfiles.json")
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("%s differs from what the golden files give; run go test -update if the change is intended", path)
	}
}

func hexes(v []uint64) []string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%016x", x)
	}
	return s
}

// TestIndependentReader runs testdata/sigfile.py, a reader written from
// docs/signature-format.md alone, over the golden files: it checks every
// checksum, the records, the slots and the band keys of §7 against
// sigfiles.json. It skips without python3 or the system's libxxhash.
func TestIndependentReader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command(py, "testdata/sigfile.py", goldenDir).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 77 {
		t.Skipf("no libxxhash: %s", out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}
