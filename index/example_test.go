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
