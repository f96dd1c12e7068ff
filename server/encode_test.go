package server

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestAppendCheckResult compares the hand-written encoder with
// encoding/json on awkward values.
func TestAppendCheckResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	strs := []string{"", "plain", `q"uo\te`, "tab\tnew\nline\r", "\x00\x1f\x7f", "héllo wörld ✓", "bad \xff utf8", "\u2028\u2029", "<&>"}
	floats := []float64{0, 1, 0.5, 0.9296875, 1e-7, 3.3e-9, 0.1 + 0.2, 1.0 / 3}
	for i := range 500 {
		r := CheckResult{ID: strs[rng.IntN(len(strs))], Status: StatusDuplicate, Duplicates: []Duplicate{}}
		for range rng.IntN(3) {
			d := Duplicate{ID: strs[rng.IntN(len(strs))], Similarity: floats[rng.IntN(len(floats))]}
			if rng.IntN(2) == 0 {
				d.Meta = json.RawMessage(`{"a":[1,2],"b":"x"}`)
			}
			r.Duplicates = append(r.Duplicates, d)
		}
		if i%7 == 0 {
			r.Status, r.Line, r.Error = StatusError, i+1, &ErrorBody{Code: CodeBadJSON, Message: strs[rng.IntN(len(strs))]}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := appendCheckResult(nil, &r); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("got  %s\nwant %s", got, want.Bytes())
		}
	}
}
