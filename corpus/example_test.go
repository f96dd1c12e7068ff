package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/corpus"
)

// exampleDir makes a scratch directory with one JSON Lines file.
func exampleDir() (dir, path string) {
	dir, err := os.MkdirTemp("", "corpus-example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "docs.jsonl")
	data := `{"id":"a","text":"The cat sat on the mat."}
{"id":"b","text":"The cat sat on the mat!","score":0.9}

{"text":"A line without an id gets its line number."}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		log.Fatal(err)
	}
	return dir, path
}

// Read JSON Lines in batches and parse each record.
func Example() {
	dir, path := exampleDir()
	defer os.RemoveAll(dir)

	opts := &corpus.Options{KeepField: "score"}
	r, err := corpus.NewReader([]string{path}, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	p, err := corpus.NewParser(opts) // one per worker goroutine
	if err != nil {
		log.Fatal(err)
	}
	var (
		batch corpus.Batch
		doc   corpus.Document
	)
	for {
		err := r.Next(&batch)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		for i := range batch.Records {
			rec := &batch.Records[i]
			if err := p.Parse(rec, &doc); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("#%d line %d id=%s keep=%v/%v %q\n", doc.Index, rec.Line, doc.ID, doc.HasKeep, doc.Keep, doc.Text)
		}
	}
	fmt.Println(r.Stats().Records, "records")
	// Output:
	// #0 line 1 id=a keep=false/0 "The cat sat on the mat."
	// #1 line 2 id=b keep=true/0.9 "The cat sat on the mat!"
	// #2 line 4 id=4 keep=false/0 "A line without an id gets its line number."
	// 3 records
}

// Errors name the file, the line and the field, and wrap a sentinel.
func ExampleRecordError() {
	p, err := corpus.NewParser(nil)
	if err != nil {
		log.Fatal(err)
	}
	rec := corpus.Record{Raw: []byte(`{"id":"x","text":42}`), File: "in.jsonl", Line: 7}
	var doc corpus.Document
	err = p.Parse(&rec, &doc)
	fmt.Println(err)
	fmt.Println(errors.Is(err, corpus.ErrNotString))
	// Output:
	// in.jsonl:7: field "text": corpus: not a JSON string: found a number
	// true
}

// Write the raw records of the documents kept by a first pass.
func ExampleCopyKept() {
	dir, path := exampleDir()
	defer os.RemoveAll(dir)

	keep := corpus.Indices{0, 2} // global record indices, sorted
	var out strings.Builder
	n, err := corpus.CopyKept(context.Background(), &out, []string{path}, nil, keep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
	fmt.Println(n, "kept")
	// Output:
	// {"id":"a","text":"The cat sat on the mat."}
	// {"text":"A line without an id gets its line number."}
	// 2 kept
}

// Standard input can be read only once; spool it to read it twice.
func ExampleSpool() {
	stdin := strings.NewReader("first document\nsecond document\n")
	path, cleanup, err := corpus.Spool(stdin, "")
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()

	opts := &corpus.Options{Format: corpus.FormatLines}
	var out strings.Builder
	if _, err := corpus.CopyKept(context.Background(), &out, []string{path}, opts, corpus.Indices{1}); err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
	// Output:
	// {"id":"2","text":"second document"}
}

// With SkipBad the Reader skips records over MaxRecordBytes (listing them in
// Batch.Skipped) and callers skip records that do not parse; a BadLog lists
// both, one a line.
func ExampleBadLog() {
	dir, err := os.MkdirTemp("", "corpus-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "in.jsonl")
	data := `{"id":"a","text":"fine"}
{"id":"b","text":"far too long for the limit of forty bytes"}
{"id":"c","body":"no text"}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		log.Fatal(err)
	}
	opts := &corpus.Options{SkipBad: true, MaxRecordBytes: 40}
	r, err := corpus.NewReader([]string{path}, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	p, err := corpus.NewParser(opts)
	if err != nil {
		log.Fatal(err)
	}
	var out strings.Builder
	bad := corpus.NewBadLog(&out)
	var b corpus.Batch
	var doc corpus.Document
	for r.Next(&b) == nil {
		bad.Add(b.Skipped)
		for i := range b.Records {
			var re *corpus.RecordError
			if err := p.Parse(&b.Records[i], &doc); errors.As(err, &re) {
				bad.Write(re)
			}
		}
	}
	if err := bad.Flush(); err != nil {
		log.Fatal(err)
	}
	fmt.Print(strings.ReplaceAll(out.String(), path, "in.jsonl"))
	// Output:
	// # file	line	index	field	reason
	// in.jsonl	2	1	-	corpus: record too large: 61 bytes, over MaxRecordBytes (40)
	// in.jsonl	3	2	text	corpus: missing field
}
