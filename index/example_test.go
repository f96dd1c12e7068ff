package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
)

func Example() {
	dir, _ := os.MkdirTemp("", "index-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// A new index with the defaults: prose shingles, 128 32-bit slots,
	// threshold 0.8.
	db, err := index.Open(filepath.Join(dir, "idx"), nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	signer, _ := db.Config().NewSigner()
	doc := func(id, text string) index.Doc {
		sig, _ := signer.Sign(nil, []byte(text))
		return index.Doc{ID: id, Sig: sig}
	}

	res, _ := db.CheckAndInsert(ctx, []index.Doc{
		doc("a", "The quick brown fox jumps over the lazy dog near the bank of the river today"),
		doc("b", "The quick brown fox jumps over the lazy dog near the bank of the river today!"),
		doc("c", "An entirely different sentence about stock markets and interest rates this week"),
	}, nil)
	for _, r := range res {
		fmt.Print(r.ID, " ", r.Status)
		for _, m := range r.Matches {
			fmt.Printf(" (of %s, %.2f)", m.ID, m.Similarity)
		}
		fmt.Println()
	}
	st, _ := db.Stats(ctx)
	fmt.Println("documents:", st.Documents)
	// Output:
	// a new
	// b duplicate (of a, 1.00)
	// c new
	// documents: 2
}

// Repack packs the postings that inserts wrote one key each, as a bulk build
// packs its own; queries answer as before.
func ExampleDB_Repack() {
	dir, _ := os.MkdirTemp("", "index-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	// An index of 4-byte bucket keys, as made before layout version 3
	// (Repack packs either width).
	db, err := index.Open(filepath.Join(dir, "idx"), &index.Options{BucketKeyBytes: index.NarrowKeyBytes})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	signer, _ := db.Config().NewSigner()
	sign := func(text string) []uint64 {
		sig, _ := signer.Sign(nil, []byte(text))
		return sig
	}
	err = db.Insert(ctx, []index.Doc{
		{ID: "a", Sig: sign("The quick brown fox jumps over the lazy dog near the bank of the river today")},
		{ID: "c", Sig: sign("An entirely different sentence about stock markets and interest rates this week")},
	})
	if err != nil {
		panic(err)
	}

	st, err := db.Repack(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("moved %d postings into %d packed values under %d group bits\n", st.Postings, st.Groups, st.GroupBits)
	ms, _ := db.Query(ctx, sign("The quick brown fox jumps over the lazy dog near the bank of the river today!"), nil)
	for _, m := range ms {
		fmt.Printf("%s %.2f\n", m.ID, m.Similarity)
	}
	again, _ := db.Repack(ctx, nil)
	fmt.Println("second repack moved", again.Postings)
	// Output:
	// moved 32 postings into 2 packed values under 1 group bits
	// a 1.00
	// second repack moved 0
}

// An index in memory answers as a persistent one does, and is gone when the
// process ends: a shadow of a serving index, or tests.
func ExampleNewMemory() {
	ctx := context.Background()
	x, err := index.NewMemory(&index.Options{Threshold: 0.7})
	if err != nil {
		panic(err)
	}
	defer x.Close()
	signer, _ := x.Config().NewSigner()
	sign := func(text string) []uint64 {
		sig, _ := signer.Sign(nil, []byte(text))
		return sig
	}
	err = x.Insert(ctx, []index.Doc{{ID: "a", Sig: sign("The quick brown fox jumps over the lazy dog near the bank of the river today")}})
	if err != nil {
		panic(err)
	}
	res, _ := x.CheckAndInsert(ctx, []index.Doc{
		{ID: "b", Sig: sign("The quick brown fox jumps over the lazy dog near the bank of the river today again")},
		{ID: "c", Sig: sign("An entirely different sentence about stock markets and interest rates this week")},
	}, nil)
	for _, r := range res {
		fmt.Print(r.ID, " ", r.Status)
		for _, m := range r.Matches {
			fmt.Printf(" (of %s)", m.ID)
		}
		fmt.Println()
	}
	// Output:
	// b duplicate (of a)
	// c new
}
