package bench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal asks the kernel to kill the child if this process dies
// without cleaning up (a benchmark panic or a SIGKILL of the test binary).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
