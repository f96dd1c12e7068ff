package index

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// TestBoilerplateStored: an index made under a spec that drops boilerplate
// lines stores the set in its meta record; reopened without a spec, or with
// the same spec without lines (as neardup serve --shingle gives it), it
// signs with the set, so the service drops the lines the build dropped; a
// spec with another set is refused.
func TestBoilerplateStored(t *testing.T) {
	sh := shingle.MustNew(shingle.Web)
	var hs []uint64
	for _, l := range []string{"Home | News | Sport", "© Example Media 2024"} {
		hs = append(hs, sh.AppendLines(nil, []byte(l))[0].Hash)
	}
	spec := shingle.Web
	spec.Boilerplate = shingle.NewBoilerplate(hs)
	other := shingle.Web
	other.Boilerplate = shingle.NewBoilerplate(hs[:1])
	dir := filepath.Join(t.TempDir(), "idx")
	db, err := Open(dir, &Options{Spec: spec, CacheSize: 8 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	g := newTextGen(1)
	body := g.text(60)
	for _, o := range []*Options{{}, {Spec: shingle.Web}, {Spec: spec}} {
		o.CacheSize, o.NoSync = 8<<20, true
		db, err := Open(dir, o)
		if err != nil {
			t.Fatalf("reopen with %v: %v", o.Spec, err)
		}
		c := db.Config()
		if c.Spec.String() != spec.String() || !slices.Equal(c.Spec.Boilerplate.Lines(), spec.Boilerplate.Lines()) {
			t.Errorf("reopened with %v: spec %s; want %s with its lines", o.Spec, c.Spec, spec)
		}
		page := signOf(t, c, "Home | News | Sport\n"+body+"\n© Example Media 2024")
		if want := signOf(t, c, body); !slices.Equal(page, want) {
			t.Errorf("reopened with %v: the signer keeps the boilerplate lines", o.Spec)
		}
		db.Close()
	}
	if _, err := Open(dir, &Options{Spec: other, CacheSize: 8 << 20}); !errors.Is(err, ErrSpecMismatch) {
		t.Errorf("reopen with another set: %v; want ErrSpecMismatch", err)
	}
}
