package index

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/internal/faultfs"
)

// injectFS fails every write, sync, file creation and rename with the errno
// in fail, once it is set (0: pass everything through): a disk that filled
// up (ENOSPC) or was remounted read-only (EROFS) under the index.
type injectFS struct {
	faultfs.FS
	fail       atomic.Int64 // a syscall.Errno, 0 for none
	createOnly bool         // fail only the creation of files (a directory made read-only: open files stay writable)
}

func newInjectFS(fs vfs.FS, createOnly bool) *injectFS {
	f := &injectFS{createOnly: createOnly}
	f.FS = faultfs.FS{FS: fs, Hook: f.hook}
	return f
}

func (f *injectFS) hook(ev faultfs.Event) error {
	e := f.fail.Load()
	switch {
	case e == 0 || ev.Op == faultfs.Open:
		return nil
	case f.createOnly && (ev.Op == faultfs.Write || ev.Op == faultfs.Sync):
		return nil
	}
	return syscall.Errno(e)
}

// logLines is a slog destination that keeps the lines written.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// TestStorageFaults fills the disk under a serving index (ENOSPC), or makes
// it read-only (EROFS), while four writers insert: no panic, no exit; the
// writes after the fault fail with ErrStorage, on one line; reads go on;
// Health and the metrics report it, the log says it once. A crash then (a
// clone of the filesystem holding only what was synced) keeps every
// acknowledged document, and the index is consistent.
//
// A third case fails only the creation of files (EACCES: a directory made
// read-only, whose open files stay writable): Pebble then cannot create the
// write-ahead log it rotates to, and used to panic in a way no recover
// catches (sync: unlock of unlocked mutex).
func TestStorageFaults(t *testing.T) {
	for _, tc := range []struct {
		errno      syscall.Errno
		createOnly bool
	}{{syscall.ENOSPC, false}, {syscall.EROFS, false}, {syscall.EACCES, true}} {
		t.Run(tc.errno.Error(), func(t *testing.T) { testStorageFault(t, tc.errno, tc.createOnly) })
	}
}

func testStorageFault(t *testing.T, errno syscall.Errno, createOnly bool) {
	mem := vfs.NewCrashableMem()
	fs := newInjectFS(mem, createOnly)
	logs := &logLines{}
	opts := &Options{CacheSize: 8 << 20, MemTableSize: 1 << 20, FS: fs, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	x, err := Open("idx", opts)
	if err != nil {
		t.Fatal(err)
	}
	c := x.Config()
	g := newTextGen(5)
	const writers, perWriter, faultAt = 4, 60, 100
	texts := make([][]string, writers)
	for w := range texts {
		for range perWriter {
			texts[w] = append(texts[w], g.text(60))
		}
	}
	var (
		mu      sync.Mutex
		acked   []string
		failed  []error
		started atomic.Int64
		wg      sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i, text := range texts[w] {
				if started.Add(1) == faultAt {
					fs.fail.Store(int64(errno))
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				res, err := x.CheckAndInsert(ctx, []Doc{docOf(t, c, id, text)}, nil)
				mu.Lock()
				switch {
				case err != nil:
					failed = append(failed, err)
				case res[0].Status == New:
					acked = append(acked, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d acknowledged, %d failed; first failure: %v", len(acked), len(failed), failed[0])
	if len(acked) == 0 || len(failed) == 0 {
		t.Fatalf("%d acknowledged, %d failed; want both", len(acked), len(failed))
	}
	for _, err := range failed {
		if !errors.Is(err, ErrStorage) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("a write after the fault: %q; want ErrStorage on one line", err)
		}
	}
	if !strings.Contains(failed[len(failed)-1].Error(), "refused") {
		t.Errorf("the last failed write: %v; want it refused", failed[len(failed)-1])
	}
	// Reads go on (from the memtable and the cache).
	if _, err := x.Get(ctx, acked[0]); err != nil {
		t.Errorf("Get after the fault: %v", err)
	}
	// The text of an acknowledged document: under load a writer may start
	// only after the fault, and its first text is then not acknowledged
	// (a match naming it waits for a sync the failed WAL refuses).
	var w, i int
	if _, err := fmt.Sscanf(acked[0], "w%d-%d", &w, &i); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Query(ctx, signOf(t, c, texts[w][i]), nil); err != nil {
		t.Errorf("Query after the fault: %v", err)
	}
	if err := x.Health(); !errors.Is(err, ErrStorage) || !errors.Is(err, errno) && !strings.Contains(err.Error(), errno.Error()) {
		t.Errorf("Health: %v; want ErrStorage naming %v", err, errno)
	}
	if m := x.Metrics(); m.StorageFaults == 0 || m.Inserts != uint64(len(acked)) {
		t.Errorf("metrics: %d storage faults, %d inserts; want > 0 and %d", m.StorageFaults, m.Inserts, len(acked))
	}
	var reported int
	for _, l := range logs.lines() {
		if strings.Contains(l, "storage failure") {
			reported++
		}
	}
	if reported != 1 {
		t.Errorf("the log reports the storage failure %d times; want once:\n%s", reported, strings.Join(logs.lines(), "\n"))
	}

	// A crash now keeps every acknowledged document.
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	x.Close()
	y, err := Open("idx", &Options{CacheSize: 8 << 20, FS: crashed, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	for _, id := range acked {
		if _, err := y.Get(ctx, id); err != nil {
			t.Errorf("acknowledged %s lost: %v", id, err)
		}
	}
	mustCheck(t, y)
	if err := y.Health(); err != nil {
		t.Errorf("Health after reopening: %v", err)
	}
	if err := y.Insert(ctx, []Doc{docOf(t, c, "after", g.text(60))}); err != nil {
		t.Errorf("Insert after reopening: %v", err)
	}
}

// TestFatalDoesNotExit: a fatal error of Pebble's (its Logger's Fatalf) no
// longer exits the process: the DB refuses every operation with ErrStorage
// and Health says why.
func TestFatalDoesNotExit(t *testing.T) {
	x := openTemp(t, nil)
	c := x.Config()
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", "one two three four five six")}); err != nil {
		t.Fatal(err)
	}
	x.po.Logger.Fatalf("L%d->L%d: %s already being compacted", 5, 6, "000123") // an invariant broken
	if err := x.Health(); !errors.Is(err, ErrStorage) || !strings.Contains(err.Error(), "already being compacted") {
		t.Errorf("Health: %v; want ErrStorage naming the fatal error", err)
	}
	if _, err := x.Get(ctx, "a"); !errors.Is(err, ErrStorage) {
		t.Errorf("Get after a fatal error: %v; want ErrStorage", err)
	}
	if err := x.Insert(ctx, []Doc{docOf(t, c, "b", "seven eight nine ten eleven")}); !errors.Is(err, ErrStorage) {
		t.Errorf("Insert after a fatal error: %v; want ErrStorage", err)
	}
}

// TestFatalDiskError: a fatal error of Pebble's caused by a disk error (a
// MANIFEST write on a full disk) is a storage failure: writes are refused,
// reads go on.
func TestFatalDiskError(t *testing.T) {
	x := openTemp(t, nil)
	c := x.Config()
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", "one two three four five six")}); err != nil {
		t.Fatal(err)
	}
	x.po.Logger.Fatalf("%s", fmt.Errorf("MANIFEST flush failed: %w", syscall.ENOSPC))
	if err := x.Health(); !errors.Is(err, ErrStorage) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("Health: %v; want ErrStorage naming the disk error", err)
	}
	if _, err := x.Get(ctx, "a"); err != nil {
		t.Errorf("Get after a fatal disk error: %v; want the document", err)
	}
	if err := x.Insert(ctx, []Doc{docOf(t, c, "b", "seven eight nine ten eleven")}); !errors.Is(err, ErrStorage) {
		t.Errorf("Insert after a fatal disk error: %v; want ErrStorage", err)
	}
}

// corruptLargestTable flips n bytes in the middle of the largest sstable
// in dir and returns its path.
func corruptLargestTable(t *testing.T, dir string, n int) string {
	t.Helper()
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ssts) == 0 {
		t.Fatalf("no sstable in %s (%v)", dir, err)
	}
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	largest := slices.MaxFunc(ssts, func(a, b string) int { return int(size(a) - size(b)) })
	f, err := os.OpenFile(largest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	off := size(largest) / 2
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] ^= 0xa5
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
	return largest
}

// TestCorruptBlock damages 64 bytes of a bulk-built index's largest sstable
// and reads every document: the reads that meet the damaged block fail with
// ErrCorrupt on one line naming the file, the others answer; Health and the
// metrics report it and the log says it once. (Before, Pebble's default
// exited the process at the first such read.)
func TestCorruptBlock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x, err := Open(dir, &Options{CacheSize: 8 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	docs := buildDocs(t, x.Config(), 2000)
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	x.Close()
	damaged := corruptLargestTable(t, dir, 64)

	logs := &logLines{}
	x, err = Open(dir, &Options{CacheSize: 8 << 20, MustExist: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("opening the damaged index: %v", err)
	}
	defer x.Close()
	var ok, bad int
	for _, d := range docs {
		_, gerr := x.Get(ctx, d.ID)
		_, qerr := x.Query(ctx, d.Sig, nil)
		for _, err := range []error{gerr, qerr} {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), filepath.Base(damaged)):
				t.Fatalf("reading %s: %q; want ErrCorrupt on one line naming %s", d.ID, err, filepath.Base(damaged))
			default:
				bad++
			}
		}
	}
	t.Logf("%d reads failed, %d answered; e.g. %v", bad, ok, x.Health())
	if bad == 0 || ok < bad {
		t.Fatalf("%d reads failed, %d answered; want some failed and most answered", bad, ok)
	}
	if err := x.Health(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Health: %v; want ErrCorrupt", err)
	}
	if m := x.Metrics(); m.Corruptions == 0 {
		t.Errorf("Metrics.Corruptions 0 after %d failed reads", bad)
	}
	if lines := logs.lines(); len(lines) != 1 || !strings.Contains(lines[0], "on-disk corruption") {
		t.Errorf("log: %q; want one line reporting the corruption", lines)
	}
	if _, err := x.Check(ctx); !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check: %v; want ErrCorrupt on one line", err)
	}
}

// TestOpenMustExist: with MustExist (or ReadOnly), a missing directory, an
// empty one or one that holds something else is no index, and nothing is
// created in it; a second open of the same index is refused as locked.
func TestOpenMustExist(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"missing", "empty", "other"} {
		for _, o := range []Options{{MustExist: true}, {ReadOnly: true}} {
			dir := filepath.Join(root, name)
			before, _ := os.ReadDir(dir)
			if _, err := Open(dir, &o); !errors.Is(err, ErrNoIndex) || !strings.Contains(err.Error(), dir) {
				t.Errorf("Open %s (%+v): %v; want ErrNoIndex naming it", name, o, err)
			}
			after, err := os.ReadDir(dir)
			if name == "missing" && !os.IsNotExist(err) || len(after) != len(before) {
				t.Errorf("Open %s (MustExist %v): the directory now holds %v (%v); want it as it was", name, o.MustExist, after, err)
			}
		}
	}
	dir := filepath.Join(root, "index")
	x, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := Open(dir, &Options{MustExist: true}); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open of an open index: %v; want ErrLocked", err)
	}
}

// TestBuildInterrupted: a build that never finishes (its process killed;
// here, the DB closed without Finish or Abort) leaves an index that Open
// refuses with ErrIncomplete, and its temporary files; opened ForBuild it
// is built again, and that build removes them.
func TestBuildInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	opts := &Options{CacheSize: 8 << 20, NoSync: true, ForBuild: true}
	x, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := buildDocs(t, x.Config(), 300)
	b, err := x.NewBuilder(&BuildOptions{Memory: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	x.Close() // "killed": neither Finish nor Abort
	left, _ := filepath.Glob(filepath.Join(dir, "build.tmp", "build-*", "*"))
	if len(left) == 0 {
		t.Fatal("the interrupted build left no temporary file; the test does not test the cleanup")
	}
	for _, o := range []*Options{nil, {MustExist: true}, {ReadOnly: true}} {
		if _, err := Open(dir, o); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "build") {
			t.Errorf("Open %+v of an interrupted build: %v; want ErrIncomplete", o, err)
		}
	}
	x, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("Open ForBuild of an interrupted build: %v", err)
	}
	b, err = x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s, left by the interrupted build, is still there (%v)", p, err)
		}
	}
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := os.Stat(filepath.Join(dir, "build.tmp")); !os.IsNotExist(err) {
		t.Errorf("build.tmp after a finished build: %v; want it removed", err)
	}
	x, err = Open(dir, &Options{MustExist: true})
	if err != nil {
		t.Fatalf("Open of the finished build: %v", err)
	}
	defer x.Close()
	if n := count(t, x); n != int64(len(docs)) {
		t.Errorf("documents %d; want %d", n, len(docs))
	}
}

// TestBuildAbortKeepsIndexOpenable: a build that fails (a repeated id)
// leaves the index as it was before: empty, not marked, openable; the error
// names the two documents.
func TestBuildAbortKeepsIndexOpenable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x, err := Open(dir, &Options{CacheSize: 8 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := x.Config()
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"a", "b", "c", "b", "d"} {
		if err := b.Add(docOf(t, c, id, fmt.Sprintf("text number %d of the build with a few words", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.Finish(ctx)
	var de *DuplicateIDError
	if !errors.Is(err, ErrDuplicateID) || !errors.As(err, &de) || de.ID != "b" || de.First != 1 || de.Second != 3 {
		t.Fatalf("Finish with b twice: %v (%+v); want a DuplicateIDError for b, documents 1 and 3", err, de)
	}
	x.Close()
	if x, err = Open(dir, &Options{MustExist: true}); err != nil {
		t.Fatalf("Open after a failed build: %v", err)
	}
	x.Close()
}
