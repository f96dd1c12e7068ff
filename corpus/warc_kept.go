package corpus

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// KeptExtension returns the file name extension of the kept records that
// CopyKept writes for inputs read with opts: ".warc.wet.gz" when they are
// all WET (so that the file reads back as WET by its name, as Common
// Crawl's do), ".warc.gz" when they are WARC (or WARC and WET), ".jsonl"
// otherwise. It resolves the inputs as NewReader does (and fails as it
// would), and fails when WARC and other inputs are mixed.
func KeptExtension(inputs []string, opts *Options) (string, error) {
	r, err := NewReader(inputs, opts)
	if err != nil {
		return "", err
	}
	defer r.Close()
	formats := make([]Format, len(r.inputs))
	for i, in := range r.inputs {
		formats[i] = in.format
	}
	return keptExtension(formats)
}

// KeptExtensionOf is KeptExtension for files that are not opened (remote
// ones, say): each file's format is format, or under FormatAuto the one its
// name says (FileFormat).
func KeptExtensionOf(files []string, format Format) (string, error) {
	formats := make([]Format, len(files))
	for i, f := range files {
		var err error
		if formats[i], err = FileFormat(f, format); err != nil {
			return "", err
		}
	}
	return keptExtension(formats)
}

// FileFormat returns the format a Reader reads the file path in when given
// format f: f itself, or under FormatAuto (and "") the format its name says
// once compression suffixes are peeled (see Options.Format), without
// opening it. A name that says none is an error wrapping ErrUnknownFormat.
func FileFormat(path string, f Format) (Format, error) {
	if f != "" && f != FormatAuto {
		return f, nil
	}
	in, err := fileInput(path, FormatAuto, -1)
	return in.format, err
}

// keptExtension is KeptExtension for inputs of the given formats.
func keptExtension(formats []Format) (string, error) {
	warc, wet := 0, 0
	for _, f := range formats {
		switch f {
		case FormatWARC:
			warc++
		case FormatWET:
			wet++
		}
	}
	switch {
	case warc+wet == 0:
		return ".jsonl", nil
	case warc+wet < len(formats):
		return "", fmt.Errorf("%w: kept records of WARC or WET inputs and of other inputs cannot go to one file", ErrUnsupported)
	case warc == 0:
		return ".warc.wet.gz", nil
	}
	return ".warc.gz", nil
}

// keptWARC reports whether the Reader's inputs are all WARC or WET, and
// fails when only some are.
func (r *Reader) keptWARC() (bool, error) {
	n := 0
	for _, in := range r.inputs {
		if in.format == FormatWARC || in.format == FormatWET {
			n++
		}
	}
	if n > 0 && n < len(r.inputs) {
		return false, fmt.Errorf("%w: kept records of WARC or WET inputs and of other inputs cannot go to one file", ErrUnsupported)
	}
	return n > 0, nil
}

// copyKeptWARC is CopyKept for WARC and WET inputs: it writes the kept
// records to dst as a WARC file compressed record by record.
func copyKeptWARC(ctx context.Context, dst io.Writer, r *Reader, keep Selection) (int64, error) {
	want, last := keep.Len(), keep.Last()
	r.keepStored = keep
	w := bufio.NewWriterSize(dst, 256<<10)
	var zw *gzip.Writer
	var n int64
	var b Batch
	done := false
	for !done {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		err := r.Next(&b)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
		for i := range b.Records {
			rec := &b.Records[i]
			if rec.Index > last {
				done = true
				break
			}
			if !keep.Contains(rec.Index) {
				continue
			}
			if rec.stored != nil {
				// The member as stored, byte for byte.
				_, err = w.Write(rec.stored)
			} else {
				// A record of a plain WARC file: a member of its own.
				if zw == nil {
					zw = gzip.NewWriter(w)
				} else {
					zw.Reset(w)
				}
				if _, err = zw.Write(rec.Raw); err == nil {
					err = zw.Close()
				}
			}
			if err != nil {
				return n, fmt.Errorf("corpus: write: %w", err)
			}
			n++
		}
	}
	if err := w.Flush(); err != nil {
		return n, fmt.Errorf("corpus: write: %w", err)
	}
	if n != want {
		return n, fmt.Errorf("corpus: wrote %d of %d kept records: the inputs changed since they were first read", n, want)
	}
	return n, nil
}
