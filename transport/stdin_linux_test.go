package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// pipeFDs returns a pipe's raw descriptors, closed at the end of the test.
func pipeFDs(t *testing.T, flags int) (r, w int) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|flags); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Close(p[0])
		syscall.Close(p[1])
	})
	return p[0], p[1]
}

func TestPollReader(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags int
	}{
		{"blocking descriptor", 0},
		{"non-blocking descriptor", syscall.O_NONBLOCK}, // EAGAIN: wait again
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			rfd, wfd := pipeFDs(t, tt.flags)
			pr, err := newPollReader(rfd)
			if err != nil {
				t.Fatal(err)
			}
			defer pr.close()

			// A Read waiting for input returns it when it comes.
			got := make(chan string, 1)
			go func() {
				b := make([]byte, 64)
				n, err := pr.Read(b)
				if err != nil {
					t.Error(err)
				}
				got <- string(b[:n])
			}()
			if _, err := syscall.Write(wfd, []byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			if s := <-got; s != "hello\n" {
				t.Errorf("Read = %q", s)
			}
			if n, err := pr.Read(nil); n != 0 || err != nil {
				t.Errorf("Read(nil) = %d, %v", n, err)
			}

			// The writer's end closing is io.EOF.
			syscall.Write(wfd, []byte("tail"))
			syscall.Close(wfd)
			b, err := io.ReadAll(pr)
			if err != nil || string(b) != "tail" {
				t.Errorf("ReadAll = %q, %v", b, err)
			}
		})
	}
}

func TestPollReaderCloseInterrupts(t *testing.T) {
	checkLeaks(t)
	rfd, wfd := pipeFDs(t, 0)
	pr, err := newPollReader(rfd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	reading := make(chan struct{})
	go func() {
		close(reading)
		_, err := pr.Read(make([]byte, 8))
		done <- err
	}()
	<-reading
	// Whether Close comes before the Read waits in ppoll or while it
	// waits, the Read ends with ErrClosed and no input is needed.
	if err := pr.close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Read after close = %v, want ErrClosed", err)
	}
	if _, err := pr.Read(make([]byte, 8)); !errors.Is(err, ErrClosed) {
		t.Errorf("second Read = %v, want ErrClosed", err)
	}
	if err := pr.close(); err != nil {
		t.Errorf("second close = %v", err)
	}
	// The descriptor read is the caller's and stays open.
	if _, err := syscall.Write(wfd, []byte("x")); err != nil {
		t.Errorf("the pipe was closed: %v", err)
	}
	if !pr.freed {
		t.Error("the wake-up pipe is still open")
	}
}

func TestPollReaderBadDescriptor(t *testing.T) {
	rfd, _ := pipeFDs(t, 0)
	pr, err := newPollReader(rfd)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.close()
	pr.fd = 1 << 20 // not open
	if _, err := pr.Read(make([]byte, 8)); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Read = %v, want EBADF", err)
	}
}

func TestPollWriter(t *testing.T) {
	checkLeaks(t)
	rfd, wfd := pipeFDs(t, 0)
	pw, err := newPollWriter(wfd)
	if err != nil {
		t.Fatal(err)
	}
	// A write that fits goes through whole, in chunks.
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16,000 bytes
	if n, err := pw.Write(msg); n != len(msg) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(fdReader(rfd), got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}

	// A write larger than the pipe, which nobody reads, waits; close
	// ends it.
	done := make(chan error, 1)
	go func() {
		_, err := pw.Write(make([]byte, 1<<20))
		done <- err
	}()
	pw.close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("blocked Write after close = %v, want ErrClosed", err)
	}
	if _, err := pw.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after close = %v, want ErrClosed", err)
	}
	if !pw.freed {
		t.Error("the wake-up pipe is still open")
	}
}

// fdReader reads a raw descriptor.
type fdReader int

func (r fdReader) Read(b []byte) (int, error) { return syscall.Read(int(r), b) }

// TestStdioServerEndsWhenClientStopsReading runs a server over
// StdioTransport whose client sends requests with large answers, never
// reads them, and closes the server's standard input: the server's
// writes wait for room that never comes, and it must still end once its
// drain timeout passes instead of waiting forever.
func TestStdioServerEndsWhenClientStopsReading(t *testing.T) {
	tests := []struct {
		name   string
		stdout func(t *testing.T) (ours, theirs *os.File)
	}{
		{"pipe", func(t *testing.T) (*os.File, *os.File) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, w
		}},
		// Not a pipe: written through a pollWriter.
		{"socket", func(t *testing.T) (*os.File, *os.File) {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			cmd := helperCommand(t, "bigstdio")
			ours, theirs := tt.stdout(t)
			defer ours.Close() // open until the end: the server's writes wait
			cmd.Stdout = theirs
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			theirs.Close()
			for i := range 3 {
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"big"}`+"\n", i)
			}
			in.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("server: %v", err)
				}
			case <-time.After(20 * time.Second): // far beyond the helper's 50ms drain
				cmd.Process.Kill()
				<-exited
				t.Fatal("the server did not exit")
			}
		})
	}
}
