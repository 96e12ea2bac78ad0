//go:build !race

package mcp

// raceEnabled reports whether the race detector is on; it changes
// allocation counts (sync.Pool drops items at random).
const raceEnabled = false
