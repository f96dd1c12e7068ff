package minhash

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/neardup/neardup/internal/goldentext"
	"github.com/neardup/neardup/shingle"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/golden")

type goldenSignature struct {
	Spec   string `json:"spec"`
	Params string `json:"params"`
	Text   string `json:"text"`
	// Wire is the whole encoding, id "doc-<text name>", in hex; the slots
	// are its last Params.Bytes() bytes.
	Wire string `json:"wire"`
}

// TestGoldenSignatures pins, for every preset, both schemes and several slot
// widths, the wire bytes of the signatures of the golden texts.
func TestGoldenSignatures(t *testing.T) {
	var got []goldenSignature
	for _, name := range []string{"prose", "code", "cjk", "web"} {
		spec, _ := shingle.Preset(name)
		sh := shingle.MustNew(spec)
		for _, p := range []Params{{}, {Scheme: KHash}, {Bits: 64, Seed: 42}, {K: 64, Bits: 16}, {K: 64, Bits: 8},
			{K: 64, Bits: 4}, {K: 64, Bits: 2}, {Bits: 1}, {K: 100, Bits: 64}, {K: 64, Scheme: KHash, Bits: 1}} {
			h := MustNewHasher(p)
			for _, g := range goldentext.Texts {
				sig := h.SignText(nil, sh, []byte(g.Text))
				wire := AppendBinary(nil, h.Params(), spec.Fingerprint(), []byte("doc-"+g.Name), sig)
				got = append(got, goldenSignature{Spec: name, Params: h.Params().String(), Text: g.Name, Wire: hex.EncodeToString(wire)})
			}
		}
	}
	const path = "../testdata/golden/signatures.json"
	data, _ := json.MarshalIndent(got, "", " ")
	data = append(data, '\n')
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if string(want) != string(data) {
		var w []goldenSignature
		json.Unmarshal(want, &w)
		for i := range got {
			if i >= len(w) || w[i] != got[i] {
				t.Fatalf("signature bytes changed for %s %s %s:\ngot  %s\nwant %s", got[i].Spec, got[i].Params, got[i].Text, got[i].Wire, w[min(i, len(w)-1)].Wire)
			}
		}
		t.Fatal("golden signatures file differs")
	}
}
