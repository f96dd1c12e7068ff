package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/faultfs"
	"github.com/neardup/neardup/internal/indexload"
)

// The fault-injection tests of the service: a damaged sstable, a full disk
// and a data directory made read-only, each while serving. In every case: no
// crash, every acknowledged write kept, errors that say what happened on one
// line, /readyz 503 while the index is unhealthy, and metrics counting it.

// faultLog is the server's and the index's log, kept to check that each
// event is one line.
type faultLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *faultLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the log's lines; each must be one slog record.
func (l *faultLog) lines(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "time=") {
			t.Errorf("log line %q is not a record of its own: an event spread over several lines", line)
		}
		out = append(out, line)
	}
	return out
}

// count returns the number of log lines that contain s.
func (l *faultLog) count(t *testing.T, s string) int {
	n := 0
	for _, line := range l.lines(t) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// faultServer serves idx on an httptest listener, logging to log.
func faultServer(t *testing.T, idx index.Index, log *faultLog) *testServer {
	t.Helper()
	loadSpec(t)
	s, err := New(idx, &Options{Logger: slog.New(slog.NewTextHandler(log, nil)), RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &testServer{t: t, s: s, idx: idx, url: hs.URL}
}

// wantReady fails unless /readyz answers status, its message holding what.
func (ts *testServer) wantReady(status int, what string) {
	ts.t.Helper()
	r := ts.call(http.MethodGet, "/readyz", "", nil)
	if r.status != status || !strings.Contains(string(r.body), what) {
		ts.t.Errorf("/readyz: %d %s; want %d with %q", r.status, r.body, status, what)
	}
}

// articles returns the bundled sample's documents.
func articles(t *testing.T) []Document {
	t.Helper()
	data, err := os.ReadFile("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var docs []Document
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d Document
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestFaultCorruptTable builds an index of the bundled articles, flips 64
// bytes in the middle of its largest sstable, and serves it: the checks
// that read the damaged block answer 500 internal (on one line naming the
// file), the others answer as before; /readyz turns 503 and
// neardup_index_corruptions_total counts; the log reports the corruption
// once, on one line. Before, the first such check killed the process.
func TestFaultCorruptTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	db, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := indexload.Build(context.Background(), db, []string{"../testdata/articles_1000.jsonl"}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	damaged := flipBytes(t, dir, 64)

	log := &faultLog{}
	db, err = index.Open(dir, &index.Options{CacheSize: 8 << 20, MustExist: true, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts := faultServer(t, db, log)
	ts.wantReady(http.StatusOK, "ready")
	var ok, failed int
	for _, d := range articles(t) {
		r := ts.post("/v1/check", Document{Text: d.Text})
		switch {
		case r.status == http.StatusOK:
			ok++
		case r.status == http.StatusInternalServerError && r.errorCode() == CodeInternal &&
			bytes.Contains(r.body, []byte(filepath.Base(damaged))) && bytes.Count(bytes.TrimSpace(r.body), []byte("\n")) == 0:
			failed++
		default:
			t.Fatalf("check of %s: %d %s; want 200, or 500 internal naming %s", d.ID, r.status, r.body, filepath.Base(damaged))
		}
	}
	t.Logf("%d checks answered, %d failed on the damaged block", ok, failed)
	if failed == 0 || ok < 10*failed {
		t.Fatalf("%d checks answered, %d failed; want a few failed, most answered", ok, failed)
	}
	ts.wantReady(http.StatusServiceUnavailable, "corrupt")
	if v := scraped(t, ts.url, "neardup_index_corruptions_total"); v == 0 {
		t.Error("neardup_index_corruptions_total 0 after failed reads")
	}
	if n := log.count(t, "on-disk corruption;"); n != 1 {
		t.Errorf("the corruption is reported %d times in the log; want once:\n%s", n, strings.Join(log.lines(t), "\n"))
	}
	if n := log.count(t, `msg="request failed"`); n != failed {
		t.Errorf("%d failed requests logged; want %d, one line each", n, failed)
	}
	// Writes go on (a document whose buckets miss the damaged block).
	if r := ts.post("/v1/documents", Document{ID: "new", Text: "an entirely new text about nothing in the corpus at all, zebra quartz"}); r.status != http.StatusCreated {
		t.Errorf("insert after the corruption: %d %s; want 201", r.status, r.body)
	}
}

// flipBytes flips n bytes in the middle of the largest sstable in dir and
// returns its path.
func flipBytes(t *testing.T, dir string, n int) string {
	t.Helper()
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var largest string
	var size int64
	for _, p := range ssts {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	if largest == "" {
		t.Fatalf("no sstable in %s", dir)
	}
	f, err := os.OpenFile(largest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size/2); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] ^= 0x5a
	}
	if _, err := f.WriteAt(buf, size/2); err != nil {
		t.Fatal(err)
	}
	return largest
}

// budgetFS is a filesystem of limited space: once more than budget bytes
// have been written through it, every write fails with ENOSPC (for when
// no tmpfs can be mounted).
type budgetFS struct {
	faultfs.FS
	left atomic.Int64
}

func newBudgetFS(fs vfs.FS) *budgetFS {
	b := &budgetFS{}
	b.FS = faultfs.FS{FS: fs, Hook: func(ev faultfs.Event) error {
		if ev.Op == faultfs.Write && b.left.Add(-int64(ev.Bytes)) < 0 {
			return syscall.ENOSPC
		}
		return nil
	}}
	return b
}

// mountTmpfs mounts a tmpfs of size bytes at dir and returns a function
// that resizes it, or an error if it cannot (not root, no mount
// permission); the test unmounts it at the end.
func mountTmpfs(t *testing.T, dir string, size int64) (resize func(int64) error, err error) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, errors.New("not root")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount -t tmpfs: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return func(size int64) error {
		out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("remount: %v: %s", err, out)
		}
		return nil
	}, nil
}

// TestFaultDiskFull fills the disk under a serving index: a tmpfs of 8 MiB
// (when one can be mounted: root), and a filesystem that fails writes with
// ENOSPC past 8 MiB. Batches are inserted until the disk is full: from then
// on inserts answer 503 unavailable (naming the cause) without hanging,
// checks still answer, /readyz is 503, and
// neardup_index_storage_faults_total counts. Once the disk has room again,
// the reopened index holds every acknowledged document and is consistent.
func TestFaultDiskFull(t *testing.T) {
	t.Run("tmpfs", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "full")
		resize, err := mountTmpfs(t, dir, 8<<20)
		if err != nil {
			t.Skipf("cannot mount a tmpfs (%v); the injected filesystem stands in", err)
		}
		testDiskFull(t, dir, nil, func() {
			if err := resize(64 << 20); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("injected", func(t *testing.T) {
		budget := newBudgetFS(vfs.Default)
		budget.left.Store(8 << 20)
		testDiskFull(t, t.TempDir(), budget, func() { budget.left.Store(1 << 40) })
	})
}

// testDiskFull is TestFaultDiskFull on the filesystem fs (nil: the
// operating system's) at dir; room makes room on it.
func testDiskFull(t *testing.T, dir string, fs vfs.FS, room func()) {
	idx := filepath.Join(dir, "index")
	log := &faultLog{}
	opts := &index.Options{CacheSize: 8 << 20, MemTableSize: 1 << 20, FS: fs, Logger: slog.New(slog.NewTextHandler(log, nil))}
	db, err := index.Open(idx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the log:\n%s", strings.Join(log.lines(t), "\n"))
		}
	})
	ts := faultServer(t, db, log)
	acked, texts := fillUntilRefused(t, ts, "full")
	if len(acked) == 0 {
		t.Fatal("nothing acknowledged before the disk filled up: the test does not test keeping acknowledged writes")
	}
	ts.wantReady(http.StatusServiceUnavailable, "no space left on device")
	if r := ts.post("/v1/check", Document{Text: texts[0]}); r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"duplicate"`)) {
		t.Errorf("check of a stored text on the full disk: %d %s; want 200 duplicate", r.status, r.body)
	}
	if v := scraped(t, ts.url, "neardup_index_storage_faults_total"); v == 0 {
		t.Error("neardup_index_storage_faults_total 0 on a full disk")
	}
	if n := log.count(t, "storage failure;"); n != 1 {
		t.Errorf("the storage failure is reported %d times in the log; want once", n)
	}
	db.Close() // may fail: the disk is full
	room()
	verifyAcked(t, idx, fs, acked)
}

// fillUntilRefused inserts batches of new documents until the server
// refuses them with 503 unavailable, then checks that further inserts are
// refused at once; it returns the ids acknowledged as stored and their
// texts.
func fillUntilRefused(t *testing.T, ts *testServer, prefix string) (acked, texts []string) {
	t.Helper()
	g := newTextGen(17)
	client := &http.Client{Timeout: 30 * time.Second} // a stalled write fails the test
	var refused response
	for batch := 0; refused.status == 0; batch++ {
		if batch == 2000 {
			t.Fatalf("2000 batches stored, %d documents: the disk never filled up", len(acked))
		}
		var body bytes.Buffer
		var ids, batchTexts []string
		for i := range 50 {
			id, text := fmt.Sprintf("%s-%d-%d", prefix, batch, i), g.text(150)
			ids, batchTexts = append(ids, id), append(batchTexts, text)
			fmt.Fprintf(&body, `{"id":%q,"text":%q}`+"\n", id, text)
		}
		r := postWith(t, ts, client, "/v1/documents:batch", typeNDJSON, body.Bytes())
		switch r.status {
		case http.StatusOK:
			for i, st := range batchStatuses(t, r) {
				if st != StatusNew {
					t.Fatalf("batch %d line %d: %s; want new (the texts are random)\n%s", batch, i+1, st, r.body)
				}
			}
			acked, texts = append(acked, ids...), append(texts, batchTexts...)
		case http.StatusServiceUnavailable:
			refused = r
		default:
			t.Fatalf("batch %d: %d %s; want 200, or 503 once the disk fails", batch, r.status, r.body)
		}
	}
	t.Logf("%d documents acknowledged; then %s", len(acked), refused.body)
	if refused.errorCode() != CodeUnavailable || !bytes.Contains(refused.body, []byte("storage failure")) {
		t.Errorf("the failed batch: %s; want unavailable naming the storage failure", refused.body)
	}
	start := time.Now()
	r := postWith(t, ts, client, "/v1/documents", typeJSON, []byte(`{"id":"late","text":"one more document for a disk that failed"}`))
	if r.status != http.StatusServiceUnavailable || !bytes.Contains(r.body, []byte("refused")) {
		t.Errorf("an insert after the failure: %d %s; want 503, refused", r.status, r.body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("an insert after the failure took %v to be refused", d)
	}
	return acked, texts
}

// postWith sends a request with client and validates the answer.
func postWith(t *testing.T, ts *testServer, client *http.Client, path, ctype string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (a hung write?)", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: data}
	ts.validate(req, r)
	return r
}

// verifyAcked reopens the index at dir and fails unless it holds every id
// in acked, is consistent and healthy.
func verifyAcked(t *testing.T, dir string, fs vfs.FS, acked []string) {
	t.Helper()
	db, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, MustExist: true, FS: fs})
	if err != nil {
		t.Fatalf("reopening after the fault: %v", err)
	}
	defer db.Close()
	lost := 0
	for _, id := range acked {
		if _, err := db.Get(context.Background(), id); err != nil {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged %s lost: %v", id, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged documents lost", lost, len(acked))
	}
	if rep, err := db.Check(context.Background()); err != nil || !rep.OK() {
		t.Errorf("index check after the fault: %v\n%s", err, rep)
	}
	if err := db.Health(); err != nil {
		t.Errorf("Health after reopening: %v", err)
	}
}

// TestFaultReadOnly makes the data directory read-only under a serving
// index, two ways. As root ("chmod"), the server runs in a child process as
// user nobody and the directory is chmod 0555 (a real `mount -o
// remount,ro` is refused while Pebble holds its WAL open for writing, and
// root ignores permissions): writes go on into the open WAL until Pebble
// needs a new file, and from that failure on inserts answer 503. And
// ("injected") a filesystem fails every write with EROFS from a moment on,
// as after an emergency remount read-only. Either way: no crash, /readyz
// 503, and every acknowledged document is there once the directory is
// writable again. (Before, the chmod case killed the server: Pebble panics
// when it cannot create the WAL it rotates to.)
func TestFaultReadOnly(t *testing.T) {
	t.Run("chmod", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("not root: cannot run the server as another user; the injected filesystem stands in")
		}
		testReadOnlyChild(t)
	})
	t.Run("injected", testReadOnlyInjected)
}

// testReadOnlyInjected is TestFaultReadOnly on a filesystem that fails
// every write with EROFS from a moment on.
func testReadOnlyInjected(t *testing.T) {
	ro := newROFS(vfs.Default)
	dir := filepath.Join(t.TempDir(), "index")
	log := &faultLog{}
	db, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, MemTableSize: 1 << 20, FS: ro, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := faultServer(t, db, log)
	g := newTextGen(3)
	var acked []string
	for i := range 20 {
		id := fmt.Sprintf("ro-%d", i)
		if r := ts.post("/v1/documents", Document{ID: id, Text: g.text(100)}); r.status != http.StatusCreated {
			t.Fatalf("insert before the fault: %d %s", r.status, r.body)
		}
		acked = append(acked, id)
	}
	ro.on.Store(true)
	more, _ := fillUntilRefused(t, ts, "ro")
	acked = append(acked, more...)
	ts.wantReady(http.StatusServiceUnavailable, "read-only file system")
	db.Close()
	ro.on.Store(false)
	verifyAcked(t, dir, ro, acked)
}

// roFS fails every write, sync and file creation with EROFS once on is set.
type roFS struct {
	faultfs.FS
	on atomic.Bool
}

func newROFS(fs vfs.FS) *roFS {
	r := &roFS{}
	r.FS = faultfs.FS{FS: fs, Hook: func(ev faultfs.Event) error {
		if r.on.Load() && ev.Op != faultfs.Open && ev.Op != faultfs.Rename {
			return syscall.EROFS
		}
		return nil
	}}
	return r
}

// testReadOnlyChild is TestFaultReadOnly as root: the server is a child
// process (the test binary, see TestMain) that drops to user nobody, and
// the directory is made read-only with chmod while it serves.
func testReadOnlyChild(t *testing.T) {
	// nobody must reach the directory: open up the test's temporary
	// directories (they are the test's own).
	top := t.TempDir()
	for p := top; p != os.TempDir() && p != "/" && len(p) > len(os.TempDir()); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(top, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	dir := filepath.Join(data, "index")
	addrFile := filepath.Join(data, "addr") // written by nobody
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashAddr+"="+addrFile, envCrashUser+"=65534")
	stderr := &lockedBuffer{} // the child writes while the test reads
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the server's standard error:\n%s", stderr.String())
		}
	})
	c := waitServer(t, addrFile, cmd)
	ts := &testServer{t: t, url: c.base}
	loadSpec(t)
	g := newTextGen(8)
	var acked []string
	for i := range 20 {
		id := fmt.Sprintf("before-%d", i)
		if r := ts.post("/v1/documents", Document{ID: id, Text: g.text(100)}); r.status != http.StatusCreated {
			t.Fatalf("insert before the directory is read-only: %d %s\n%s", r.status, r.body, stderr.String())
		}
		acked = append(acked, id)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	more, _ := fillUntilRefused(t, ts, "ro")
	acked = append(acked, more...)
	ts.wantReady(http.StatusServiceUnavailable, "permission denied")
	if !strings.Contains(stderr.String(), "storage failure") {
		t.Errorf("the server's log does not report the storage failure:\n%s", stderr.String())
	}
	// Stop it (as a crash would: what was acknowledged is synced).
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	verifyAcked(t, dir, nil, acked)
	if slices.Contains(acked, "") {
		t.Error("an empty id acknowledged")
	}
}
