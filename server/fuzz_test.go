package server

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/neardup/neardup/index"
)

// FuzzParseDocument: any body is either a document or an error with a
// documented code; an accepted document re-encoded parses to the same.
func FuzzParseDocument(f *testing.F) {
	for _, seed := range []string{
		`{"id": "a", "text": "some text"}`,
		`{"text": "x", "meta": {"k": [1, 2, {"n": null}]}, "threshold": 0.9, "limit": 3}`,
		`{"id": "\u00e9\ud800", "text": "a\nb"}`,
		`{"id": 1}`, `[]`, `{"text": "a", "text": "b"}`, "{\"text\": \"\xff\"}", ``, `{"meta": "x", "text": "t"}`,
	} {
		f.Add([]byte(seed))
	}
	s := &Server{opts: *(&Options{}).EnsureDefaults()}
	f.Fuzz(func(t *testing.T, body []byte) {
		var q index.QueryOptions
		d, err := s.parseDocument(body, false, &q)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || codeStatus[ae.code] == 0 {
				t.Fatalf("error without a documented code: %v", err)
			}
			return
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var q2 index.QueryOptions
		d2, err := s.parseDocument(again, false, &q2)
		if err != nil || d2.ID != d.ID || d2.Text != d.Text || string(d2.Meta) != string(d.Meta) || q2 != q {
			t.Fatalf("%q → %s → %+v, %v", body, again, d2, err)
		}
	})
}
