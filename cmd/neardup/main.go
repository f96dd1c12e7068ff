// Command neardup finds near-duplicate documents with MinHash and LSH.
//
// Usage:
//
//	neardup dedup [flags] INPUT...   batch near-duplicate detection
//	neardup sign  [flags] INPUT...   write the signature of every document
//
// Run "neardup help COMMAND" for the flags of each.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/neardup/neardup/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.StdIO())
	stop()
	os.Exit(code)
}
