// Package hugepage advises the kernel to back large arrays with
// transparent huge pages (2 MiB), so that random reads across many
// megabytes do not each miss the TLB as well as the cache, and so that
// first touching a large array faults once every 2 MiB rather than every
// 4 KiB. It is advice only: where huge pages are off or the system is not
// Linux, nothing changes but the speed.
package hugepage
