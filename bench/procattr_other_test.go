//go:build !linux

package bench

import "os/exec"

// setDeathSignal does nothing where there is no parent-death signal;
// children are still closed by each benchmark's cleanup.
func setDeathSignal(*exec.Cmd) {}
