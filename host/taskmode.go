package host

import "github.com/switchboardmcp/switchboard/config"

// TaskMode is the task mode (config.Server.TaskMode) of tool, the server's
// own name, of server id: whether the gateway may make a call to it a
// task. config.TaskAuto for a server the host does not have.
func (h *Host) TaskMode(id, tool string) string {
	s, err := h.server(id)
	if err != nil {
		return config.TaskAuto
	}
	return s.cfg.TaskMode(tool)
}
