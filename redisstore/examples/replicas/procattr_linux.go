package main

import "syscall"

// sysProcAttr puts a child in a process group of its own, and has the
// kernel kill it when this program dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
