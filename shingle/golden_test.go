package shingle

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/neardup/neardup/internal/goldentext"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/golden")

type goldenFeatures struct {
	Spec     string   `json:"spec"`
	Text     string   `json:"text"`
	Features []string `json:"features"`
}

// goldenKey is the secret key of the keyed golden spec: a test fixture.
var goldenKey = Key{0: 0x6e, 1: 0x65, 2: 0x61, 3: 0x72, 15: 0x01}

// TestGoldenFeatures pins the features of every preset, and of a keyed
// (SipHash) spec, on the golden texts: a change to any feature value fails
// here (and must bump Version).
func TestGoldenFeatures(t *testing.T) {
	var got []goldenFeatures
	for _, name := range []string{"prose", "code", "cjk", "web", "keyed"} {
		spec, _ := Preset(name)
		if name == "keyed" {
			spec, _ = Preset("prose")
			spec.Key = &goldenKey
		}
		s := MustNew(spec)
		for _, g := range goldentext.Texts {
			rec := goldenFeatures{Spec: name + " " + spec.String(), Text: g.Name, Features: []string{}}
			for _, f := range s.AppendFeatures(nil, []byte(g.Text)) {
				rec.Features = append(rec.Features, fmt.Sprintf("%016x", f))
			}
			got = append(got, rec)
		}
	}
	const path = "../testdata/golden/features.json"
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
		var w []goldenFeatures
		json.Unmarshal(want, &w)
		for i := range got {
			if i >= len(w) || fmt.Sprint(w[i]) != fmt.Sprint(got[i]) {
				t.Fatalf("features changed for %s / %s:\ngot  %v\nwant %v", got[i].Spec, got[i].Text, got[i].Features, w[min(i, len(w)-1)].Features)
			}
		}
		t.Fatal("golden features file differs")
	}
}

type goldenText struct {
	Name string `json:"name"`
	Hex  string `json:"hex"`
}

// TestGoldenTexts pins the bytes of the golden texts in
// testdata/golden/texts.json, so that another implementation can reproduce
// features.json and signatures.json without reading Go (the keyed spec's key
// is goldenKey: bytes 0–3 "near", byte 15 = 1, the rest zero).
func TestGoldenTexts(t *testing.T) {
	var got []goldenText
	for _, g := range goldentext.Texts {
		got = append(got, goldenText{g.Name, hex.EncodeToString([]byte(g.Text))})
	}
	const path = "../testdata/golden/texts.json"
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
		t.Fatalf("golden texts differ from %s:\ngot  %s", path, data)
	}
}
