// Package corpus reads and writes the document collections that neardup
// deduplicates: JSON Lines and Parquet with chosen id and text fields, plain
// text files (one document a line), folders (one document a file), gzip and
// zstd compression by extension, and standard input. It is an I/O layer only:
// it does not normalise, shingle or judge the text it hands out.
//
// # Two stages
//
// Reading is split so that parsing can use every core. A [Reader] walks the
// inputs in order on one goroutine and fills a [Batch] with raw [Record]s: the
// bytes of one JSON line, one text line, one file or one Parquet row (encoded
// as a JSON object). Each record carries its file, its 1-based line (or row)
// number within that file and its 0-based global Index across all inputs. A
// [Parser], one per worker goroutine, turns a Record into a [Document] (id,
// text, optional keep value) without allocating. Record indices, not batch
// boundaries or goroutine timing, identify documents, so any number of workers
// gives the same result.
//
// # Formats
//
// [FormatAuto] picks the format of each input from its name: .jsonl, .ndjson
// and .json are JSON Lines, .parquet is Parquet, .txt is one document a line,
// and a directory is one document a file. Compression suffixes .gz and .zst
// are peeled first and may be stacked (x.jsonl.gz, x.jsonl.zst, x.txt.gz.zst).
// The input "-" is standard input: its format is the explicit Options.Format,
// or JSON Lines under FormatAuto, and gzip or zstd compression is recognised by
// its magic bytes. See [Options] for the exact rules.
//
// In JSON Lines a line is ended by "\n" or "\r\n"; a final line without a
// terminator is still read. Blank lines (only spaces, tabs or "\r") are
// skipped but counted, so line numbers always match what an editor shows. A
// UTF-8 byte order mark at the start of a file is ignored. Each non-blank line
// must be one JSON object. Its id field may be a string or a number (rendered
// as its JSON text, so 7 and 7.0 are different ids); a missing or null id
// becomes the record's 1-based line number in decimal. Ids made from line
// numbers repeat across files: use the Index when several inputs are read. The
// text field must be a string. Invalid UTF-8 inside a JSON string is passed on
// as raw bytes (the shingler replaces it), not rejected; every other departure
// from RFC 8259 is an error. When a key occurs twice the last value wins, as in
// encoding/json.
//
// # Errors
//
// A record that cannot be read or parsed yields a [*RecordError] naming the
// file, the line and the field, wrapping one of the package's sentinel errors
// (check with errors.Is). With Options.SkipBad set the Reader skips records
// longer than MaxRecordBytes, counts them and lists them in Batch.Skipped, and
// callers skip documents whose Parse fails; [Stats] adds the counts up for a
// report, and a [BadLog] lists the skipped records, one a line, in input
// order.
//
// # Writing kept records
//
// Batch deduplication writes the raw input records of the documents it keeps.
// [CopyKept] re-reads the inputs and writes, for every kept Index, the record
// verbatim as one JSON line (Parquet rows as the JSON object the Reader made;
// text lines and files as {"id":…,"text":…}). Standard input cannot be read
// twice: [Spool] it to a temporary file first and read that instead.
package corpus
