package agentapi

// NotifyNode wakes the node's waiting assignment long-poll. The scheduler
// (controlplane/scheduling) binds tasks in its own store transaction and
// calls this afterwards, as Assign does.
func (s *Service) NotifyNode(nodeID string) { s.notify.Notify(nodeID) }
