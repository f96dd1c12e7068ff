package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// migrateFixture makes an index of 4-byte keys (the layout before version
// 3) in dir, with documents that have near duplicates and metadata, and
// returns a sample of queries with their answers; pack repacks it.
func migrateFixture(t *testing.T, dir string, pack bool) (sample []Doc, want [][]Match) {
	t.Helper()
	x, err := Open(dir, &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true, BucketKeyBytes: NarrowKeyBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := buildDocs(t, x.Config(), 600)
	for i := range docs {
		docs[i].Meta = fmt.Appendf(nil, `{"n":%d}`, i)
	}
	for i := 0; i < len(docs); i += 100 {
		if err := x.Insert(ctx, docs[i:min(i+100, len(docs))]); err != nil {
			t.Fatal(err)
		}
	}
	if pack {
		if _, err := x.Repack(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if x.Config().BucketKeyBytes != NarrowKeyBytes {
		t.Fatalf("fixture has %d-byte keys", x.Config().BucketKeyBytes)
	}
	sample = docs[:150]
	return sample, answers(t, x, sample)
}

// openMigrated opens dir and checks its width, its consistency and its
// answers.
func openMigrated(t *testing.T, stage, dir string, keyBytes int, sample []Doc, want [][]Match) {
	t.Helper()
	x, err := Open(dir, &Options{CacheSize: 8 << 20, MustExist: true})
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	defer x.Close()
	if got := x.Config().BucketKeyBytes; got != keyBytes {
		t.Fatalf("%s: %d-byte keys; want %d", stage, got, keyBytes)
	}
	mustCheck(t, x)
	sameAnswers(t, stage, x, sample, want)
}

// TestMigrate: an index of 4-byte keys answers the same before and after
// Migrate, which gives it 8-byte keys (layout version 3); a second Migrate,
// and one of an index open elsewhere, are refused.
func TestMigrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	sample, want := migrateFixture(t, dir, false)
	openMigrated(t, "before", dir, NarrowKeyBytes, sample, want)

	x, err := Open(dir, &Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, dir, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("Migrate of an open index: %v; want ErrLocked", err)
	}
	x.Close()

	st, err := Migrate(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != 600 || st.OldKeyBytes != NarrowKeyBytes || st.KeyBytes != WideKeyBytes || st.Resumed || st.Packed {
		t.Errorf("stats %+v; want 600 documents, 4 → 8 bytes, not resumed, not packed", st)
	}
	openMigrated(t, "after", dir, WideKeyBytes, sample, want)
	for _, p := range []string{dir + ".migrate", dir + ".premigrate"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	if _, err := Migrate(ctx, dir, nil); !errors.Is(err, ErrKeyWidth) {
		t.Errorf("second Migrate: %v; want ErrKeyWidth", err)
	}
}

// TestMigrateCrash stops Migrate after each of its durable steps, as a kill
// would: the directory then holds the old index, intact, or no index at all
// (between the renames); a second Migrate then finishes, and the index
// answers as before. The index is repacked, so that Migrate repacks the
// new one too.
func TestMigrateCrash(t *testing.T) {
	stop := errors.New("killed")
	for _, at := range []string{"marked", "copied", "packed", "complete", "renamed old", "renamed new"} {
		t.Run(at, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			sample, want := migrateFixture(t, dir, true)
			n := 0
			_, err := migrate(ctx, dir, nil, func(s string) error {
				if s == at && n == 0 {
					n++
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) {
				t.Fatalf("migrate: %v; want it stopped at %q", err, at)
			}
			switch at {
			case "renamed old":
				if _, err := Open(dir, &Options{CacheSize: 8 << 20, MustExist: true}); !errors.Is(err, ErrNoIndex) {
					t.Errorf("between the renames: %v; want ErrNoIndex", err)
				}
			case "renamed new":
				openMigrated(t, "killed", dir, WideKeyBytes, sample, want)
			default:
				openMigrated(t, "killed", dir, NarrowKeyBytes, sample, want)
			}
			st, err := Migrate(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resumed := at == "renamed old" || at == "renamed new"; st.Resumed != resumed {
				t.Errorf("Resumed %v; want %v", st.Resumed, resumed)
			}
			openMigrated(t, "rerun", dir, WideKeyBytes, sample, want)
		})
	}
}

// TestWideKeysNoForeignCandidates narrows 4-byte keys to 6 bits (a test
// hook), so that unrelated documents share buckets as they would in an
// index of 10⁹ documents: a Memory index of 4-byte keys meets them as
// candidates (and verification drops them), one of 8-byte keys does not,
// and both answer the same.
func TestWideKeysNoForeignCandidates(t *testing.T) {
	testNarrowKeyBits = 6
	defer func() { testNarrowKeyBits = 0 }()
	var ms [2]Metrics
	var got [2][][]Match
	for i, w := range []int{NarrowKeyBytes, WideKeyBytes} {
		x, err := NewMemory(&Options{BucketKeyBytes: w})
		if err != nil {
			t.Fatal(err)
		}
		docs := buildDocs(t, x.Config(), 300)
		if err := x.Insert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs[:100] {
			m, err := x.Query(ctx, d.Sig, &QueryOptions{Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = append(got[i], m)
		}
		ms[i] = x.Metrics()
	}
	// With 2^6 buckets and about 300·b postings, every narrow bucket holds
	// foreign documents: each query meets many more than its near
	// duplicates.
	if ms[0].Candidates < 2*ms[1].Candidates || ms[0].CandidatesDropped <= ms[1].CandidatesDropped {
		t.Errorf("candidates %d (dropped %d) with 4-byte keys, %d (dropped %d) with 8-byte keys; want the narrow ones to meet foreign documents",
			ms[0].Candidates, ms[0].CandidatesDropped, ms[1].Candidates, ms[1].CandidatesDropped)
	}
	for i := range got[0] {
		if fmt.Sprint(got[0][i]) != fmt.Sprint(got[1][i]) {
			t.Errorf("query %d: %v with 4-byte keys, %v with 8-byte keys", i, got[0][i], got[1][i])
		}
	}
}
