package corpus

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fastjson"
)

// articlesPath is the evaluation data, by the relative path tests may use.
const articlesPath = "../../shared/data/articles/articles_1000.train"

// articlesJSONL converts the articles data set (lines "<id> <text>") into
// JSON Lines, encoded by encoding/json so escapes are realistic. It skips tb
// when the data is absent.
func articlesJSONL(tb testing.TB) []byte {
	tb.Helper()
	f, err := os.Open(articlesPath)
	if err != nil {
		tb.Skipf("evaluation data absent: %v", err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		id, text, _ := bytes.Cut(sc.Bytes(), []byte{' '})
		line, err := json.Marshal(struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}{string(id), string(text)})
		if err != nil {
			tb.Fatal(err)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// benchFile writes data repeated copies times to dir/name, compressed by the
// name's suffix, and returns the path and the uncompressed size.
func benchFile(b *testing.B, dir, name string, data []byte, copies int) (string, int64) {
	b.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	var w io.Writer = f
	var c io.Closer
	switch filepath.Ext(name) {
	case ".gz":
		zw := gzip.NewWriter(f)
		w, c = zw, zw
	case ".zst":
		zw, _ := zstd.NewWriter(f)
		w, c = zw, zw
	}
	for range copies {
		w.Write(data)
	}
	if c != nil {
		c.Close()
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, int64(len(data) * copies)
}

// splitLines returns the non-empty lines of data as records.
func splitLines(data []byte) []Record {
	var recs []Record
	for i, l := range bytes.Split(data, []byte{'\n'}) {
		if len(l) > 0 {
			recs = append(recs, Record{Raw: l, File: "bench", Line: int64(i + 1), Index: int64(len(recs)), Format: FormatJSONL})
		}
	}
	return recs
}

// The single-loop SWAR string scan that scanString replaced; kept here for
// BenchmarkScanString.

// The single-loop SWAR string scan that scanString replaced, kept for
// BenchmarkScanString.

func (s *scanner) scanStringSWAR(i int) (int, bool, bool) {
	b := s.b
	esc := false
	for {
		i = findSpecial(b, i)
		if i >= len(b) {
			return i, esc, s.fail(i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, esc, s.fail(i+1, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(b) || !isHex(b[j]) {
						return j, esc, s.fail(j, "invalid \\u escape")
					}
				}
				i += 6
			default:
				return i + 1, esc, s.fail(i+1, "invalid escape")
			}
		default:
			return i, esc, s.fail(i, "control character in string")
		}
	}
}

// findSpecial returns the offset of the first byte at or after i that
// specialInString reports, or len(b), testing eight bytes a step with SWAR
// has-zero-byte and has-less-than masks (in each the lowest set bit is exact,
// so the lowest bit of their union is the first special byte).
func findSpecial(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lsb * '"')
		e := x ^ (lsb * '\\')
		m := ((q - lsb) &^ q) | ((e - lsb) &^ e) | ((x - lsb*0x20) &^ x)
		if m &= msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && !specialInString(b[i]) {
		i++
	}
	return i
}

var (
	sinkInt   int
	sinkBytes []byte
)

// BenchmarkParseJSON compares the ways to pull id and text out of one JSON
// Lines record: this package's scanner (the one Parser uses), valyala/fastjson
// with one reused Parser, and encoding/json into a struct.
func BenchmarkParseJSON(b *testing.B) {
	data := articlesJSONL(b)
	recs := splitLines(data)
	b.Run("corpus", func(b *testing.B) {
		p, _ := NewParser(nil)
		var doc Document
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			for i := range recs {
				if err := p.Parse(&recs[i], &doc); err != nil {
					b.Fatal(err)
				}
				sinkInt += len(doc.Text) + len(doc.ID)
			}
		}
	})
	b.Run("fastjson", func(b *testing.B) {
		var p fastjson.Parser
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			for i := range recs {
				v, err := p.ParseBytes(recs[i].Raw)
				if err != nil {
					b.Fatal(err)
				}
				o, err := v.Object()
				if err != nil {
					b.Fatal(err)
				}
				text, err := o.Get("text").StringBytes()
				if err != nil {
					b.Fatal(err)
				}
				id := o.Get("id").GetStringBytes()
				sinkInt += len(text) + len(id)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		var doc struct {
			ID   json.RawMessage `json:"id"`
			Text string          `json:"text"`
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			for i := range recs {
				if err := json.Unmarshal(recs[i].Raw, &doc); err != nil {
					b.Fatal(err)
				}
				sinkInt += len(doc.Text) + len(doc.ID)
			}
		}
	})
}

// BenchmarkParseEscaped measures Parser on records dense in escapes: Go
// source as encoding/json writes it (a \n or \t every ~30 bytes) and
// Japanese-like text as Python's json.dumps writes it by default
// (ensure_ascii: every non-ASCII code point a \uXXXX escape).
func BenchmarkParseEscaped(b *testing.B) {
	var gosrc, ascii [][]byte
	files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	for i, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		rec, _ := json.Marshal(map[string]string{"id": f, "text": string(text)})
		gosrc = append(gosrc, rec)
		var e strings.Builder
		e.WriteString(`{"id":"d`)
		e.WriteString(strconv.Itoa(i))
		e.WriteString(`","text":"`)
		for j := range 1500 {
			if j%40 == 39 {
				e.WriteString(`\u3002`)
				continue
			}
			fmt.Fprintf(&e, `\u%04x`, 0x4e00+(j*7919+i)%2000)
		}
		e.WriteString(`"}`)
		ascii = append(ascii, []byte(e.String()))
	}
	for _, c := range []struct {
		name string
		recs [][]byte
	}{{"gosrc", gosrc}, {"ensure_ascii", ascii}} {
		b.Run(c.name, func(b *testing.B) {
			var size int64
			recs := make([]Record, len(c.recs))
			for i, r := range c.recs {
				recs[i] = Record{Raw: r}
				size += int64(len(r))
			}
			p, _ := NewParser(nil)
			var doc Document
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range recs {
					if err := p.Parse(&recs[i], &doc); err != nil {
						b.Fatal(err)
					}
					sinkInt += len(doc.Text)
				}
			}
		})
	}
}

// BenchmarkScanString measures the string scan that dominates parsing:
// scanString (IndexByte plus a control-character check) against one SWAR
// loop looking for all three special bytes. Strings are ASCII with one escape
// every 64 bytes.
func BenchmarkScanString(b *testing.B) {
	for _, size := range []int{16, 256, 4096, 65536} {
		text := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 01234567\\n"), size/64+1)[:size]
		if text[len(text)-1] == '\\' {
			text[len(text)-1] = 'x'
		}
		buf := append(append([]byte{'"'}, text...), '"')
		b.Run("indexbyte/"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			s := scanner{b: buf}
			for b.Loop() {
				end, _, _ := s.scanString(1, nil)
				sinkInt += end
			}
		})
		b.Run("swar/"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			s := scanner{b: buf}
			for b.Loop() {
				end, _, _ := s.scanStringSWAR(1)
				sinkInt += end
			}
		})
	}
}

// BenchmarkReader measures the Reader alone (read, decompress, cut lines) on
// the articles as JSON Lines repeated to about 12.7 MB; bytes are
// uncompressed bytes.
func BenchmarkReader(b *testing.B) {
	data := articlesJSONL(b)
	dir := b.TempDir()
	for _, name := range []string{"a.jsonl", "a.jsonl.gz", "a.jsonl.zst"} {
		path, size := benchFile(b, dir, name, data, 8)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var batch Batch
			for b.Loop() {
				r, err := NewReader([]string{path}, nil)
				if err != nil {
					b.Fatal(err)
				}
				for {
					err := r.Next(&batch)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					sinkInt += len(batch.Records)
				}
				r.Close()
			}
		})
	}
}

// BenchmarkReaderParse measures Reader plus Parser: sequentially on one
// goroutine, and as the pipeline the dedup driver runs (the Reader on one
// goroutine handing batches to one Parser per worker).
func BenchmarkReaderParse(b *testing.B) {
	data := articlesJSONL(b)
	dir := b.TempDir()
	for _, name := range []string{"a.jsonl", "a.jsonl.zst"} {
		path, size := benchFile(b, dir, name, data, 8)
		b.Run(name+"/sequential", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			p, _ := NewParser(nil)
			var batch Batch
			var doc Document
			for b.Loop() {
				r, err := NewReader([]string{path}, nil)
				if err != nil {
					b.Fatal(err)
				}
				for {
					err := r.Next(&batch)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					for i := range batch.Records {
						if err := p.Parse(&batch.Records[i], &doc); err != nil {
							b.Fatal(err)
						}
						sinkInt += len(doc.Text)
					}
				}
				r.Close()
			}
		})
		b.Run(name+"/pipeline2", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			const workers, batches = 2, 6
			free := make(chan *Batch, batches)
			for range batches {
				free <- new(Batch)
			}
			for b.Loop() {
				r, err := NewReader([]string{path}, nil)
				if err != nil {
					b.Fatal(err)
				}
				full := make(chan *Batch, batches)
				var wg sync.WaitGroup
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						p, _ := NewParser(nil)
						var doc Document
						n := 0
						for batch := range full {
							for i := range batch.Records {
								if p.Parse(&batch.Records[i], &doc) == nil {
									n += len(doc.Text)
								}
							}
							free <- batch
						}
						sinkBytes = doc.Text
						_ = n
					}()
				}
				for {
					batch := <-free
					err := r.Next(batch)
					if err == io.EOF {
						free <- batch
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					full <- batch
				}
				close(full)
				wg.Wait()
				r.Close()
			}
		})
	}
}

// shortRecords returns JSON Lines records of short web-like documents, as
// encoding/json writes them: {"id", "url", "text"}, the texts runs of 24 to 54
// consecutive words of the bundled news sample (20 to 50 word 5-grams, the
// lengths cycling), about 300 bytes a record. The text of short-document
// dedup runs (BENCHMARKS.md, "Short documents").
func shortRecords(tb testing.TB, count int) []byte {
	tb.Helper()
	f, err := os.Open("../testdata/articles_1000.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	docs := 0
	for docs < count {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				tb.Fatal(err)
			}
			f.Seek(0, io.SeekStart) // around again: more records than the sample has words
			sc = bufio.NewScanner(f)
			sc.Buffer(nil, 1<<24)
			continue
		}
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		words := strings.Fields(rec.Text)
		for i := 0; docs < count; docs++ {
			w := 24 + docs%31
			if i+w > len(words) {
				break
			}
			line, err := json.Marshal(struct {
				ID   string `json:"id"`
				URL  string `json:"url"`
				Text string `json:"text"`
			}{fmt.Sprintf("doc-%08d", docs), fmt.Sprintf("https://example.com/%s/%d", strings.ToLower(words[i]), docs), strings.Join(words[i:i+w], " ")})
			if err != nil {
				tb.Fatal(err)
			}
			out.Write(line)
			out.WriteByte('\n')
			i += w
		}
	}
	return out.Bytes()
}

// BenchmarkParseShort measures Parser.Parse per short record (shortRecords):
// the JSON part of the per-document overhead of signing short documents.
func BenchmarkParseShort(b *testing.B) {
	data := shortRecords(b, 10000)
	recs := splitLines(data)
	p, _ := NewParser(nil)
	var doc Document
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for i := range recs {
			if err := p.Parse(&recs[i], &doc); err != nil {
				b.Fatal(err)
			}
			sinkInt += len(doc.Text) + len(doc.ID)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/doc")
}
