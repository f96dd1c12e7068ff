package corpus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Format names how the records of an input are laid out.
//
// The zero value is [FormatAuto]. Format implements [flag.Value]-style Set and
// String so a command can bind it to a flag directly.
type Format string

// The formats. Their string values are what users type on the command line.
const (
	// FormatAuto picks the format of each input from its name; see [Options].
	FormatAuto Format = "auto"
	// FormatJSONL is JSON Lines: one JSON object a line.
	FormatJSONL Format = "jsonl"
	// FormatParquet is Apache Parquet; each row is one record.
	FormatParquet Format = "parquet"
	// FormatLines is plain text with one document a line; the id is the line number.
	FormatLines Format = "lines"
	// FormatDir is a directory with one document a file; the id is the file's
	// path relative to the directory, with '/' separators.
	FormatDir Format = "dir"
	// FormatWARC is a WARC file (WARC/1.0 or 1.1), plain or gzip-compressed
	// record by record: its HTML response records are the documents, their
	// text extracted from the HTML. See the package documentation.
	FormatWARC Format = "warc"
	// FormatWET is a WET file, the WARC files of plain text Common Crawl
	// makes of its crawls: its conversion records are the documents.
	FormatWET Format = "wet"
)

// Formats lists the valid formats in the order a usage message should show them.
var Formats = []Format{FormatAuto, FormatJSONL, FormatParquet, FormatLines, FormatDir, FormatWARC, FormatWET}

// String returns the format's name; the zero value prints as "auto".
func (f Format) String() string {
	if f == "" {
		return string(FormatAuto)
	}
	return string(f)
}

// Set parses a format name (case-insensitive); it lets *Format be a pflag.Value.
func (f *Format) Set(s string) error {
	v := Format(strings.ToLower(strings.TrimSpace(s)))
	if !v.valid() {
		return fmt.Errorf("%w: %q (want one of %s)", ErrUnknownFormat, s, formatList())
	}
	*f = v
	return nil
}

// Type returns "format"; it lets *Format be a pflag.Value.
func (f *Format) Type() string { return "format" }

func (f Format) valid() bool {
	switch f {
	case "", FormatAuto, FormatJSONL, FormatParquet, FormatLines, FormatDir, FormatWARC, FormatWET:
		return true
	}
	return false
}

func formatList() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Default values of [Options] fields.
const (
	DefaultIDField        = "id"
	DefaultTextField      = "text"
	DefaultMaxRecordBytes = 64 << 20
	DefaultBatchBytes     = 1 << 20
)

// maxRecordLimit bounds MaxRecordBytes so that line buffers (up to about twice
// the limit) stay addressable and a typo cannot ask for terabytes.
const maxRecordLimit = 1 << 30

// Options configures a [Reader], a [Parser], a [Writer] and [CopyKept].
//
// A nil *Options or a zero field means the default. Options values are plain
// data: copy them freely and share them read-only between goroutines; the
// Reader, Parser and Writer keep their own copy.
type Options struct {
	// Format is the layout of the inputs. Under FormatAuto each input is judged
	// by its name after peeling compression suffixes: .jsonl, .ndjson and .json
	// are JSON Lines, .parquet is Parquet, .txt is one document a line, .warc
	// is WARC and .wet is WET (so x.warc.gz and Common Crawl's x.warc.wet.gz),
	// and a directory is one document a file (FormatDir). Any other name is an error
	// wrapping ErrUnknownFormat. Standard input ("-") and spooled files (names
	// ending in SpoolSuffix) are JSON Lines under FormatAuto.
	//
	// Under FormatDir every regular file beneath the directory is one
	// document, walked in lexical order of the '/'-separated relative paths
	// that serve as ids; names starting with '.' are skipped, symbolic links
	// to files are followed (to directories, not), and files ending in .gz
	// or .zst are decompressed (the id keeps the suffix).
	//
	// An explicit format applies to every input. A directory given with an
	// explicit FormatJSONL, FormatParquet or FormatLines stands for every file
	// beneath it (shards), read in that format in the same order, skipping
	// names that start with '.' or '_' (such as _SUCCESS); a file given with
	// FormatDir is one document named by its base name.
	//
	// Default: FormatAuto.
	Format Format

	// IDField is the name of the JSON key or Parquet column holding the
	// document id. A missing or null id becomes the 1-based line (or row)
	// number.
	//
	// For WARC and WET records it names the header field that is the id:
	// IDFieldRecordID ("record-id", WARC-Record-ID, also chosen by the default
	// "id") or IDFieldURI ("uri", WARC-Target-URI); any other value is an
	// error when an input is WARC or WET. Default: "id".
	IDField string

	// TextField is the name of the JSON key or Parquet column holding the
	// document text; it must be a string. Default: "text".
	TextField string

	// KeepField optionally names a numeric JSON key or Parquet column whose
	// value a keep policy uses to choose which near duplicate survives (for
	// example a quality score). A missing or null value leaves
	// Document.HasKeep false. Default: "" (none).
	KeepField string

	// MaxRecordBytes bounds one record: a JSON or text line without its line
	// terminator, a whole file under FormatDir, a Parquet row encoded as
	// JSON, or a WARC document record uncompressed (WARC records that are not
	// documents are skipped whatever their size); the Parser also bounds a
	// decoded HTTP body by it. A longer record is an error wrapping ErrTooLarge that names the
	// file and line (or, with SkipBad, a skipped and counted record). The
	// Reader's buffers grow to about twice this size for such a line.
	// Default: 64 MiB; at most 1 GiB.
	MaxRecordBytes int

	// SkipBad makes the Reader skip records over MaxRecordBytes and count them
	// in Stats.Bad instead of failing; callers likewise skip documents whose
	// Parse fails (the Parser counts them). Default: false (fail on the first
	// bad record).
	SkipBad bool

	// BatchBytes is the target size, in bytes of raw record data, of one
	// Batch. Larger batches amortise hand-offs between goroutines; smaller
	// ones bound memory per batch in flight. A single record larger than this
	// still fits in a batch of its own. Default: 1 MiB.
	BatchBytes int

	// Stdin is read for the input "-". Default: os.Stdin.
	Stdin io.Reader

	// HTML makes the Parser take the text of JSON Lines and Parquet records,
	// of text lines and of the files of a directory as HTML and replace it by
	// its visible text (AppendHTMLText). Files of a directory are first
	// decoded from their charset, as WARC responses are; text from JSON and
	// Parquet is already Unicode. WARC responses are always extracted and WET
	// text never, whatever HTML says. Default: false.
	HTML bool
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// safe to call on a nil *Options, in which case it returns a new Options.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.Format == "" {
		o.Format = FormatAuto
	}
	if o.IDField == "" {
		o.IDField = DefaultIDField
	}
	if o.TextField == "" {
		o.TextField = DefaultTextField
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	return o
}

// Validate reports the first field that breaks its rule, wrapping
// ErrBadOptions. It treats zero fields as their defaults, so it may be called
// before or after EnsureDefaults.
func (o *Options) Validate() error {
	c := o.withDefaults()
	if !c.Format.valid() {
		return fmt.Errorf("%w: Format %q is not one of %s", ErrBadOptions, c.Format, formatList())
	}
	for _, f := range []struct{ name, v string }{
		{"IDField", c.IDField}, {"TextField", c.TextField}, {"KeepField", c.KeepField},
	} {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s %q is not valid UTF-8", ErrBadOptions, f.name, f.v)
		}
	}
	if c.IDField == c.TextField {
		return fmt.Errorf("%w: IDField and TextField are both %q", ErrBadOptions, c.IDField)
	}
	if c.KeepField != "" && (c.KeepField == c.TextField || c.KeepField == c.IDField) {
		return fmt.Errorf("%w: KeepField %q is also the id or text field", ErrBadOptions, c.KeepField)
	}
	if c.MaxRecordBytes < 1 || c.MaxRecordBytes > maxRecordLimit {
		return fmt.Errorf("%w: MaxRecordBytes %d is outside [1, %d]", ErrBadOptions, c.MaxRecordBytes, maxRecordLimit)
	}
	if c.BatchBytes < 1 || c.BatchBytes > maxRecordLimit {
		return fmt.Errorf("%w: BatchBytes %d is outside [1, %d]", ErrBadOptions, c.BatchBytes, maxRecordLimit)
	}
	if c.Format == FormatWARC || c.Format == FormatWET {
		return c.validateWARC(c.Format)
	}
	return nil
}

// withDefaults returns a defaulted copy of o without touching o.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	return c
}

// compression is one layer of compression peeled off a file name.
type compression uint8

const (
	compGzip compression = iota + 1
	compZstd
)

// String returns the layer's name: "gzip", "zstd" or "none".
func (c compression) String() string {
	switch c {
	case compGzip:
		return "gzip"
	case compZstd:
		return "zstd"
	}
	return "none"
}

// peelCompression strips compression suffixes from name and returns the rest
// and the layers to undo, outermost (last suffix) first.
func peelCompression(name string) (string, []compression) {
	var layers []compression
	for {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".gz":
			layers = append(layers, compGzip)
		case ".zst":
			layers = append(layers, compZstd)
		default:
			return name, layers
		}
		name = name[:len(name)-len(filepath.Ext(name))]
	}
}

// formatByName returns the format FormatAuto picks for a file name whose
// compression suffixes were already peeled, or "" when it knows none.
func formatByName(name string) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson", ".json":
		return FormatJSONL
	case ".parquet":
		return FormatParquet
	case ".txt":
		return FormatLines
	case ".warc":
		return FormatWARC
	case ".wet":
		return FormatWET
	}
	return ""
}
