package mcp

import (
	"context"
)

// ReportProgress sends a notifications/progress for this request, if the
// caller asked for progress by sending a progress token; otherwise it
// does nothing. progress should increase with each call; total is 0 when
// unknown.
//
// In a task, progress becomes the task's status message (its message, or
// "progress/total"), which tasks/get shows.
//
// It is the one way to report progress, on both sides: the progress of a
// request belongs to that request, and [ClientRequest.ReportProgress] is
// its counterpart in a client's handlers.
func (r *ServerRequest[P]) ReportProgress(ctx context.Context, progress, total float64, message string) error {
	if run := taskRunFrom(ctx); run != nil && run.reportProgress(ctx, progress, total, message) {
		return nil // a task's progress is its status message
	}
	tok, ok := progressTokenOf(r.Params)
	if !ok {
		return nil
	}
	return r.Session.notify(ctx, NotificationProgress, &ProgressParams{ProgressToken: tok, Progress: progress, Total: total, Message: message})
}

// ReportProgress sends a notifications/progress for this request (such as
// a sampling/createMessage), if the server asked for progress by sending
// a progress token; otherwise it does nothing. progress should increase
// with each call; total is 0 when unknown.
func (r *ClientRequest[P]) ReportProgress(ctx context.Context, progress, total float64, message string) error {
	tok, ok := progressTokenOf(r.Params)
	if !ok {
		return nil
	}
	return r.Session.notify(ctx, NotificationProgress, &ProgressParams{ProgressToken: tok, Progress: progress, Total: total, Message: message})
}

// CreateMessage asks the client to sample from its model on behalf of this
// request. It is the way to sample from a handler: in the handshake era
// it sends sampling/createMessage, tied to this request.
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (r *ServerRequest[P]) CreateMessage(ctx context.Context, params *CreateMessageParams) (*CreateMessageResult, error) {
	return r.Session.CreateMessage(ctx, params)
}

// Elicit asks the client to collect input from the user on behalf of this
// request.
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (r *ServerRequest[P]) Elicit(ctx context.Context, params *ElicitParams) (*ElicitResult, error) {
	return r.Session.Elicit(ctx, params)
}

// ListRoots asks the client for its roots on behalf of this request.
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (r *ServerRequest[P]) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	return r.Session.ListRoots(ctx, &ListRootsParams{})
}
