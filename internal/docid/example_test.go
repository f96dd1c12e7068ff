package docid_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/docid"
)

func Example() {
	for _, id := range []string{"doc-7", "#42", "a\tb", "bad\xffbyte"} {
		field := docid.AppendFieldString(nil, id)
		back, _ := docid.ParseField(string(field))
		fmt.Printf("id %-14q field bytes %-18q reads back %q\n", id, field, back)
	}
	// Output:
	// id "doc-7"        field bytes "doc-7"            reads back "doc-7"
	// id "#42"          field bytes "\"#42\""          reads back "#42"
	// id "a\tb"         field bytes "\"a\\tb\""        reads back "a\tb"
	// id "bad\xffbyte"  field bytes "bad\xffbyte"      reads back "bad�byte"
}
