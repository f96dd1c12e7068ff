// Package corpus reads and writes the document collections that neardup
// deduplicates: JSON Lines and Parquet with chosen id and text fields, plain
// text files (one document a line), folders (one document a file), WARC and
// WET files of web crawls, gzip and zstd compression by extension, and
// standard input; and it extracts the visible text of HTML. It is an I/O
// layer only: it does not normalise, shingle or judge the text it hands out.
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
// .warc is WARC and .wet is WET, and a directory is one document a file. Compression suffixes .gz and .zst
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
// # WARC and WET
//
// [FormatWARC] reads WARC files (ISO 28500, WARC/1.0 and WARC/1.1) as web
// crawlers write them and [FormatWET] the WET files of text Common Crawl
// derives from them. A file is either compressed record by record, each
// record one gzip member (Common Crawl's .warc.gz and .warc.wet.gz, WARC 1.1
// annex D), or plain; its first bytes tell which, not its name. A gzip
// stream holding many records in one member, and zstd, are not read.
//
// Each record is framed by its header's Content-Length and followed by line
// breaks (the standard's CRLF CRLF). The documents are, in WARC, the response
// records whose block is an HTTP response with an HTML Content-Type
// (text/html or application/xhtml+xml; without one, Common Crawl's
// WARC-Identified-Payload-Type), whatever their status; in WET, the
// conversion records. The other records — warcinfo, request, metadata,
// revisit, resource, continuation, responses that are not HTML or not HTTP
// — are read, checked and counted in Stats.Skipped; they get no Index. A
// document's Record.Raw is its whole WARC record, Record.Line its number
// among the file's records and Record.Offset the byte offset of its start
// as stored (of its gzip member, in a .warc.gz).
//
// The Parser takes the id from WARC-Record-ID (Options.IDField "record-id",
// or the default) or WARC-Target-URI ("uri"). A WET document's text is the
// conversion block. For a WARC response the Parser undoes the HTTP
// Transfer-Encoding (chunked) and Content-Encoding (gzip, deflate, br, zstd),
// each bounded by MaxRecordBytes, decodes the charset to UTF-8 (see below)
// and extracts the visible text of the HTML with [AppendHTMLText]. A
// payload cut short is an error unless the record has WARC-Truncated, as
// Common Crawl marks responses it truncated; then what decodes is used.
//
// Charsets: a body that is valid UTF-8 is taken as UTF-8 whatever it
// declares (mislabelled UTF-8 is common; other text that is valid UTF-8 is
// rare), unless it declares UTF-16 or ISO-2022-JP. Otherwise the charset is
// found as a browser finds it (byte order mark, Content-Type, <meta>, else
// windows-1252) and decoded with golang.org/x/net/html/charset, which knows
// every label and decoder of the WHATWG Encoding Standard; converting rather
// than rejecting keeps the pages of the many sites still served in legacy
// charsets. Only the charsets browsers refuse too (WHATWG's "replacement":
// ISO-2022-KR, HZ-GB-2312, …) are errors.
//
// A record that cannot be read — a corrupt or truncated gzip member, a
// malformed header, a Content-Length that does not match what follows, more
// than one record in a member — is an error naming the file, the record's
// number and its byte offset, and the reason, wrapping [ErrBadWARC] (or
// [ErrTooLarge] past MaxRecordBytes; a record that is not a document is
// skipped whatever its size). With SkipBad it is counted as bad and the
// Reader goes on at the next gzip member that decompresses to a WARC record,
// or the next line that starts a valid header: no record is dropped without
// being counted. Finding that member or line re-reads the file, so from
// standard input a bad record is an error even with SkipBad ([Spool] it).
// Payloads that cannot be decoded are the Parser's errors, wrapping
// [ErrBadHTTP].
//
// # HTML
//
// [AppendHTMLText] turns HTML into the text a reader sees of the page's own
// content, one line a block, dropping scripts, styles, navigation, page
// headers and footers and hidden elements; lines are kept so that a later
// step can drop the lines that many pages share. WARC responses always go
// through it; with Options.HTML, so do the texts of JSON Lines, Parquet, text
// lines and the files of a directory (the files first decoded from their
// charset as above).
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
// text lines and files as {"id":…,"text":…}). For WARC and WET inputs it
// writes a WARC file compressed record by record instead: each kept record's
// gzip member as stored, byte for byte, or the record of a plain WARC file as
// a new member ([KeptExtension] names the file's extension). Standard input
// cannot be read twice: [Spool] it to a temporary file first and read that
// instead.
package corpus
