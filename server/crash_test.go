package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
)

// Environment of the crash test's server process: the test binary runs
// itself as a server when these are set (see TestMain).
const (
	envCrashDir  = "NEARDUP_CRASH_SERVE_DIR"
	envCrashAddr = "NEARDUP_CRASH_ADDR_FILE"
	envCrashUser = "NEARDUP_CRASH_UID" // if set, the server drops to this user and its group (TestFaultReadOnly)
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		crashServer(dir, os.Getenv(envCrashAddr))
		return
	}
	os.Exit(m.Run())
}

// crashServer serves the index in dir, as `neardup serve` does, writing its
// address to addrFile. The test kills it with SIGKILL.
func crashServer(dir, addrFile string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash server:", err)
		os.Exit(1)
	}
	// A watchdog, in case the test dies before killing us.
	time.AfterFunc(2*time.Minute, func() { os.Exit(3) })
	if uid := os.Getenv(envCrashUser); uid != "" {
		id, err := strconv.Atoi(uid)
		if err == nil {
			err = syscall.Setgid(id)
		}
		if err == nil {
			err = syscall.Setuid(id)
		}
		if err != nil {
			fail(fmt.Errorf("dropping to user %s: %w", uid, err))
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	idx, err := index.Open(dir, &index.Options{CacheSize: 16 << 20, MemTableSize: 4 << 20, Logger: logger})
	if err != nil {
		fail(err)
	}
	s, err := New(idx, &Options{Logger: logger})
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	tmp := addrFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
		fail(err)
	}
	if err := os.Rename(tmp, addrFile); err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := s.Serve(ctx, ln); err != nil {
		fail(err)
	}
	idx.Close()
}

// crashLog records what the server acknowledged.
type crashLog struct {
	mu       sync.Mutex
	present  map[string]bool // acknowledged as stored
	deleted  map[string]bool // acknowledged as deleted
	named    map[string]bool // named as a match in a "duplicate" answer
	deleting map[string]bool // a delete was sent (acknowledged or not)
	texts    []string        // stored texts, to make near duplicates of
	sent     []string        // the texts of the latest inserts sent, acknowledged or not
	recent   []string        // acknowledged as stored in the last round
	acks     int
	dupes    int // "duplicate" answers received
}

// nameMatches records the documents a "duplicate" answer named. Call with
// log.mu held.
func (log *crashLog) nameMatches(r CheckResult) {
	if r.Status != StatusDuplicate {
		return
	}
	log.dupes++
	for _, d := range r.Duplicates {
		log.named[d.ID] = true
	}
}

// nearText returns a near copy of a stored text or, more often, of one
// whose insert may still be in flight (applied but not yet synced: the
// answers that name such a document are the ones that must wait for it to
// be durable). Call with log.mu held.
func (log *crashLog) nearText(g *textGen, rng *rand.Rand) (string, bool) {
	if n := len(log.sent); n > 0 && rng.IntN(3) > 0 {
		return g.variant(log.sent[n-1-rng.IntN(min(n, 8))], 1), true
	}
	if n := len(log.texts); n > 0 {
		return g.variant(log.texts[rng.IntN(n)], 1), true
	}
	return "", false
}

// TestCrashSafety runs the server as a separate process, streams inserts,
// batches, checks and deletes from several clients, kills the server with
// SIGKILL at a random moment, and checks after every round that every
// acknowledged write survived, that every document a "duplicate" answer
// named survived (unless a delete of it was sent), and that postings and
// signatures agree; then restarts it on the same directory. 20 rounds (5
// with -short).
func TestCrashSafety(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	dir := filepath.Join(t.TempDir(), "index")
	rng := rand.New(rand.NewPCG(42, 1))
	g := newTextGen(99)
	log := &crashLog{present: map[string]bool{}, deleted: map[string]bool{}, named: map[string]bool{}, deleting: map[string]bool{}}
	for round := range rounds {
		addrFile := filepath.Join(t.TempDir(), "addr")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashAddr+"="+addrFile)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		c := waitServer(t, addrFile, cmd)
		t1 := time.Now()
		// The previous round's acknowledged writes, through the restarted
		// server.
		verifyThroughServer(t, c, log, round)
		t2 := time.Now()

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for client := range 4 {
			wg.Add(1)
			seed := rng.Uint64()
			go func() {
				defer wg.Done()
				runCrashClient(ctx, c, log, g, rand.New(rand.NewPCG(seed, 2)), fmt.Sprintf("r%d-c%d", round, client))
			}()
		}
		time.Sleep(time.Duration(50+rng.IntN(350)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		cancel()
		wg.Wait()

		t3 := time.Now()
		// Offline: the index opens, agrees with itself, and holds every
		// acknowledged document and none of the acknowledged deletes.
		idx, err := index.Open(dir, &index.Options{CacheSize: 8 << 20})
		if err != nil {
			t.Fatalf("round %d: reopening after SIGKILL: %v", round, err)
		}
		rep, err := idx.Check(context.Background())
		if err != nil || !rep.OK() {
			idx.Close()
			t.Fatalf("round %d: index inconsistent after SIGKILL: %v\n%s", round, err, rep)
		}
		log.mu.Lock()
		for id := range log.present {
			if _, err := idx.Get(context.Background(), id); err != nil {
				t.Errorf("round %d: acknowledged document %s lost: %v", round, id, err)
			}
		}
		for id := range log.deleted {
			if _, err := idx.Get(context.Background(), id); !errors.Is(err, index.ErrNotFound) {
				t.Errorf("round %d: acknowledged delete of %s undone: %v", round, id, err)
			}
		}
		for id := range log.named {
			if log.deleting[id] {
				continue
			}
			if _, err := idx.Get(context.Background(), id); err != nil {
				t.Errorf("round %d: document %s, named in a duplicate answer, lost: %v", round, id, err)
			}
		}
		t.Logf("round %d: %d acknowledged writes and %d duplicate answers (naming %d documents) so far; index holds %d documents, %d postings; start %v verify %v run %v check %v",
			round, log.acks, log.dupes, len(log.named), rep.Documents, rep.Postings, t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), time.Since(t3))
		log.mu.Unlock()
		idx.Close()
		if t.Failed() {
			return
		}
	}
	if log.acks < rounds*10 {
		t.Errorf("only %d acknowledged writes in %d rounds: the test did not exercise the server", log.acks, rounds)
	}
	if log.dupes < rounds {
		t.Errorf("only %d duplicate answers in %d rounds: the test did not exercise them", log.dupes, rounds)
	}
}

func waitServer(t *testing.T, addrFile string, cmd *exec.Cmd) *Client {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if addr, err := os.ReadFile(addrFile); err == nil {
			c := NewClient("http://"+string(addr), "", nil)
			if c.Ready(context.Background()) == nil {
				return c
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatal("the server process did not become ready")
	return nil
}

// verifyThroughServer asks the restarted server for the documents
// acknowledged in the last round (all of them are checked offline too).
func verifyThroughServer(t *testing.T, c *Client, log *crashLog, round int) {
	t.Helper()
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, id := range log.recent {
		if !log.present[id] {
			continue // deleted since
		}
		if _, err := c.Get(context.Background(), id); err != nil {
			t.Fatalf("round %d: after restart, acknowledged %s: %v", round, id, err)
		}
	}
	log.recent = log.recent[:0]
}

// runCrashClient writes until the server dies: single check-and-inserts
// (some of near duplicates, often of documents still being inserted),
// checks of near duplicates, batches, and deletes of its own documents.
func runCrashClient(ctx context.Context, c *Client, log *crashLog, g0 *textGen, rng *rand.Rand, prefix string) {
	g := &textGen{rng: rng, vocab: g0.vocab}
	var mine []string
	for seq := 0; ctx.Err() == nil; seq++ {
		id := fmt.Sprintf("%s-%d", prefix, seq)
		switch op := rng.IntN(12); {
		case op < 6:
			text := g.text(60 + rng.IntN(100))
			log.mu.Lock()
			if rng.IntN(3) == 0 {
				if t, ok := log.nearText(g, rng); ok {
					text = t
				}
			}
			log.sent = append(log.sent, text)
			log.mu.Unlock()
			res, err := c.Insert(ctx, Document{ID: id, Text: text, Meta: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}, Query{})
			if err != nil {
				return // the server is gone; the outcome is unknown
			}
			log.mu.Lock()
			log.acks++
			log.nameMatches(res)
			if res.Status == StatusNew {
				log.present[id] = true
				log.recent = append(log.recent, id)
				log.texts = append(log.texts, text)
				mine = append(mine, id)
			}
			log.mu.Unlock()
		case op < 9:
			var docs []Document
			for j := range 5 {
				docs = append(docs, Document{ID: fmt.Sprintf("%s-b%d", id, j), Text: g.text(80)})
			}
			res, err := c.Batch(ctx, docs, Query{})
			if err != nil {
				return
			}
			log.mu.Lock()
			log.acks++
			for i, r := range res {
				log.nameMatches(r)
				if r.Status == StatusNew {
					log.present[docs[i].ID] = true
					log.recent = append(log.recent, docs[i].ID)
					mine = append(mine, docs[i].ID)
				}
			}
			log.mu.Unlock()
		case op < 11:
			log.mu.Lock()
			text, ok := log.nearText(g, rng)
			log.mu.Unlock()
			if !ok {
				continue
			}
			res, err := c.Check(ctx, Document{Text: text}, Query{})
			if err != nil {
				return
			}
			log.mu.Lock()
			log.nameMatches(res)
			log.mu.Unlock()
		default:
			if len(mine) == 0 {
				continue
			}
			i := rng.IntN(len(mine))
			victim := mine[i]
			// Not known present until acknowledged either way.
			log.mu.Lock()
			delete(log.present, victim)
			log.deleting[victim] = true
			log.mu.Unlock()
			mine = append(mine[:i], mine[i+1:]...)
			if err := c.Delete(ctx, victim); err != nil {
				return
			}
			log.mu.Lock()
			log.acks++
			log.deleted[victim] = true
			log.mu.Unlock()
		}
	}
}
