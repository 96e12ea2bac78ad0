package otelmcp

// NotifySessions makes the middleware made with o send on c each time it
// has recorded a session's duration.
func NotifySessions(o *Options, c chan<- struct{}) { o.sessionsDone = c }
