// Command neardup-load measures the online service: it generates a
// synthetic corpus, bulk-builds an index of it (timed: documents per second,
// bytes per document), then serves that index on loopback and drives it with
// concurrent clients for a fixed time per phase, reporting throughput and
// latency percentiles of checks (POST /v1/check) and check-and-inserts
// (POST /v1/documents). Every phase is bounded in time; nothing leaves
// 127.0.0.1.
//
// Usage:
//
//	neardup-load [flags]
//	  --docs 1000000     documents in the index
//	  --clients 32       concurrent clients
//	  --duration 10s     length of each load phase
//	  --dir DIR          work directory (corpus and index); reused when it
//	                     holds a corpus of the same size (default: a temporary
//	                     directory, removed at the end)
//	  --bits 32          slot width of the index (8 for the compact layout)
//	  --addr HOST:PORT   drive an already running server instead (no build);
//	                     loopback only (127.0.0.0/8, ::1 or localhost)
//
// The documents are synthetic: words drawn from a Zipf distribution over a
// 50,000-word vocabulary, 100 to 200 words each (about 1 KB). Check requests
// are half near duplicates of indexed documents (two words changed) and half
// new texts; check-and-inserts are 80% new texts and 20% near duplicates.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/indexload"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/server"
)

type config struct {
	docs       int
	clients    int
	duration   time.Duration
	dir        string
	bits       int
	cacheSize  int64
	addr       string
	phases     string
	dupRate    float64
	seed       uint64
	jsonOut    string
	cpuProfile string
	trace      string
	cold       bool
	memTable   int
	checkRate  float64
	insertRate float64
	out        io.Writer // progress and results
	errOut     io.Writer // the first request error of a phase
}

// validate checks the flags: positive sizes, and an --addr on loopback, so
// that the load never leaves the machine.
func (c *config) validate() error {
	switch {
	case c.docs < 1:
		return fmt.Errorf("--docs %d: must be at least 1", c.docs)
	case c.clients < 1:
		return fmt.Errorf("--clients %d: must be at least 1", c.clients)
	case c.duration <= 0:
		return fmt.Errorf("--duration %v: must be positive", c.duration)
	case c.checkRate < 0 || c.insertRate < 0:
		return fmt.Errorf("--check-rate %g, --insert-rate %g: must not be negative", c.checkRate, c.insertRate)
	}
	if c.addr != "" {
		if err := checkLoopback(c.addr); err != nil {
			return fmt.Errorf("--addr %s: %w", c.addr, err)
		}
	}
	return nil
}

// checkLoopback accepts host:port whose host is a loopback address or
// "localhost"; any other name is refused rather than resolved, since it
// could name another machine.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("host %q is not a loopback address; the load generator drives loopback only", host)
}

func main() {
	var c config
	flag.IntVar(&c.docs, "docs", 1_000_000, "documents in the index")
	flag.IntVar(&c.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "length of each load phase")
	flag.StringVar(&c.dir, "dir", "", "work directory for the corpus and the index (default: a temporary one, removed at the end)")
	flag.IntVar(&c.bits, "bits", 32, "bits per signature slot")
	cache := flag.Int64("cache-mib", 1024, "block cache of the served index, MiB")
	memtable := flag.Int("memtable-mib", 0, "memtable size of the served index, MiB (default: the index's default)")
	flag.StringVar(&c.addr, "addr", "", "drive this running server instead of building and serving one")
	flag.StringVar(&c.phases, "phases", "build,check,insert", "phases to run: build, check (max throughput and at --check-rate), insert (the same with --insert-rate)")
	flag.Float64Var(&c.checkRate, "check-rate", 10000, "offered rate of the paced check phase, requests/s (0: skip it)")
	flag.Float64Var(&c.insertRate, "insert-rate", 3000, "offered rate of the paced check-and-insert phase, requests/s (0: skip it)")
	flag.Float64Var(&c.dupRate, "dup-rate", 0.5, "fraction of check requests that are near duplicates of indexed documents")
	flag.Uint64Var(&c.seed, "seed", 1, "corpus seed")
	flag.BoolVar(&c.cold, "cold", false, "do not preload the index into the block cache before the load phases")
	flag.StringVar(&c.jsonOut, "json", "", "also write the results as JSON to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the load phases (server and clients) to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the load phases to this file")
	flag.Parse()
	c.cpuProfile = *cpuProfile
	c.trace = *traceFile
	c.cacheSize = *cache << 20
	c.memTable = *memtable << 20
	c.out, c.errOut = os.Stdout, os.Stderr
	err := c.validate()
	if err == nil {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "neardup-load:", err)
		os.Exit(1)
	}
}

// Results of a run, as -json writes them.
type results struct {
	Machine   string         `json:"machine"`
	Docs      int            `json:"docs"`
	Bits      int            `json:"bits"`
	Clients   int            `json:"clients"`
	Build     *buildResult   `json:"build,omitempty"`
	Phases    []*phaseResult `json:"phases,omitempty"`
	GoVersion string         `json:"go"`
}

type buildResult struct {
	Documents     int64   `json:"documents"`
	Seconds       float64 `json:"seconds"`
	DocsPerSecond float64 `json:"docs_per_second"`
	Bytes         int64   `json:"bytes"`
	BytesPerDoc   float64 `json:"bytes_per_doc"`
	CorpusBytes   int64   `json:"corpus_bytes"`
}

type phaseResult struct {
	Name       string  `json:"name"`
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	P999ms     float64 `json:"p999_ms"`
	Duplicates int64   `json:"duplicates"`
	CPUPercent float64 `json:"cpu_percent"`
}

func run(c config) (runErr error) {
	res := &results{Docs: c.docs, Bits: c.bits, Clients: c.clients, GoVersion: runtime.Version(),
		Machine: fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}
	gen := newGenerator(c.seed)
	ctx := context.Background()
	base := "http://" + c.addr
	var served *index.DB // the index this process serves, if any
	if c.addr == "" {
		dir := c.dir
		if dir == "" {
			tmp, err := os.MkdirTemp("", "neardup-load-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		}
		idxDir := filepath.Join(dir, fmt.Sprintf("index-%d-b%d", c.docs, c.bits))
		if strings.Contains(c.phases, "build") {
			corpusPath, size, err := ensureCorpus(c.out, dir, gen, c.docs)
			if err != nil {
				return err
			}
			br, err := build(ctx, c.out, idxDir, corpusPath, c.bits)
			if err != nil {
				return err
			}
			br.CorpusBytes = size
			res.Build = br
			fmt.Fprintf(c.out, "build: %d documents in %.1fs = %.0f documents/s; index %d bytes = %.0f bytes/document (corpus %d MB)\n",
				br.Documents, br.Seconds, br.DocsPerSecond, br.Bytes, br.BytesPerDoc, size>>20)
		}
		if !strings.Contains(c.phases, "check") && !strings.Contains(c.phases, "insert") {
			return writeJSON(c.jsonOut, res)
		}
		idx, err := index.Open(idxDir, &index.Options{CacheSize: c.cacheSize, MemTableSize: c.memTable})
		if err != nil {
			return err
		}
		served = idx
		defer idx.Close()
		st, _ := idx.Stats(ctx)
		if st.Documents == 0 {
			return fmt.Errorf("the index in %s is empty: run the build phase", idxDir)
		}
		if !c.cold {
			t0 := time.Now()
			n, err := idx.Preload(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.out, "preload: %d MB of the index read into the block cache in %.1fs\n", n>>20, time.Since(t0).Seconds())
		}
		s, err := server.New(idx, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sctx, stop := context.WithCancel(ctx)
		served := make(chan error, 1)
		go func() { served <- s.Serve(sctx, ln) }()
		defer func() { stop(); <-served }()
		base = "http://" + ln.Addr().String()
		warm(ctx, base, gen, c)
	}
	// The profile and the trace get their names only when complete (and
	// the run succeeded).
	if c.cpuProfile != "" {
		f, err := atomicfile.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Abort()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			if runErr == nil {
				runErr = f.Commit()
			}
		}()
	}
	if c.trace != "" {
		f, err := atomicfile.Create(c.trace)
		if err != nil {
			return err
		}
		defer f.Abort()
		if err := trace.Start(f); err != nil {
			return err
		}
		defer func() {
			trace.Stop()
			if runErr == nil {
				runErr = f.Commit()
			}
		}()
	}
	for _, phase := range []struct {
		name  string
		rate  float64
		paced bool
	}{{"check", 0, false}, {"check", c.checkRate, true}, {"insert", c.insertRate, true}, {"insert", 0, false}} {
		if !strings.Contains(c.phases, phase.name) || phase.paced && phase.rate <= 0 {
			continue
		}
		pr, err := load(ctx, base, gen, c, phase.name, phase.rate)
		if err != nil {
			return err
		}
		res.Phases = append(res.Phases, pr)
		fmt.Fprintf(c.out, "%-16s: %d requests in %.1fs = %.0f/s (%d errors, %d duplicates); latency p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms; CPU %.0f%%\n",
			pr.Name, pr.Requests, pr.Seconds, pr.PerSecond, pr.Errors, pr.Duplicates, pr.P50ms, pr.P99ms, pr.P999ms, pr.CPUPercent)
	}
	if served != nil {
		m := served.Metrics()
		fmt.Fprintf(c.out, "index: %d queries, %d commits, %d sync barriers (answers that waited for a document to be durable)\n", m.Queries, m.Commits, m.SyncBarriers)
	}
	return writeJSON(c.jsonOut, res)
}

func writeJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// generator makes reproducible documents: document i's words come from a
// PCG stream seeded by (seed, i), so any document can be remade to query a
// near copy of it.
type generator struct {
	seed  uint64
	vocab []string
}

func newGenerator(seed uint64) *generator {
	rng := rand.New(rand.NewPCG(seed, 0))
	vocab := make([]string, 50000)
	seen := map[string]bool{}
	for i := range vocab {
		for {
			var b strings.Builder
			for range 2 + rng.IntN(8) {
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
			if w := b.String(); !seen[w] {
				seen[w] = true
				vocab[i] = w
				break
			}
		}
	}
	return &generator{seed: seed, vocab: vocab}
}

// words returns document i's words: 100 to 200 of them, Zipf-distributed.
func (g *generator) words(i uint64) []string {
	rng := rand.New(rand.NewPCG(g.seed, i+1))
	z := rand.NewZipf(rng, 1.07, 2, uint64(len(g.vocab)-1))
	w := make([]string, 100+rng.IntN(101))
	for j := range w {
		w[j] = g.vocab[z.Uint64()]
	}
	return w
}

// text of document i; with changes > 0, a near copy with that many words
// replaced (drawn from rng).
func (g *generator) text(i uint64, changes int, rng *rand.Rand) string {
	w := g.words(i)
	for range changes {
		w[rng.IntN(len(w))] = g.vocab[rng.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

// ensureCorpus writes the JSONL corpus of n documents, unless dir already
// holds it.
func ensureCorpus(log io.Writer, dir string, g *generator, n int) (string, int64, error) {
	path := filepath.Join(dir, fmt.Sprintf("corpus-%d-s%d.jsonl", n, g.seed))
	if st, err := os.Stat(path); err == nil {
		return path, st.Size(), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	start := time.Now()
	f, err := atomicfile.Create(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Abort()
	w := bufio.NewWriterSize(f, 1<<20)
	// Generate in parallel, write in order.
	const chunk = 4096
	workers := runtime.GOMAXPROCS(0)
	type part struct {
		start int
		data  []byte
	}
	out := make([]chan part, workers)
	for k := range out {
		out[k] = make(chan part, 2)
		go func() {
			for s := k * chunk; s < n; s += workers * chunk {
				var b bytes.Buffer
				for i := s; i < min(s+chunk, n); i++ {
					line, _ := json.Marshal(map[string]string{"id": docID(uint64(i)), "text": g.text(uint64(i), 0, nil)})
					b.Write(line)
					b.WriteByte('\n')
				}
				out[k] <- part{s, b.Bytes()}
			}
			close(out[k])
		}()
	}
	for s, k := 0, 0; s < n; s, k = s+chunk, (k+1)%workers {
		p := <-out[k]
		w.Write(p.data)
	}
	if err := w.Flush(); err != nil {
		return "", 0, err
	}
	if err := f.Commit(); err != nil {
		return "", 0, err
	}
	st, _ := os.Stat(path)
	fmt.Fprintf(log, "corpus: %d documents, %d MB, generated in %.1fs\n", n, st.Size()>>20, time.Since(start).Seconds())
	return path, st.Size(), nil
}

func docID(i uint64) string { return fmt.Sprintf("d%07d", i) }

// build bulk-builds the index from the corpus, as `neardup index build`
// does, unless it is already built.
func build(ctx context.Context, out io.Writer, dir, corpusPath string, bits int) (*buildResult, error) {
	if _, err := os.Stat(filepath.Join(dir, "built")); err == nil {
		db, err := index.Open(dir, nil)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		st, _ := db.Stats(ctx)
		b, _ := os.ReadFile(filepath.Join(dir, "built"))
		var br buildResult
		json.Unmarshal(b, &br)
		br.Bytes, br.BytesPerDoc = st.Bytes, float64(st.Bytes)/float64(st.Documents)
		fmt.Fprintf(out, "build: reusing %s\n", dir)
		return &br, nil
	}
	os.RemoveAll(dir)
	db, err := index.Open(dir, &index.Options{Params: minhash.Params{Bits: bits}, NoSync: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st, err := indexload.Build(ctx, db, []string{corpusPath}, nil)
	if err != nil {
		return nil, err
	}
	if err := db.Flush(ctx, false); err != nil {
		return nil, err
	}
	ist, err := db.Stats(ctx)
	if err != nil {
		return nil, err
	}
	br := &buildResult{Documents: st.Documents, Seconds: st.Seconds, DocsPerSecond: float64(st.Documents) / st.Seconds,
		Bytes: ist.Bytes, BytesPerDoc: float64(ist.Bytes) / float64(ist.Documents)}
	b, _ := json.Marshal(br)
	return br, atomicfile.WriteFile(filepath.Join(dir, "built"), b)
}

// warm reads the index once through the server, so that the measured phases
// run with a warm block cache, as a long-running service does.
func warm(ctx context.Context, base string, g *generator, c config) {
	start := time.Now()
	cl := server.NewClient(base, "", nil)
	var wg sync.WaitGroup
	var next atomic.Int64
	n := int64(min(c.docs, 20000))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(7, uint64(next.Load())))
			for i := next.Add(1); i < n; i = next.Add(1) {
				cl.Check(ctx, server.Document{Text: g.text(uint64(rng.IntN(c.docs)), 2, rng)}, server.Query{})
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(c.out, "warm-up: %d checks in %.1fs\n", n, time.Since(start).Seconds())
}

// load runs one phase for c.duration with c.clients goroutines: with rate 0
// each sends its requests back to back (closed loop: the maximum
// throughput, latency then being mostly queueing), otherwise each sends at
// rate/c.clients per second on a fixed schedule (open loop), and a request's
// latency counts from when it was due, so that a slow answer is not hidden
// by the requests it delayed (no coordinated omission).
func load(ctx context.Context, base string, g *generator, c config, phase string, rate float64) (*phaseResult, error) {
	// Bodies are made before the clock starts, so the clients spend their
	// CPU on HTTP, not on making texts.
	perClient := 2000
	if phase == "insert" {
		perClient = max(2000, int(8000*c.duration.Seconds()/float64(c.clients)))
		if rate > 0 {
			perClient = int(1.1*rate*c.duration.Seconds()/float64(c.clients)) + 10
		}
	}
	bodies := make([][][]byte, c.clients)
	nonce := uint64(time.Now().UnixNano()) << 20 // new texts differ from run to run
	var wg sync.WaitGroup
	prep := time.Now()
	for k := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(k)+100, uint64(len(phase))))
			for j := range perClient {
				var d server.Document
				dup := rng.Float64() < c.dupRate
				if phase == "insert" {
					dup = rng.Float64() < 0.2
					d.ID = fmt.Sprintf("load-%d-%d-%d", time.Now().UnixNano(), k, j)
				}
				if dup {
					d.Text = g.text(uint64(rng.IntN(c.docs)), 2, rng)
				} else {
					d.Text = g.text(nonce+uint64(k*perClient+j), 0, nil)
				}
				b, _ := json.Marshal(d)
				bodies[k] = append(bodies[k], b)
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(c.out, "%s: %d request bodies prepared in %.1fs\n", phase, c.clients*perClient, time.Since(prep).Seconds())

	path := "/v1/check"
	if phase == "insert" {
		path = "/v1/documents"
	}
	host := strings.TrimPrefix(base, "http://")
	lat := make([][]time.Duration, c.clients)
	var errs, dups atomic.Int64
	var firstErr atomic.Value
	cpu0 := cpuSeconds()
	deadline := time.Now().Add(c.duration)
	start := time.Now()
	for k := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := &rawConn{host: host}
			defer conn.close()
			lat[k] = make([]time.Duration, 0, 1<<16)
			var interval time.Duration
			due := start
			if rate > 0 {
				interval = time.Duration(float64(c.clients) / rate * float64(time.Second))
				due = start.Add(interval * time.Duration(k) / time.Duration(c.clients)) // staggered
			}
			last := false
			for b := 0; !last && time.Now().Before(deadline); b++ {
				if b == len(bodies[k]) {
					b = 0
					if phase == "insert" {
						break // no fresh ids left
					}
				}
				t0 := time.Now()
				if rate > 0 {
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
					t0 = due
					due = due.Add(interval)
					last = !due.Before(deadline)
				}
				status, body, err := conn.post(path, bodies[k][b])
				if err == nil && status >= 300 && status != 409 {
					err = fmt.Errorf("%s: %d %s", path, status, body)
				}
				if err == nil && bytes.Contains(body, []byte(`"status":"duplicate"`)) {
					dups.Add(1)
				}
				lat[k] = append(lat[k], time.Since(t0))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpu0
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return nil, errors.New("no requests completed")
	}
	q := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	if e := firstErr.Load(); e != nil {
		fmt.Fprintln(c.errOut, "first error:", e)
	}
	name := phase + " (max)"
	if rate > 0 {
		name = fmt.Sprintf("%s @%.0f/s", phase, rate)
	}
	return &phaseResult{Name: name, Requests: int64(len(all)), Errors: errs.Load(), Seconds: elapsed,
		PerSecond: float64(len(all)) / elapsed, P50ms: q(0.50), P99ms: q(0.99), P999ms: q(0.999), Duplicates: dups.Load(),
		CPUPercent: 100 * cpu / elapsed}, nil
}

// rawConn is a minimal keep-alive HTTP/1.1 client connection, as load
// generators such as wrk use: on a 2-core machine the generator shares the
// CPU with the server, and net/http's client costs about as much as the
// server's request handling. It sends a POST with a JSON body and reads a
// response with a Content-Length (the server always sets it).
type rawConn struct {
	host string
	c    net.Conn
	br   *bufio.Reader
	req  []byte
	body []byte
}

func (rc *rawConn) close() {
	if rc.c != nil {
		rc.c.Close()
		rc.c = nil
	}
}

func (rc *rawConn) post(path string, body []byte) (int, []byte, error) {
	if rc.c == nil {
		c, err := net.Dial("tcp", rc.host)
		if err != nil {
			return 0, nil, err
		}
		rc.c, rc.br = c, bufio.NewReaderSize(c, 16<<10)
	}
	rc.req = append(rc.req[:0], "POST "...)
	rc.req = append(rc.req, path...)
	rc.req = append(rc.req, " HTTP/1.1\r\nHost: "...)
	rc.req = append(rc.req, rc.host...)
	rc.req = append(rc.req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	rc.req = strconv.AppendInt(rc.req, int64(len(body)), 10)
	rc.req = append(rc.req, "\r\n\r\n"...)
	rc.req = append(rc.req, body...)
	if _, err := rc.c.Write(rc.req); err != nil {
		rc.close()
		return 0, nil, err
	}
	status, n, keep := 0, -1, true
	for first := true; ; first = false {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			rc.close()
			return 0, nil, err
		}
		if first {
			if len(line) < 12 {
				rc.close()
				return 0, nil, fmt.Errorf("bad status line %q", line)
			}
			status, _ = strconv.Atoi(string(line[9:12]))
			continue
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok {
			switch strings.ToLower(string(k)) {
			case "content-length":
				n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			case "connection":
				keep = !bytes.EqualFold(bytes.TrimSpace(v), []byte("close"))
			}
		}
	}
	if n < 0 {
		rc.close()
		return status, nil, fmt.Errorf("response without Content-Length")
	}
	rc.body = slices.Grow(rc.body[:0], n)[:n]
	if _, err := io.ReadFull(rc.br, rc.body); err != nil {
		rc.close()
		return status, nil, err
	}
	if !keep {
		rc.close()
	}
	return status, rc.body, nil
}

// cpuSeconds returns the CPU time (user and system) the process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
