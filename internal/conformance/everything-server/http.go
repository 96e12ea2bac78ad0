package main

import (
	"context"
	"errors"
	"log/slog"
)

// serveHTTP serves Streamable HTTP on addr.
func serveHTTP(ctx context.Context, addr string, logger *slog.Logger) error {
	return errors.New("Streamable HTTP is not available yet")
}
