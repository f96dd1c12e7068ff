package jsontext_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/jsontext"
)

func ExampleAppendString() {
	buf := []byte(`{"text":`)
	buf = jsontext.AppendString(buf, "tab\there, \"quoted\", <b>, line\u2028separator, bad \xff byte")
	buf = append(buf, '}')
	fmt.Println(string(buf))
	// Output:
	// {"text":"tab\there, \"quoted\", <b>, line\u2028separator, bad \ufffd byte"}
}
