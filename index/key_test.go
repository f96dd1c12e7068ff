package index

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// TestOpenWithKey: an index made under a keyed spec opens with its key alone
// (Options.Key: the stored spec keyed with it), signs as the keyed spec does,
// and refuses another key or none with ErrSpecMismatch.
func TestOpenWithKey(t *testing.T) {
	ctx := context.Background()
	key := &shingle.Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	spec := shingle.Prose
	spec.Key = key
	text := []byte("the quick brown fox jumps over the lazy dog again and again, and then once more")
	dir := filepath.Join(t.TempDir(), "idx")
	db, err := Open(dir, &Options{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	signer, err := db.Config().NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	keyed, _ := signer.Sign(nil, text)
	keyed = slices.Clone(keyed)
	if err := db.Insert(ctx, []Doc{{ID: "a", Sig: keyed}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, &Options{Key: key})
	if err != nil {
		t.Fatalf("open with the key alone: %v", err)
	}
	cfg := db.Config()
	if cfg.Spec.String() != spec.String() || cfg.Spec.Key == nil || *cfg.Spec.Key != *key {
		t.Errorf("spec %s (keyed %v); want %s with the key", cfg.Spec, cfg.Spec.Key != nil, spec)
	}
	signer, err = cfg.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := signer.Sign(nil, text)
	if !slices.Equal(again, keyed) {
		t.Error("the reopened index signs the text otherwise than the keyed spec did")
	}
	m, err := db.Query(ctx, again, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || m[0].ID != "a" || m[0].Similarity != 1 {
		t.Errorf("query of the same text: %+v; want a at 1", m)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	other := &shingle.Key{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	for name, o := range map[string]*Options{"another key": {Key: other}, "no key": {}} {
		db, err := Open(dir, o)
		if err == nil {
			db.Close()
			t.Errorf("%s: opened; want ErrSpecMismatch", name)
			continue
		}
		if !errors.Is(err, ErrSpecMismatch) {
			t.Errorf("%s: %v; want ErrSpecMismatch", name, err)
		}
	}
}
