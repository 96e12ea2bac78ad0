package mcptest

// Unexported variants for the package's external tests: they wait for
// goroutines no longer than the test needs.
var (
	CheckGoroutinesWait = checkGoroutines
	ConnectWait         = connect
	Diff                = diff
)
